"""An evaluation's results: one JSON line per run, the scores read from them, and two evaluations side by side.

``results.jsonl`` holds one record per run of a task variant (``TaskOutcome.to_json()`` plus the
repeat, the model and the mode), written as each run ends, so an evaluation that is cut off keeps
what it did. ``summarize`` scores a list of records; ``compare`` puts two evaluations task by task.

Scores:

- success rate: the runs whose check passed, over the runs that ended. A run that was interrupted
  (``"interrupted": true`` in its record: stopped by a signal, or cut off by a disk that filled up
  under it) did not end: it is neither a pass nor a failure of the agent, and is counted apart;
- pass@k (for each task, then averaged over the tasks with a run that ended): the chance that at
  least one of k runs of the task passes, by the unbiased estimator of Chen et al. (2021),
  ``1 - C(n-c, k) / C(n, k)`` for a task whose runs ended ``n`` times of which ``c`` passed; pass@1
  is the mean per-task success rate;
- totals (of every run, interrupted or not): steps, time, prompt and completion tokens, and cost
  (``None`` as soon as one run's cost is unknown: an unknown price is not $0).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import Any

from ufo_mobile.core.trace.files import LineAppender, SpaceReserve, write_atomic
from ufo_mobile.errors import ConfigError, RunWriteError

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
RESERVE_FILE = ".reserve"
KINDS = ("feasible", "retrieval", "impossible")
_REQUIRED = ("task_id", "passed", "steps", "status")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs drawn from ``n`` (``c`` of them passed) passes."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@{k} needs 0 < k <= n and 0 <= c <= n (n={n}, c={c})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass
class Totals:
    """The counts and sums over some run records: runs, passed, interrupted, steps, time, tokens and
    cost (``None`` once a run's cost is unknown)."""

    runs: int = 0
    passed: int = 0  # of the runs that ended
    needs_person: int = 0  # runs that did not pass because they stopped for a person nobody could be
    interrupted: int = 0  # runs that did not end (a signal, a full disk): neither passed nor failed
    steps: int = 0
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one run record."""
        self.runs += 1
        if is_interrupted(record):
            self.interrupted += 1
        else:
            self.passed += bool(record.get("passed"))
            self.needs_person += not record.get("passed") and record.get("outcome") == "needs_person"
        self.steps += int(record.get("steps") or 0)
        self.seconds += float(record.get("duration_seconds") or 0.0)
        self.prompt_tokens += int(record.get("prompt_tokens") or 0)
        self.completion_tokens += int(record.get("completion_tokens") or 0)
        cost = record.get("cost_usd")
        self.cost_usd = None if self.cost_usd is None or cost is None else self.cost_usd + float(cost)

    @property
    def ended(self) -> int:
        """The runs that ended (the success rate's denominator)."""
        return self.runs - self.interrupted

    @property
    def success_rate(self) -> float:
        """The runs that passed over the runs that ended; 0.0 when none ended."""
        return self.passed / self.ended if self.ended else 0.0


def is_interrupted(record: Mapping[str, Any]) -> bool:
    """Whether the run did not end: it was stopped from outside, or cut off by a failed write."""
    return bool(record.get("interrupted"))


@dataclass
class Summary:
    """The scores of a list of run records."""

    totals: Totals
    by_kind: dict[str, Totals]
    pass_at: dict[int, float]  # k -> pass@k over the tasks with a run that ended
    tasks: int
    runs_per_task: int  # the fewest runs that ended any such task had (pass@k is given up to it)
    per_task: dict[str, Totals] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The scores as ``summary.json`` holds them (rates and costs rounded; no per-task scores)."""
        def totals(t: Totals) -> dict[str, Any]:
            return {"runs": t.runs, "ended": t.ended, "interrupted": t.interrupted, "passed": t.passed,
                    "needs_person": t.needs_person, "success_rate": round(t.success_rate, 4), "steps": t.steps,
                    "seconds": round(t.seconds, 3), "prompt_tokens": t.prompt_tokens,
                    "completion_tokens": t.completion_tokens,
                    "cost_usd": None if t.cost_usd is None else round(t.cost_usd, 6)}

        return {"tasks": self.tasks, "runs_per_task": self.runs_per_task, **totals(self.totals),
                "pass_at": {f"pass@{k}": round(v, 4) for k, v in self.pass_at.items()},
                "by_kind": {kind: totals(t) for kind, t in self.by_kind.items()}}


def summarize(records: Sequence[Mapping[str, Any]]) -> Summary:
    """Score run records: the totals, overall, per kind and per task, and pass@k for k = 1 and for
    k = the fewest runs that ended of any task."""
    totals = Totals()
    by_kind = {kind: Totals() for kind in KINDS}
    per_task: dict[str, Totals] = {}
    for record in records:
        totals.add(record)
        by_kind.setdefault(str(record.get("kind", "feasible")), Totals()).add(record)
        per_task.setdefault(str(record["task_id"]), Totals()).add(record)
    scored = [t for t in per_task.values() if t.ended]  # a task whose every run was interrupted has no score
    fewest = min((t.ended for t in scored), default=0)
    ks = sorted({1, fewest}) if fewest else []
    pass_at = {k: sum(pass_at_k(t.ended, t.passed, k) for t in scored) / len(scored) for k in ks}
    return Summary(totals, {k: t for k, t in by_kind.items() if t.runs}, pass_at, len(per_task), fewest, per_task)


class ResultsWriter:
    """Appends run records to ``results.jsonl`` as runs end (one whole line each, on disk before
    ``write`` returns), as a run writes its own directory: a small reserve file set aside at the
    start is given back when a write fails (a full disk), so the line is tried once more and the
    summary still fits; a line that does not fit is cut back off, never left half-written.

    Raises:
        ConfigError: the directory cannot be written at the start (nothing is left behind then).
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / RESULTS_FILE
        made = not directory.exists()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._reserve = SpaceReserve(directory / RESERVE_FILE)
            self._lines = LineAppender(self.path)
        except (OSError, RunWriteError) as exc:
            if made:
                shutil.rmtree(directory, ignore_errors=True)
            why = str(exc) if isinstance(exc, RunWriteError) else f"cannot write {directory}: {exc.strerror}"
            raise ConfigError(f"cannot write the results: {why}", key="logs.dir") from exc

    def write(self, record: Mapping[str, Any]) -> None:
        """Append the record's line.

        Raises:
            RunWriteError: it did not fit even with the reserve given back.
        """
        line = json.dumps(record, ensure_ascii=False, default=str)
        try:
            self._lines.append(line)
        except RunWriteError:
            self._reserve.release()
            self._lines.append(line)

    def close(self) -> None:
        """Close ``results.jsonl`` and give back the reserve file."""
        self._lines.close()
        self._reserve.release()


def write_summary(directory: Path, summary: Summary, meta: Mapping[str, Any]) -> Path:
    """``summary.json``, whole or not at all. Raises ``RunWriteError`` when it cannot be written."""
    path = directory / SUMMARY_FILE
    write_atomic(path, (json.dumps({**meta, **summary.to_json()}, indent=2, ensure_ascii=False) + "\n").encode())
    return path


def read_results(path: Path) -> list[dict[str, Any]]:
    """The run records of an evaluation: its ``results.jsonl``, or the directory holding it.

    Raises:
        ConfigError: the file is missing, or a line is not a run record (naming the line).
    """
    file = path / RESULTS_FILE if path.is_dir() else path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"cannot read the results: {why}", path=str(file)) from exc
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"line {number}: not JSON ({exc.msg})", path=str(file)) from None
        missing = [key for key in _REQUIRED if not isinstance(record, dict) or key not in record]
        if missing:
            raise ConfigError(f"line {number}: not a run record (no {', '.join(missing)})", path=str(file))
        records.append(record)
    if not records:
        raise ConfigError("no run records in the file", path=str(file))
    return records


@dataclass
class TaskChange:
    """One task in two evaluations: its totals in each (``None`` where it was not run)."""

    task_id: str
    a: Totals | None
    b: Totals | None

    @property
    def delta(self) -> float | None:
        """The change in success rate from ``a`` to ``b``; None unless both have a run that ended."""
        if self.a is None or self.b is None or not self.a.ended or not self.b.ended:
            return None
        return self.b.success_rate - self.a.success_rate


@dataclass
class Comparison:
    """Two evaluations' scores and their tasks side by side (``compare`` builds it)."""

    a: Summary
    b: Summary
    tasks: list[TaskChange]

    @property
    def better(self) -> list[TaskChange]:
        """The tasks whose success rate went up."""
        return [t for t in self.tasks if (t.delta or 0) > 0]

    @property
    def worse(self) -> list[TaskChange]:
        """The tasks whose success rate went down."""
        return [t for t in self.tasks if (t.delta or 0) < 0]


def compare(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]]) -> Comparison:
    """Two evaluations task by task (a task run in only one of them has ``None`` on the other side)."""
    sa, sb = summarize(list(a)), summarize(list(b))
    ids = list(dict.fromkeys([*sa.per_task, *sb.per_task]))
    return Comparison(sa, sb, [TaskChange(i, sa.per_task.get(i), sb.per_task.get(i)) for i in ids])
