"""Bad arguments, sim app files and log directories: exit 2, one line naming what is wrong, nothing made."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.conftest import ROOT, cli, one_line_error, session_processes, write_task
from tests.faults.small_disk import namespace_mounts, run_in_mount_namespace
from tests.faults.test_bad_yaml import billion_laughs

FINISH = {"status": "FINISH", "result": "ok"}
APP = """package: com.example.bad
label: Bad
start: main
screens:
  main:
    title: Main
    body:
      - {id: hello, text: Hello}
"""


@pytest.mark.parametrize(("content", "message"), [
    (None, f"cannot read app file: {os.strerror(errno.ENOENT)}"),  # the OS's words, passed on
    ("package: [unclosed\n", "invalid YAML"),
    (APP.replace("start: main", "start: nowhere"), "nowhere"),
    (b"\x89PNG\r\n\x1a\n\xff\xfe", "not UTF-8 text"),
    (billion_laughs(), "too many nodes"),
    ("package: &r [*r]\n", "alias *r refers to a node that contains it"),
])
def test_a_bad_sim_app_file(tmp_path: Path, content: str | bytes | None, message: str) -> None:
    app = tmp_path / "app.yaml"
    if isinstance(content, bytes):
        app.write_bytes(content)
    elif content is not None:
        app.write_text(content)
    task = write_task(tmp_path, [FINISH], extra="device: {sim: {apps: [app.yaml]}}\n")
    code, _, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    line = one_line_error(code, err, "device.sim.apps", str(app), message)
    assert "SimulatorError" not in line
    assert not (tmp_path / "logs").exists()


def test_an_unknown_start_app(tmp_path: Path) -> None:
    task = write_task(tmp_path, [FINISH], extra="device: {sim: {start_app: com.nowhere}}\n")
    code, _, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    one_line_error(code, err, "device.sim.start_app", "com.nowhere")
    assert not (tmp_path / "logs").exists()


def test_an_unknown_shipped_app_to_install(tmp_path: Path) -> None:
    task = write_task(tmp_path, [FINISH], extra="device: {sim: {install: [com.example.nowhere]}}\n")
    code, _, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    one_line_error(code, err, "device.sim.install", "com.example.nowhere")
    assert not (tmp_path / "logs").exists()


def test_a_log_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "logs").write_text("I am a file")
    task = write_task(tmp_path, [FINISH])
    code, _, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    one_line_error(code, err, "logs.dir", "logs", "not a directory")


def test_a_read_only_log_dir(tmp_path: Path) -> None:
    task = write_task(tmp_path, [FINISH])
    if os.geteuid() != 0:  # permissions stop a user; they do not stop root
        (tmp_path / "logs").mkdir()
        (tmp_path / "logs").chmod(0o555)
        code, _, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
        one_line_error(code, err, "logs.dir: cannot create the run directory: cannot write logs",
                       os.strerror(errno.EACCES))
        return
    if not namespace_mounts():
        pytest.skip("running as root without mount namespaces: no way to make a read-only directory here")
    mount = tmp_path / "ro"
    mount.mkdir()
    code, _, err = run_in_mount_namespace(f"mount -t tmpfs -o ro,size=64k tmpfs {mount}",
                                          ["run", str(task), "--log-dir", str(mount / "logs")], cwd=tmp_path)
    one_line_error(code, err, f"logs.dir: cannot create the run directory: cannot write {mount / 'logs'}",
                   os.strerror(errno.EROFS))


@pytest.mark.parametrize(("args", "message"), [
    (["sim", "--port", "80000"], "argument --port: port 80000 is out of range (0-65535)"),
    (["sim", "--port", "http"], "argument --port: not a port number: 'http'"),
    (["sim", "--width", "-5"], "argument --width: must be positive, not -5"),
    (["devices", "--adb-port", "99999"], "argument --adb-port: port 99999 is out of range"),
    (["run"], "task: give a goal (run \"Turn on Wi-Fi\"), a task file, or --resume RUN_DIR"),
    (["run", "t.yaml", "--run-id", "../escape"], "argument --run-id: '../escape' is not a usable run id"),
    (["run", "t.yaml", "--max-steps", "many"], "argument --max-steps: invalid int value: 'many'"),
    (["report", "nowhere"], "nowhere: not a run directory"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_bad_arguments_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    code, out, err = cli(*args, cwd=tmp_path)
    one_line_error(code, err, message)
    assert out == ""


def test_output_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """``ui DUMP | head``: the reader goes away; no BrokenPipeError traceback, nothing else fails."""
    dump = tmp_path / "screen.xml"
    dump.write_text(_big_dump())
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "ui", str(dump), "--annotate",
                             str(tmp_path / "a.png")], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # `head -1`: read a line, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert (tmp_path / "a.png").exists()  # the rest of the command still ran
    assert not session_processes(proc.pid)


def test_a_run_whose_terminal_goes_away_still_finishes(tmp_path: Path) -> None:
    task = write_task(tmp_path, [{"status": "CONTINUE", "thought": "t", "action": {"name": "wait", "args":
                                                                                     {"seconds": 0}}}, FINISH])
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "run", str(task), "--log-dir", "logs"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `run ... | head -0`
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err
    (run_dir,) = list((tmp_path / "logs").iterdir())
    assert '"status": "FINISH"' in (run_dir / "run.json").read_text()
    assert not session_processes(proc.pid)


def _big_dump() -> str:
    """A dump whose text is larger than a pipe's buffer, so printing it must meet the closed pipe."""
    nodes = "".join(
        f'<node index="{i}" text="row {i} {"x" * 60}" resource-id="" class="android.widget.TextView" '
        f'package="com.example" content-desc="" checkable="false" checked="false" clickable="true" '
        f'enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" '
        f'password="false" selected="false" bounds="[0,{i * 2}][1080,{i * 2 + 2}]" />'
        for i in range(1200))
    return ('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
            '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" '
            'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
            'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
            f'bounds="[0,0][1080,2400]">{nodes}</node></hierarchy>')
