"""JSON text of the run directory's files, laid out for a person to read and encoded by the C encoder.

``json.dumps(..., indent=2)`` runs Python's pure-Python encoder (the C one only writes one line),
and a step writes tens of kilobytes of JSON (its controls, state and prompt): about a millisecond a
step of the interpreter's time, in every run of a batch at once. ``dumps`` lays a file out itself
instead: an object's keys one per line (nested objects likewise, indented), a list's items one per
line, and each list item, or any value deeper than ``DEPTH``, written on its one line by the C
encoder: a control of ``controls.json``, a message of ``prompt.json`` is one line. The text is
valid JSON that ``json.loads`` reads back to the same value; ``indent=None`` gives one line, as
``steps.jsonl`` holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEPTH = 6  # objects nested deeper than this are written on one line


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, bytes):
        return f"<{len(obj)} bytes>"
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return str(obj)


_ONE_LINE = json.JSONEncoder(ensure_ascii=False, default=_json_default)


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """``obj`` as JSON text: one line when ``indent`` is None, else laid out ``indent`` spaces a level."""
    if indent is None:
        return _ONE_LINE.encode(obj)
    return _laid_out(obj, " " * indent, "", DEPTH)


def _laid_out(value: Any, step: str, pad: str, depth: int) -> str:
    inner = pad + step
    if isinstance(value, dict) and value and depth > 0 and all(isinstance(k, str) for k in value):
        items = [f"{inner}{_ONE_LINE.encode(k)}: {_laid_out(v, step, inner, depth - 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple) and value and depth > 0:
        return "[\n" + ",\n".join(inner + _ONE_LINE.encode(item) for item in value) + f"\n{pad}]"
    return _ONE_LINE.encode(value)
