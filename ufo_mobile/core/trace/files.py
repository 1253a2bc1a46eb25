"""File primitives of the run directory: nothing half-written under a final name, ever.

- ``write_atomic`` writes to a hidden temporary file beside the target and renames it into place;
  on any failure the temporary file is removed and ``RunWriteError`` is raised, so a reader sees
  either the old file, the complete new one, or none.
- ``LineAppender`` appends whole lines to a JSONL file; a write that fails part-way (ENOSPC) is cut
  back to the last complete line before the error is raised.
- ``SpaceReserve`` holds a small file of spare bytes from the start of a run; it is released when
  a write fails (or the run ends), so the final ``run.json`` and the last log lines still fit on a
  disk that filled up during the run.
- ``RunLock`` is an ``flock`` held on ``run.lock`` while the run is alive. The kernel drops it when
  the process dies, even on SIGKILL, so a run whose lock can be taken is known to be cut off.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from ufo_mobile.errors import RunWriteError

RESERVE_BYTES = 64 * 1024
LOCK_NAME = "run.lock"


def write_error(path: Path, exc: OSError) -> RunWriteError:
    reason = exc.strerror or type(exc).__name__
    return RunWriteError(f"cannot write {path}: {reason}", path=str(path), errno=exc.errno)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomic(path: Path, data: bytes, *, sync: bool = False) -> None:
    """Replace ``path`` with ``data`` in one rename; raise ``RunWriteError`` and leave no debris on failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise write_error(path, exc) from exc


def cut_torn_tail(path: Path) -> None:
    """Drop a last line without its newline (a write cut short by a kill), so appends stay whole."""
    try:
        with path.open("rb+") as file:
            data = file.read()
            end = data.rfind(b"\n") + 1
            if end < len(data):
                file.truncate(end)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise write_error(path, exc) from exc


class LineAppender:
    """Appends complete lines to one file; never leaves a partial line behind."""

    def __init__(self, path: Path, *, sync: bool = True) -> None:
        self.path = path
        self.sync = sync
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise write_error(path, exc) from exc

    def append(self, line: str) -> None:
        if self._fd is None:
            raise RunWriteError(f"cannot write {self.path}: already closed", path=str(self.path))
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            _write_all(self._fd, data)
            if self.sync:
                os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, size)  # cut the partial line back off
            except OSError:
                pass
            raise write_error(self.path, exc) from exc

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def append_line(path: Path, line: str, *, sync: bool = True) -> None:
    """Append one whole line to ``path`` (opened and closed again): ``LineAppender`` for one line."""
    appender = LineAppender(path, sync=sync)
    try:
        appender.append(line)
    finally:
        appender.close()


class SpaceReserve:
    """A file of spare bytes; ``release()`` frees them for the writes that must not fail."""

    def __init__(self, path: Path, size: int = RESERVE_BYTES) -> None:
        self.path = path
        write_atomic(path, b"\0" * size)  # real blocks: a sparse file would reserve nothing

    def release(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass


_HELD: set[Path] = set()  # the locks this process holds now (``RunLock``): runs certainly alive


def held_here(lock: Path) -> bool:
    """Whether this process holds ``lock`` (a run's ``run.lock``, as its ``RunLock`` named it)."""
    return lock in _HELD


class RunLock:
    """An exclusive ``flock`` on ``<run>/run.lock`` for the life of the run."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_NAME
        try:
            self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(self._fd, f"{os.getpid()}\n".encode())
        except OSError as exc:
            raise write_error(self.path, exc) from exc
        _HELD.add(self.path)

    def release(self) -> None:
        """Remove the lock file, then drop the lock: the run has ended in a final state."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None
        _HELD.discard(self.path)


def try_lock(run_dir: Path) -> int | None:
    """Take the run's lock if its owner is gone.

    Returns a descriptor holding the lock (close it to let go), ``None`` while the owner holds it,
    or ``-1`` when there is no lock file (the run ended, or never got that far).
    """
    try:
        fd = os.open(run_dir / LOCK_NAME, os.O_RDWR)
    except FileNotFoundError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd
