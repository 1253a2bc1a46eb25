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

from ufo_mobile.core.trace.files import LOCK_NAME, held_here, try_lock, write_atomic
from ufo_mobile.core.trace.writer import dumps
from ufo_mobile.errors import ConfigError, RunWriteError

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
    """Settle every run in ``log_dir`` that still has a lock file; return those found cut off. The
    runs of this process (a batch's other runs) are alive, and not read."""
    found = []
    try:
        locks = sorted(log_dir.glob(f"*/{LOCK_NAME}"))
    except OSError:
        return []
    for lock in locks:
        if held_here(lock):
            continue
        try:
            if settle(lock.parent).get("cut_off"):
                found.append(lock.parent)
        except (ConfigError, OSError):
            continue  # not ours to judge: no run.json yet, or unreadable
    return found


@dataclass(frozen=True)
class ResumePoint:
    """Where ``run --resume`` picks a run up: its ``run.json``, the last recorded step (the next one
    is ``step + 1``), the shared state to go on with (raw JSON from ``steps/NNNN/state.json`` of step
    ``state_step``), and what was used so far. ``state_step`` is below ``step`` when the newer states
    are not whole (a crash or a full disk cut them short); ``note`` then says so in one line."""

    run: dict[str, Any]
    step: int
    state: dict[str, Any]
    usage: dict[str, Any]
    model_calls: int
    state_step: int = 0
    note: str = ""


def _resume_steps(run_dir: Path) -> list[dict[str, Any]]:
    """The step records of ``steps.jsonl`` for a resume: a line cut short by a crash is left out,
    as ``read_steps`` does; a whole line that is no step record is an error naming it.

    Raises:
        ConfigError: a line is not an object, or its ``step``, ``usage`` or ``model_calls`` has the
            wrong type.
    """
    path = run_dir / "steps.jsonl"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror or exc}", path=str(path)) from exc
    steps: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if not isinstance(line, dict):
            raise ConfigError(f"a step record must be a JSON object, not {type(line).__name__}", path=str(path),
                              line=number)
        step = line.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise ConfigError(f"must be a step number (1, 2, ...), not {step!r:.40}", path=str(path), line=number,
                              key="step")
        for key, kind in (("usage", dict), ("model_calls", list)):
            if line.get(key) is not None and not isinstance(line[key], kind):
                raise ConfigError(f"must be a JSON {'object' if kind is dict else 'list'}, not "
                                  f"{type(line[key]).__name__}", path=str(path), line=number, key=key)
        steps.append(line)
    return steps


def _read_state(run_dir: Path, step: int) -> tuple[dict[str, Any] | None, str]:
    """``steps/NNNN/state.json`` of ``step`` as JSON, or None and why it is not whole.

    Raises:
        ConfigError: it is whole JSON but not an object.
    """
    path = run_dir / "steps" / f"{step:04d}" / "state.json"
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"not whole JSON: {exc}"
    if not isinstance(loaded, dict):
        raise ConfigError(f"the shared state must be a JSON object, not {type(loaded).__name__}", path=str(path))
    return loaded, ""


def resume_point(run_dir: Path) -> ResumePoint:
    """The point to resume ``run_dir`` from: after its last recorded step, with the newest shared
    state that is whole (a ``state.json`` cut short is passed over, and ``note`` says so).

    Raises:
        ConfigError: not a run directory, a run still alive, a run that finished, a step record or a
            state of the wrong shape (one line naming the file and field), or no whole state at all.
    """
    data = settle(run_dir)
    status = data.get("status")
    if status == RUNNING:
        raise ConfigError(f"the run is still going (process {data.get('pid', '?')}): stop it first",
                          path=str(run_dir))
    if status == "FINISH":
        raise ConfigError("the run finished: there is nothing to resume", path=str(run_dir))
    if not isinstance(data.get("resumed", []), list):
        raise ConfigError("must be a list of the run's earlier breaks", path=str(run_dir / "run.json"), key="resumed")
    steps = _resume_steps(run_dir)
    last = max((line["step"] for line in steps), default=0)
    state: dict[str, Any] | None = {} if not steps else None
    state_step, broken = 0, ""
    for number in sorted({line["step"] for line in steps}, reverse=True):  # the newest whole state
        state, why = _read_state(run_dir, number)
        if state is not None:
            state_step = number
            break
        broken = broken or f"steps/{number:04d}/state.json is {why}"
    if state is None:
        why = "a run from an older version?" if broken.endswith(" is missing") else broken
        raise ConfigError(f"no step left a whole state.json to continue from ({why})", path=str(run_dir))
    note = ""
    if state_step < last:
        lost = f"step {last}" if state_step == last - 1 else f"steps {state_step + 1}-{last}"
        note = (f"resuming after step {last} with the plan and memory of step {state_step}: {broken}; what {lost} "
                "added to them is lost (the phone and the run's record keep it)")
    usage: dict[str, Any] = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0,
                             "calls": 0}
    calls = 0
    for line in steps:  # every recorded step was paid for, whether its state survived or not
        calls += len(line.get("model_calls") or [])
        for key, value in (line.get("usage") or {}).items():
            if key in usage and isinstance(value, int | float) and not isinstance(value, bool) \
                    and usage[key] is not None:
                usage[key] += value
            elif key == "cost_usd" and value is None:
                usage[key] = None
    return ResumePoint(data, last, state, usage, calls, state_step, note)
