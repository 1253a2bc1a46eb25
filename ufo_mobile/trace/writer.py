"""The run directory: ``logs/<run-id>/``.

Layout::

    run.json              the run's settings summary at start, its result at the end
    steps.jsonl           one line per step, flushed when the step ends
    run.log               structured log (JSON lines): transitions, retries, errors
    steps/0001/           screenshot.png, annotated.png, controls.json, screen.txt, prompt.json,
                          reply.txt, action.json, result.json, timings.json
    final.png             the screen when the run ended in FAIL

Every text written here passes through the ``Redactor``, so secret values never reach disk.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

REDACTED = "[REDACTED]"


class Redactor:
    """Replaces every known secret value by ``[REDACTED]``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values = sorted({v for v in values if v}, key=len, reverse=True)

    def add(self, value: str) -> None:
        if value and value not in self._values:
            self._values = sorted([*self._values, value], key=len, reverse=True)

    def text(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        return text

    def data(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, Mapping):
            return {k: self.data(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self.data(v) for v in obj]
        return obj


def new_run_id(task_name: str = "run", now: datetime | None = None) -> str:
    """``20261121-143005-turn-on-wifi-3fa2``: sortable, readable, unique, safe as a folder name."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^a-z0-9]+", "-", task_name.lower()).strip("-")[:40] or "run"
    return f"{stamp}-{slug}-{secrets.token_hex(2)}"


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, bytes):
        return f"<{len(obj)} bytes>"
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return str(obj)


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=indent, default=_json_default)


class RunWriter:
    """Writes one run's directory. Not thread-safe; one writer per run."""

    def __init__(self, run_dir: Path, redactor: Redactor | None = None) -> None:
        self.run_dir = run_dir
        self.redactor = redactor or Redactor()
        run_dir.mkdir(parents=True, exist_ok=False)
        (run_dir / "steps").mkdir()
        self._jsonl: TextIO = open(run_dir / "steps.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        # One background thread for artifacts that are slow to make and needed by no one in the loop.
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-writer")
        self._pending: list[Future[None]] = []

    def step_dir(self, step: int) -> Path:
        path = self.run_dir / "steps" / f"{step:04d}"
        path.mkdir(exist_ok=True)
        return path

    def write_file(self, relative: str | Path, content: bytes | str | Mapping[str, Any] | list[Any]) -> Path:
        """Write one artifact under the run directory; text and JSON are redacted."""
        path = self.run_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(self.redactor.text(content), encoding="utf-8")
        else:
            path.write_text(dumps(self.redactor.data(content)), encoding="utf-8")
        return path

    def write_later(self, relative: str | Path, produce: Callable[[], bytes]) -> None:
        """Make and write an artifact in the background; a failure is written next to it as text."""
        def job() -> None:
            try:
                self.write_file(relative, produce())
            except Exception as exc:  # an artifact must never take the run down
                self.write_file(f"{relative}.error.txt", f"{type(exc).__name__}: {exc}\n")

        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(self._background.submit(job))

    def flush(self) -> None:
        """Wait for every background artifact to be on disk."""
        for future in list(self._pending):
            future.result()

    def append_step(self, line: Mapping[str, Any]) -> None:
        """Append the step's JSONL line and push it to disk before returning."""
        self._jsonl.write(dumps(self.redactor.data(line), indent=None) + "\n")
        self._jsonl.flush()
        os.fsync(self._jsonl.fileno())

    def write_run(self, data: Mapping[str, Any]) -> None:
        tmp = self.run_dir / "run.json.tmp"
        tmp.write_text(dumps(self.redactor.data(data)), encoding="utf-8")
        tmp.replace(self.run_dir / "run.json")

    def close(self) -> None:
        self._background.shutdown(wait=True)
        if not self._jsonl.closed:
            self._jsonl.close()
