"""The fault matrix runs the real command line in subprocesses, as a user meets it.

Helpers:

* ``Cli`` starts ``python -m ufo_mobile ...`` in a new session (so every process it starts can be
  found again), collects stdout line by line on a thread, and ``wait_line`` waits for a line (a
  condition, never a fixed time). ``finish`` waits for the exit (its timeout is only a hang guard)
  and asserts that no process of that session is left alive.
* ``served_phone``: the simulated phone served over ADB by a separate ``sim --port 0`` process (so a
  test can freeze it with SIGSTOP), connected to a private adb server on 127.0.0.1.
* ``one_line_error``: exit 2, one line on stderr starting with ``error:``, no traceback.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.adb_server import PrivateAdbServer
from tests.processes import session_processes

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 120.0  # seconds; only ever reached when something hangs


class Cli:
    """One ``python -m ufo_mobile`` process."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        environment = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", *args], cwd=cwd, env=environment,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, encoding="utf-8", errors="replace", start_new_session=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.out: list[str] = []
        self.err = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.err = self.proc.stderr.read()

    def wait_line(self, prefix: str) -> str:
        """Block until a stdout line starts with ``prefix``."""
        while True:
            line = self.lines.get(timeout=HANG_GUARD)
            if line is None:
                raise AssertionError(f"exited before printing {prefix!r}: {''.join(self.out)}{self.err}")
            if line.startswith(prefix):
                return line

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def finish(self) -> tuple[int, str, str]:
        """Wait for the exit; return (code, stdout, stderr); fail if any process of it lives on."""
        try:
            code = self.proc.wait(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise AssertionError(f"the process did not exit: {''.join(self.out)[-2000:]}") from None
        self._reader.join(HANG_GUARD)
        self._err_reader.join(HANG_GUARD)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        left = session_processes(self.proc.pid)
        if code == -signal.SIGKILL:
            # killed, it could wait for nothing: a child it had just started (fc-list listing the fonts
            # for a background drawing) may still be finishing on its own; a child that does not end by
            # itself is still caught (the bound is the hang guard)
            deadline = time.monotonic() + HANG_GUARD
            while left and time.monotonic() < deadline:
                time.sleep(0.02)
                left = session_processes(self.proc.pid)
        if left:
            described = {pid: _command_line(pid) for pid in left}
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise AssertionError(f"processes left alive: {described}")
        return code, "".join(self.out), self.err


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` (a file appearing, a log line) until it holds; the bound is a hang guard."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return Cli(*args, cwd=cwd, env=env).finish()


def one_line_error(code: int, err: str, *names: str) -> str:
    assert code == 2, err[-2000:]
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err[-2000:]
    assert lines[0].startswith("error: "), lines[0]
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def only_run_dir(log_dir: Path) -> Path:
    (run_dir,) = [p for p in log_dir.iterdir() if p.is_dir()]
    return run_dir


def run_json(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "run.json").read_text())
    return data


def log_events(log_dir: Path) -> list[dict[str, Any]]:
    """Every complete ``run.log`` line of the runs in ``log_dir`` (a line being written is skipped)."""
    events = []
    for log in log_dir.glob("*/run.log"):
        for line in log.read_text().splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def step_lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]


def write_task(folder: Path, replies: list[Any], *, name: str = "task.yaml", extra: str = "",
               task: str = "test task", model: str = "") -> Path:
    """A task file and its reply script in ``folder``; ``model`` adds keys to the model mapping."""
    script = folder / f"{Path(name).stem}-script.yaml"
    script.write_text(json.dumps({"replies": replies}))
    path = folder / name
    more = f", {model}" if model else ""
    path.write_text(f"task: {json.dumps(task)}\nmodel: {{script: {script.name}{more}}}\n{extra}")
    return path


@dataclass
class ServedPhone:
    cli: Cli
    serial: str
    env: dict[str, str]  # for a run against it: the private adb server's port

    def freeze(self) -> None:
        self.cli.signal(signal.SIGSTOP)


@pytest.fixture
def served_phone(adb_server: PrivateAdbServer, tmp_path: Path) -> Iterator[ServedPhone]:
    sim = Cli("sim", "--port", "0", cwd=tmp_path)
    try:
        line = sim.wait_line("simulated phone listening on 127.0.0.1:")
        port = int(line.split("127.0.0.1:")[1].split(";")[0])
        home = tmp_path / "home"  # a run's caches (app labels) stay in the test's directory
        home.mkdir(exist_ok=True)
        yield ServedPhone(sim, f"127.0.0.1:{port}", {"ANDROID_ADB_SERVER_PORT": str(adb_server.port),
                                                     "HOME": str(home)})
    finally:
        sim.signal(signal.SIGKILL)  # stopped or not; its graceful Ctrl-C is tested in tests/integration
        sim.finish()
        adb_server.run("disconnect")
