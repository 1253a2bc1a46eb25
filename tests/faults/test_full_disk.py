"""A log directory on a disk that fills up during the run (a 200 KB tmpfs): the run ends in FAIL with a
one-line reason, every step recorded before is whole, and no file is half-written under its name."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from tests.faults.conftest import one_line_error, only_run_dir, run_json, step_lines, write_task
from tests.faults.small_disk import namespace_mounts, run_in_mount_namespace

NO_SPACE = os.strerror(errno.ENOSPC)  # the OS's words for a full disk, which the messages pass on

SCROLLS = [{"status": "CONTINUE", "thought": "look", "action": {"name": "scroll", "args": {"direction": d}}}
           for d in ["down", "up"] * 20]


@pytest.mark.skipif(not namespace_mounts(), reason="no private mount namespace here for a small tmpfs; the "
                                                    "writer's own tests fill a simulated disk instead")
def test_a_full_disk_ends_the_run_in_fail_and_leaves_nothing_half_written(tmp_path: Path) -> None:
    task = write_task(tmp_path, SCROLLS, extra="limits: {max_steps: 40, max_repeated_actions: 40}\n")
    disk, out_dir = tmp_path / "disk", tmp_path / "copied"
    disk.mkdir()
    out_dir.mkdir()
    code, out, err = run_in_mount_namespace(f"mount -t tmpfs -o size=200k tmpfs {disk}",
                                            ["run", str(task), "--log-dir", str(disk)], cwd=tmp_path,
                                            copy_out=(disk, out_dir))
    assert code == 1, out + err
    assert err == "" and "Traceback" not in out
    summary = [line for line in out.splitlines() if line.startswith("FAIL after")]
    assert len(summary) == 1 and summary[0].endswith(NO_SPACE)
    run_dir = only_run_dir(out_dir)
    result = run_json(run_dir)
    assert result["status"] == "FAIL" and result["reason"].startswith("cannot write ")
    assert result["reason"].endswith(f": {NO_SPACE}") and "\n" not in result["reason"]
    lines = step_lines(run_dir)  # every line whole (json.loads would fail on a torn one)
    assert lines and lines[-1]["status"] == "FAIL" and lines[-1]["write_error"] == result["reason"]
    assert result["steps"] == len(lines)
    for path in run_dir.rglob("*"):
        assert not path.name.endswith(".tmp"), path
        if path.suffix == ".png":
            with Image.open(path) as image:
                image.load()  # a truncated PNG raises here
        elif path.suffix == ".json":
            json.loads(path.read_text())
    for line in lines[:-1]:  # the steps completed before the disk filled are all there
        for name in ("screenshot", "controls", "screen", "prompt", "reply", "action", "result", "timings"):
            assert (run_dir / line["files"][name]).is_file(), (line["step"], name)
    assert not (run_dir / "run.lock").exists() and not (run_dir / ".reserve").exists()


@pytest.mark.skipif(not namespace_mounts(), reason="no private mount namespace here for a small tmpfs")
def test_a_disk_full_from_the_start_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    task = write_task(tmp_path, SCROLLS[:1] + [{"status": "FINISH", "result": "ok"}])
    disk, out_dir = tmp_path / "disk", tmp_path / "copied"
    disk.mkdir()
    out_dir.mkdir()
    code, out, err = run_in_mount_namespace(f"mount -t tmpfs -o size=16k tmpfs {disk}",
                                            ["run", str(task), "--log-dir", str(disk)], cwd=tmp_path,
                                            copy_out=(disk, out_dir))
    one_line_error(code, err, f"logs.dir: cannot create the run directory: cannot write {disk}", NO_SPACE)
    assert out == ""
    assert list(out_dir.iterdir()) == []


@pytest.mark.skipif(not namespace_mounts(), reason="no private mount namespace here for a small tmpfs")
def test_an_eval_on_a_disk_that_fills_up_keeps_what_ended_and_says_what_could_not_be_written(tmp_path: Path) -> None:
    # the first run (a few hundred KB of screenshots) fits; the second, longer one fills the disk
    (tmp_path / "defaults.yaml").write_text("logs: {report: false}\nperception: {annotate: false}\n")
    disk, out_dir = tmp_path / "disk", tmp_path / "copied"
    disk.mkdir()
    out_dir.mkdir()
    code, out, err = run_in_mount_namespace(
        f"mount -t tmpfs -o size=1200k tmpfs {disk}",
        ["eval", "suite", "--model", "oracle", "--tasks", "clock-turn-off,shop-checkout,shop-price",
         "--config", str(tmp_path / "defaults.yaml"), "--log-dir", str(disk)],
        cwd=tmp_path, copy_out=(disk, out_dir))
    assert code == 3, out + err  # EXIT_CANNOT_WRITE: not the agent's score, not a usage error
    assert "Traceback" not in out + err
    (error,) = err.splitlines()
    assert error.startswith("error: cannot write ") and f": {NO_SPACE}; " in error
    assert error.endswith("summary.json holds the runs that ended")
    lines = out.splitlines()
    runs = [line for line in lines if line.startswith("[")]
    assert runs[0].startswith("[1/3] clock-turn-off s0: PASS  FINISH")
    assert runs[1].startswith("[2/3] shop-checkout s0: interrupted (cannot write ")
    assert not any(line.startswith("[3/3]") for line in lines)  # nothing starts on a full disk
    assert "success rate: 1/1 runs that ended (100.0%); pass@1 1.000; 1 interrupted, not counted" in lines
    assert any(line.startswith("total ") for line in lines)  # the table of what ended (plain: not a terminal)
    assert any(line.startswith(f"stopped (cannot write the evaluation's directory: {NO_SPACE}): 1 of 3 runs "
                               "ended, 1 interrupted") for line in lines)

    (eval_dir,) = out_dir.glob("eval-*")
    records = [json.loads(line) for line in (eval_dir / "results.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["passed"], r["interrupted"]) for r in records] == [
        ("clock-turn-off", True, False), ("shop-checkout", False, True)]
    assert records[1]["write_error"].endswith(NO_SPACE) and records[1]["write_error"].startswith("cannot write ")
    assert run_json(Path(out_dir / Path(records[0]["run_dir"]).relative_to(disk)))["status"] == "FINISH"
    summary = json.loads((eval_dir / "summary.json").read_text())
    assert {k: summary[k] for k in ("runs", "ended", "interrupted", "passed", "success_rate")} == {
        "runs": 2, "ended": 1, "interrupted": 1, "passed": 1, "success_rate": 1.0}
    assert summary["stopped"] == f"cannot write the evaluation's directory: {NO_SPACE}"
    assert not (eval_dir / ".reserve").exists()
    for path in out_dir.rglob("*"):
        assert not path.name.endswith(".tmp"), path
