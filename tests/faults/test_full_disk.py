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
