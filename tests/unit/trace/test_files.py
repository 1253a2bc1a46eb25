"""The run directory's file primitives under a disk that fills up, and the run lock."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ufo_mobile.core.trace import files
from ufo_mobile.core.trace.files import LineAppender, RunLock, SpaceReserve, try_lock, write_atomic
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.errors import RunWriteError


class Disk:
    """``os.write`` with a byte budget: past it, a write stores what fits and then fails with ENOSPC,
    the way a full file system does."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.real = os.write

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if self.budget <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = min(len(data), self.budget)
        self.budget -= n
        return self.real(fd, bytes(data[:n]))

    def free(self, count: int) -> None:
        self.budget += count


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    fake = Disk(budget=10**9)
    monkeypatch.setattr(files.os, "write", fake.write)
    yield fake


def test_atomic_write_leaves_the_old_file_and_no_debris_when_the_disk_is_full(tmp_path: Path, disk: Disk) -> None:
    target = tmp_path / "run.json"
    write_atomic(target, b'{"status": "RUNNING"}')
    disk.budget = 5
    with pytest.raises(RunWriteError) as info:
        write_atomic(target, b'{"status": "FINISH", "much": "more than five bytes"}')
    assert target.read_bytes() == b'{"status": "RUNNING"}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]
    assert info.value.errno == errno.ENOSPC
    assert str(info.value) == f"cannot write {target}: {os.strerror(errno.ENOSPC)}"  # the OS's words, passed on


def test_a_line_that_does_not_fit_is_cut_back_off(tmp_path: Path, disk: Disk) -> None:
    appender = LineAppender(tmp_path / "steps.jsonl")
    appender.append('{"step": 1}')
    disk.budget = 4
    with pytest.raises(RunWriteError):
        appender.append('{"step": 2, "padding": "xxxxxxxx"}')
    assert (tmp_path / "steps.jsonl").read_text() == '{"step": 1}\n'
    disk.free(100)
    appender.append('{"step": 2}')
    appender.close()
    assert (tmp_path / "steps.jsonl").read_text().splitlines() == ['{"step": 1}', '{"step": 2}']


def test_the_reserve_holds_real_bytes_and_gives_them_back(tmp_path: Path) -> None:
    reserve = SpaceReserve(tmp_path / ".reserve", size=4096)
    assert os.stat(tmp_path / ".reserve").st_blocks * 512 >= 4096  # allocated, not sparse
    reserve.release()
    reserve.release()
    assert not (tmp_path / ".reserve").exists()


def test_the_run_lock_tells_a_live_run_from_a_dead_one(tmp_path: Path) -> None:
    assert try_lock(tmp_path) == -1  # no lock file
    lock = RunLock(tmp_path)
    assert try_lock(tmp_path) is None  # held by its owner (another descriptor: flock sees two owners)
    os.close(lock._fd)  # what the kernel does when the owner is killed  # type: ignore[arg-type]
    lock._fd = None
    fd = try_lock(tmp_path)
    assert fd is not None and fd >= 0
    os.close(fd)


def test_a_writer_on_a_disk_that_fills_up_stops_artifacts_but_keeps_the_records(tmp_path: Path, disk: Disk) -> None:
    writer = RunWriter(tmp_path / "run")
    writer.write_run({"status": "RUNNING"})
    writer.write_file("steps/0001/screenshot.png", b"png" * 10)
    disk.budget = 10
    with pytest.raises(RunWriteError):
        writer.write_file("steps/0002/screenshot.png", b"x" * 100)
    assert writer.failure is not None
    assert not (tmp_path / "run" / ".reserve").exists()  # given back for the records
    disk.free(5000)  # what the reserve frees on a real disk
    with pytest.raises(RunWriteError):  # artifacts stay off once the disk has failed
        writer.write_file("steps/0002/controls.json", {"a": 1})
    writer.append_step({"step": 2, "status": "FAIL"})
    writer.write_run({"status": "FAIL", "reason": str(writer.failure)})
    writer.close()
    run = tmp_path / "run"
    assert json.loads((run / "run.json").read_text())["status"] == "FAIL"
    assert (run / "steps.jsonl").read_text() == '{"step": 2, "status": "FAIL"}\n'
    assert not (run / "steps" / "0002" / "screenshot.png").exists()
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]
    assert not (run / "run.lock").exists()


def test_two_runs_with_one_id_get_two_directories(tmp_path: Path) -> None:
    first = RunWriter.open(tmp_path, "same-id")
    second = RunWriter.open(tmp_path, "same-id")
    assert (first.run_id, second.run_id) == ("same-id", "same-id-2")
    first.close()
    second.close()


@pytest.mark.parametrize("make", ["file", "read-only"])
def test_an_unusable_log_directory_is_one_clear_error(tmp_path: Path, make: str) -> None:
    logs = tmp_path / "logs"
    if make == "file":
        logs.write_text("not a directory")
        where, why = logs, "not a directory"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories; the CLI test covers a read-only mount")
        logs.mkdir()
        logs.chmod(0o500)
        where, why = logs / "r", os.strerror(errno.EACCES)  # the OS's words, passed on
    with pytest.raises(RunWriteError) as info:
        RunWriter.open(logs, "r")
    assert str(info.value) == f"cannot write {where}: {why}" and info.value.path == str(where)
