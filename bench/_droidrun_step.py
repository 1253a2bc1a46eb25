"""The prompt bench's DroidRun comparison: our whole step (text and reply schema) against DroidRun's
text-only step on the same screens, per part.

Our side is read from what our runtime sends: the messages split into the system message(s), the
history (everything between them and the last message) and the last user message (the current
screen), counted on their text parts only (pictures are the UFO table's business); and the reply
schema, counted as the compact JSON (``separators=(",", ":")``) of the schema in the
``response_format`` that ``ufo_mobile/core/llm/wire.py`` builds for it, once per call. That is what a
provider that bills the schema as prompt text would count; DroidRun's FastAgent with XML tool calls
sends no schema (its tools are in its system prompt).

DroidRun's side is rendered by ``bench/_droidrun_prompt_worker.py`` with mobilerun's own code in a
throwaway venv (``pip install mobilerun==0.7.4`` with its dependencies; never a project dependency),
split the same way: system, history (its goal message once it is no longer the last, earlier turns),
last user message (with its ``<device_state>``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _droidrun_env import BenchError, _json_lines, _run

from ufo_mobile.core.llm.wire import json_schema_format
from ufo_mobile.core.memory.messages import ChatMessage, TextPart

PROMPT_WORKER = Path(__file__).resolve().with_name("_droidrun_prompt_worker.py")
FULL_VENV = Path("/tmp/ufo_mobile_bench_droidrun_full")
MOBILERUN = "mobilerun==0.7.4"
GOAL_RATIO = 0.5

Count = Callable[[str], int]


@dataclass
class Parts:
    """The tokens of one call, by part."""

    system: int
    history: int
    user: int
    schema: int = 0

    @property
    def total(self) -> int:
        return self.system + self.history + self.user + self.schema


def schema_text(schema: Mapping[str, Any] | None) -> str:
    """The reply schema as the endpoint receives it, in compact JSON ("" when none is sent)."""
    if schema is None:
        return ""
    return json.dumps(json_schema_format(schema)["json_schema"]["schema"], separators=(",", ":"))


def text_of(message: ChatMessage) -> str:
    """A message's text parts, as the wire sends them (images are not text)."""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(p.text for p in message.content if isinstance(p, TextPart))


def our_parts(messages: Sequence[ChatMessage], schema: Mapping[str, Any] | None, count: Count) -> Parts:
    """Our call split into system / history / current user message / schema, in tokens."""
    systems = [m for m in messages if m.role == "system"]
    rest = [m for m in messages if m.role != "system"]
    return Parts(system=sum(count(text_of(m)) for m in systems),
                 history=sum(count(text_of(m)) for m in rest[:-1]),
                 user=count(text_of(rest[-1])) if rest else 0,
                 schema=count(schema_text(schema)) if schema is not None else 0)


def turns_of(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Our earlier turns for DroidRun's history: each assistant reply's reasoning and actions, and
    the lines of the outcome message that follows it, one per call (the same content, their form)."""
    history = [m for m in messages if m.role != "system"][:-1]
    turns = []
    for index, message in enumerate(history):
        if message.role != "assistant":
            continue
        try:
            reply = json.loads(text_of(message))
        except json.JSONDecodeError:
            reply = {"thought": text_of(message)}
        following = history[index + 1] if index + 1 < len(history) else None
        lines = [line for line in text_of(following).splitlines() if line.strip()] if following else []
        thought = " ".join(str(reply.get(k) or "") for k in ("observation", "thought")).strip()
        calls = [{"tool": str(a.get("name", "")), "args": dict(a.get("args") or {})}
                 for a in reply.get("actions") or [] if isinstance(a, dict)]
        turns.append({"thought": thought, "calls": calls, "results": lines[:len(calls)]})
    return turns


def ensure_venv(venv: Path) -> tuple[Path, str]:
    """The full DroidRun venv's interpreter (built on first use) and a note; ``BenchError`` if impossible."""
    python = venv / "bin" / "python"
    try:
        return python, f"reused {venv}: " + _check(python)
    except BenchError:
        pass
    start = time.perf_counter()
    print(f"building the DroidRun venv at {venv} (pip install {MOBILERUN} with its dependencies) ...",
          file=sys.stderr, flush=True)
    if not python.is_file():
        _run([sys.executable, "-m", "venv", str(venv)], f"creating the venv {venv}", 300)
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", MOBILERUN],
         f"pip install {MOBILERUN} (no network?)", 1800)
    return python, f"built {venv} in {time.perf_counter() - start:.0f} s: " + _check(python)


def _check(python: Path) -> str:
    if not python.is_file():
        raise BenchError(f"no interpreter at {python}")
    out = _run([str(python), "-W", "ignore", str(PROMPT_WORKER), "--check"], "importing mobilerun", 180)
    versions = _json_lines(out, "the mobilerun import check")[-1]
    return ", ".join(f"{name} {number}" for name, number in sorted(versions.items()))


def droidrun_parts(python: Path, runs: list[dict[str, Any]], count: Count) -> list[list[Parts | str]]:
    """DroidRun's tokens per step of every run (an error message where it failed)."""
    steps = sum(len(run["steps"]) for run in runs)
    out = _run([str(python), "-W", "ignore", str(PROMPT_WORKER)], "DroidRun's prompt worker", 120 + 5 * steps,
               stdin=json.dumps({"runs": runs}))
    results: list[list[Parts | str]] = [[] for _ in runs]
    for line in _json_lines(out, "DroidRun's prompt worker"):
        if "error" in line:
            results[line["run"]].append(str(line["error"]))
            continue
        results[line["run"]].append(Parts(system=count(line["system"]),
                                          history=sum(count(text) for text in line["history"]),
                                          user=count(line["user"])))
    return results


def ratio(ours: Parts, theirs: Parts | str) -> float | None:
    return ours.total / theirs.total if isinstance(theirs, Parts) and theirs.total else None


def print_table(title: str, rows: Sequence[tuple[str, Parts, Parts | str]]) -> list[float]:
    """One row per step: our parts, DroidRun's parts, the ratio; returns the ratios that exist."""
    print(title)
    header = ("step", "sys", "hist", "user", "schema", "ours", "DR sys", "DR hist", "DR user", "DR", "x")
    table = [header]
    ratios = []
    for name, ours, theirs in rows:
        mine = [str(v) for v in (ours.system, ours.history, ours.user, ours.schema, ours.total)]
        if isinstance(theirs, Parts):
            peer = [str(v) for v in (theirs.system, theirs.history, theirs.user, theirs.total)]
        else:
            peer = ["-", "-", "-", "failed" if theirs else "n/a"]  # "" = DroidRun's side is unavailable
        value = ratio(ours, theirs)
        if value is not None:
            ratios.append(value)
        table.append((name, *mine, *peer, f"{value:.3f}" if value is not None else "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    for name, _, theirs in rows:
        if isinstance(theirs, str) and theirs:
            print(f"  DroidRun failed on {name}: {theirs}")
    return ratios


def verdict(label: str, value: float | None) -> str:
    """The goal line: our whole step against DroidRun's text-only step (``label`` says over what)."""
    goal = f"whole step (schema included) <= {GOAL_RATIO}x DroidRun's text-only step"
    if value is None:
        return f"  n/a   {goal}: unavailable ({label})"
    return f"  {'PASS' if value <= GOAL_RATIO else 'MISS'}  {goal}: {value:.3f} ({label})"


def median_or_none(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
