"""Reading run directories back, and closing the books on runs that were cut off.

A run that ends in any way the process sees (FINISH, FAIL, Ctrl-C, SIGTERM, a full disk) writes
its final ``run.json`` while it still holds ``run.lock``. A run whose process died (SIGKILL, an
out-of-memory kill, power loss) leaves ``run.json`` saying ``RUNNING`` and a lock nobody holds.
``settle`` tells the two apart and rewrites the second kind as FAIL ("cut off"), keeping every
step that was recorded. ``run`` sweeps its log directory this way; ``report`` settles the run it
is asked about.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.trace.files import LOCK_NAME, try_lock, write_atomic
from ufo_mobile.trace.writer import dumps

RUNNING = "RUNNING"


def read_run(run_dir: Path) -> dict[str, Any]:
    """``run.json`` of ``run_dir``.

    Raises:
        ConfigError: ``run_dir`` is not a run directory, or its ``run.json`` is unreadable.
    """
    path = run_dir / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("not a run directory (it has no run.json)", path=str(run_dir)) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read run.json: {exc}", path=str(run_dir)) from exc
    if not isinstance(data, dict):
        raise ConfigError("run.json is not a JSON object", path=str(path))
    return data


def read_steps(run_dir: Path) -> list[dict[str, Any]]:
    """Every complete line of ``steps.jsonl`` (a line cut short by a crash is left out)."""
    try:
        text = (run_dir / "steps.jsonl").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    steps = []
    for line in text.splitlines():
        try:
            steps.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return steps


def _mark_cut_off(run_dir: Path, data: dict[str, Any]) -> dict[str, Any]:
    steps = read_steps(run_dir)
    last = steps[-1].get("step", len(steps)) if steps else 0
    reason = ("cut off: the process ended without finishing the run (killed, or the machine stopped); "
              f"{len(steps)} step{'s' if len(steps) != 1 else ''} recorded")
    settled = {**data, "status": "FAIL", "outcome": "failed", "reason": reason, "steps": last, "cut_off": True,
               "run_dir": str(run_dir)}
    try:
        write_atomic(run_dir / "run.json", dumps(settled).encode("utf-8"), sync=True)
    except RunWriteError:
        pass  # a read-only copy of a run: still reported as cut off, just not rewritten
    return settled


def settle(run_dir: Path) -> dict[str, Any]:
    """``run.json`` of ``run_dir``, rewritten as cut off if it says RUNNING and nobody runs it."""
    data = read_run(run_dir)
    if data.get("status") != RUNNING:
        return data
    fd = try_lock(run_dir)
    if fd is None:
        return data  # alive: its process holds the lock
    try:
        data = read_run(run_dir)  # again, now that the owner cannot be writing it
        if data.get("status") == RUNNING:
            data = _mark_cut_off(run_dir, data)
        if fd >= 0:
            (run_dir / LOCK_NAME).unlink(missing_ok=True)
    finally:
        if fd >= 0:
            os.close(fd)
    return data


def sweep(log_dir: Path) -> list[Path]:
    """Settle every run in ``log_dir`` that still has a lock file; return those found cut off."""
    found = []
    try:
        locks = sorted(log_dir.glob(f"*/{LOCK_NAME}"))
    except OSError:
        return []
    for lock in locks:
        try:
            if settle(lock.parent).get("cut_off"):
                found.append(lock.parent)
        except (ConfigError, OSError):
            continue  # not ours to judge: no run.json yet, or unreadable
    return found


@dataclass(frozen=True)
class ResumePoint:
    """Where ``run --resume`` picks a run up: its ``run.json``, the last completed step, the shared
    state after that step (raw JSON from ``steps/NNNN/state.json``), and what was used so far."""

    run: dict[str, Any]
    step: int
    state: dict[str, Any]
    usage: dict[str, Any]
    model_calls: int


def resume_point(run_dir: Path) -> ResumePoint:
    """The point to resume ``run_dir`` from.

    Raises:
        ConfigError: not a run directory, a run still alive, a run that finished, or one whose
            steps left no state to continue from.
    """
    data = settle(run_dir)
    status = data.get("status")
    if status == RUNNING:
        raise ConfigError(f"the run is still going (process {data.get('pid', '?')}): stop it first",
                          path=str(run_dir))
    if status == "FINISH":
        raise ConfigError("the run finished: there is nothing to resume", path=str(run_dir))
    steps = read_steps(run_dir)
    state: dict[str, Any] = {}
    last = 0
    for line in reversed(steps):  # the last step whose state was written whole
        step = int(line.get("step") or 0)
        try:
            loaded = json.loads((run_dir / "steps" / f"{step:04d}" / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(loaded, dict):
            state, last = loaded, step
            break
    if steps and not state:
        raise ConfigError("no step left a state.json to continue from (a run from an older version?)",
                          path=str(run_dir))
    usage: dict[str, Any] = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0,
                             "calls": 0}
    calls = 0
    for line in steps:
        if int(line.get("step") or 0) > last:
            continue
        calls += len(line.get("model_calls") or [])
        for key, value in (line.get("usage") or {}).items():
            if key in usage and isinstance(value, int | float) and usage[key] is not None:
                usage[key] += value
            elif key == "cost_usd" and value is None:
                usage[key] = None
    return ResumePoint(data, last, state, usage, calls)
