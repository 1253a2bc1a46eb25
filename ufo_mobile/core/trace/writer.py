"""The run directory: ``logs/<run-id>/``.

Layout::

    run.json              the run's settings summary at start, its result at the end
    steps.jsonl           one line per step, flushed when the step ends
    run.log               structured log (JSON lines): transitions, retries, errors
    steps/0001/           screenshot.png, annotated.jpg, controls.json, screen.txt, prompt.json,
                          reply.txt, action.json, result.json, timings.json
    final.png             the screen when the run ended in FAIL, or after the last step's action
    run.lock              held (flock) while the run is alive; removed when it ends

Every text written here passes through the ``Redactor``, so secret values never reach disk, in
plain or escaped form. Every file appears whole or not at all (``trace/files.py``). When a write
fails (a full disk), the writer remembers the failure, stops writing artifacts, and frees a small
reserve so that the step lines, the log and the final ``run.json`` still fit.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import shlex
import shutil
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ufo_mobile.core.trace.files import LineAppender, RunLock, SpaceReserve, cut_torn_tail, write_atomic, write_error
from ufo_mobile.core.trace.json_text import dumps as dumps  # re-exported: the run directory's JSON text
from ufo_mobile.errors import RunWriteError

REDACTED = "[REDACTED]"
THUMBNAIL_BUDGET = 32 * 1024 * 1024  # bytes of thumbnails a run keeps for its report; later ones are not kept


@dataclass(frozen=True)
class Thumbnail:
    """A small copy (JPEG bytes) of an image the run wrote, kept so that the run's report need not
    decode the file again; it stands for the file only while the file still has this size and
    modification time. ``source_size`` is the image's own width and height."""

    jpeg: bytes
    source_size: tuple[int, int]
    file_size: int
    mtime_ns: int

    def matches(self, path: Path) -> bool:
        try:
            stat = path.stat()
        except OSError:
            return False
        return stat.st_size == self.file_size and stat.st_mtime_ns == self.mtime_ns


_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\n": "&#10;",
                "\r": "&#13;", "\t": "&#9;"}


MIN_ENCODED_CHARS = 8
"""An encoded run shorter than this is not matched (it would hit ordinary text)."""


def encoded_forms(value: str) -> set[str]:
    """``value`` as a script or a model could pass it on: hex (both cases), URL encoding, and base64
    (standard and URL-safe) at each of the three alignments it can have inside a longer payload (the
    characters that depend on the value's bytes only)."""
    raw = value.encode()
    forms = {raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * offset + raw).decode()
            first, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6  # chars whose 6 bits are all the value's
            forms.add(text[first:end])
    return {f for f in forms if len(f) >= MIN_ENCODED_CHARS and f != value}


def escaped_forms(value: str) -> set[str]:
    """``value`` as it appears after the escapings a run applies: JSON (both ASCII modes),
    Python ``repr``, shell quoting and XML attributes (what uiautomator dumps contain), and the
    encodings of ``encoded_forms``."""
    forms = {value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1], repr(value)[1:-1],
             value.encode("unicode_escape").decode("ascii"), shlex.quote(value),
             "".join(_XML_ESCAPES.get(ch, ch) for ch in value)}
    forms.add("".join(_XML_ESCAPES.get(ch, ch) if ch != "'" else ch for ch in value))
    return {f for f in forms if f} | encoded_forms(value)


class Redactor:
    """Replaces every known secret value, and its escaped forms, by ``[REDACTED]``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._values: list[str] = []
        for value in values:
            self.add(value)

    def add(self, value: str) -> None:
        if value and value not in self._secrets:
            self._secrets.add(value)
            forms = set(self._values) | escaped_forms(value)
            self._values = sorted(forms, key=len, reverse=True)  # longest first: no partial leftovers

    def text(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        return text

    def data(self, obj: Any) -> Any:
        """``obj`` with every string in it redacted (a copy; ``obj`` itself when there are no secrets)."""
        if not self._values:
            return obj
        return self._data(obj)

    def _data(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, Mapping):
            return {k: self._data(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self._data(v) for v in obj]
        return obj


def new_run_id(task_name: str = "run", now: datetime | None = None) -> str:
    """``20261121-143005-turn-on-wifi-3fa2``: sortable, readable, unique, safe as a folder name."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^a-z0-9]+", "-", task_name.lower()).strip("-")[:40] or "run"
    return f"{stamp}-{slug}-{secrets.token_hex(2)}"


class RunWriter:
    """Writes one run's directory. Not thread-safe; one writer per run.

    ``RunWriter(run_dir)`` creates exactly ``run_dir``; ``RunWriter.open(log_dir, run_id)`` takes
    the next free name (``run_id``, ``run_id-2``, ...) when another run got the same id.

    Raises:
        RunWriteError: the directory (or its lock, reserve or step log) cannot be created.
    """

    def __init__(self, run_dir: Path, redactor: Redactor | None = None, *, existing: bool = False) -> None:
        self.run_dir = run_dir
        self.redactor = redactor or Redactor()
        self.failure: RunWriteError | None = None
        self.resumed = existing  # the directory of an earlier run, continued (``run --resume``)
        if existing:  # a run resumed: its directory stays; a line torn by a kill is cut off first
            for name in ("steps.jsonl", "run.log"):
                cut_torn_tail(run_dir / name)
        else:
            self._create(run_dir)
        try:
            (run_dir / "steps").mkdir(exist_ok=existing)
            self._lock = RunLock(run_dir)  # before run.json: a run with a run.json always has a lock
            self._reserve = SpaceReserve(run_dir / ".reserve")
            self._steps = LineAppender(run_dir / "steps.jsonl")
            self._log = LineAppender(run_dir / "run.log", sync=False)
        except (OSError, RunWriteError) as exc:
            if not existing:
                shutil.rmtree(run_dir, ignore_errors=True)  # no half-made run directory is left behind
            if isinstance(exc, RunWriteError):
                raise
            raise write_error(run_dir, exc) from exc
        self.thumbnails: dict[str, Thumbnail] = {}  # relative path -> thumbnail, for the report
        self._thumbnail_bytes = 0

    @staticmethod
    def _create(run_dir: Path) -> None:
        try:
            run_dir.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            reason = "not a directory" if isinstance(exc, FileExistsError) else exc.strerror
            raise RunWriteError(f"cannot write {run_dir.parent}: {reason}", path=str(run_dir.parent),
                                errno=exc.errno) from exc
        try:
            run_dir.mkdir()
        except FileExistsError:
            raise  # the id is taken: ``open`` tries the next one
        except OSError as exc:
            raise write_error(run_dir, exc) from exc

    @classmethod
    def open(cls, log_dir: Path, run_id: str, redactor: Redactor | None = None, *,
             attempts: int = 100) -> RunWriter:
        """A writer for ``log_dir/run_id``, or ``run_id-N`` with the first free N."""
        for n in range(1, attempts + 1):
            name = run_id if n == 1 else f"{run_id}-{n}"
            try:
                return cls(log_dir / name, redactor)
            except FileExistsError:
                continue
        raise RunWriteError(f"cannot write {log_dir / run_id}: {attempts} runs already use this id",
                            path=str(log_dir / run_id))

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def step_dir(self, step: int) -> Path:
        path = self.run_dir / "steps" / f"{step:04d}"
        path.mkdir(exist_ok=True)
        return path

    def _encode(self, content: bytes | str | Mapping[str, Any] | list[Any]) -> bytes:
        if isinstance(content, bytes):
            return content
        if isinstance(content, str):
            return self.redactor.text(content).encode("utf-8")
        return dumps(self.redactor.data(content)).encode("utf-8")

    def _failed(self, error: RunWriteError) -> RunWriteError:
        """Remember the first failure and free the reserve for the writes that must still happen."""
        if self.failure is None:
            self.failure = error
        self._reserve.release()
        return error

    def write_file(self, relative: str | Path, content: bytes | str | Mapping[str, Any] | list[Any]) -> Path:
        """Write one artifact under the run directory; text and JSON are redacted.

        Raises:
            RunWriteError: it could not be written, or an earlier write failed (artifacts stop then).
        """
        if self.failure is not None:
            raise self.failure
        path = self.run_dir / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._failed(write_error(path.parent, exc)) from exc
        try:
            write_atomic(path, self._encode(content))
        except RunWriteError as exc:
            raise self._failed(exc) from exc.__cause__
        return path

    def keep_thumbnail(self, relative: str | Path, jpeg: bytes, source_size: tuple[int, int]) -> None:
        """Keep ``jpeg``, a small copy of the image just written at ``relative`` (whose own size is
        ``source_size``), in ``thumbnails`` for the report, within ``THUMBNAIL_BUDGET``."""
        if self._thumbnail_bytes + len(jpeg) > THUMBNAIL_BUDGET:
            return
        try:
            stat = (self.run_dir / relative).stat()
        except OSError:
            return  # a thumbnail is a shortcut: the report reads the file without it
        self.thumbnails[Path(relative).as_posix()] = Thumbnail(jpeg, source_size, stat.st_size, stat.st_mtime_ns)
        self._thumbnail_bytes += len(jpeg)

    def _essential(self, write: Callable[[], None]) -> None:
        """A write the run cannot do without: on failure, free the reserve and try once more."""
        try:
            write()
        except RunWriteError as exc:
            self._failed(exc)
            write()

    def append_step(self, line: Mapping[str, Any]) -> None:
        """Append the step's JSONL line and push it to disk before returning."""
        text = dumps(self.redactor.data(line), indent=None)
        self._essential(lambda: self._steps.append(text))

    def log_line(self, line: str) -> None:
        """Append one ``run.log`` line. Never raises: a log that cannot be written loses the line."""
        try:
            self._essential(lambda: self._log.append(line))
        except RunWriteError:
            pass

    def write_run(self, data: Mapping[str, Any]) -> None:
        """Replace ``run.json`` (atomically, synced)."""
        content = dumps(self.redactor.data(data)).encode("utf-8")
        self._essential(lambda: write_atomic(self.run_dir / "run.json", content, sync=True))

    def close(self) -> None:
        """Free the reserve and end the run's lock. Call after the final ``write_run``: a run
        without its lock is one that has ended."""
        self._steps.close()
        self._log.close()
        self._reserve.release()
        self._lock.release()
