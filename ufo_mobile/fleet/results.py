"""What a batch leaves behind: ``batch.jsonl`` (one line per attempt, written as each ends),
``batch.html`` and the summary lines. ``batch.html`` is a ``report/runs_page.py`` page, as an
evaluation's ``eval.html`` is: the score (tasks finished of all), the batch's facts, and a row per
attempt, the tasks that failed first, each linking its run's ``report.html``.

Text from the runs (reasons, answers) is made printable before it is printed, and escaped on the
page; the page has no script and loads nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ufo_mobile.core.trace.files import append_line, write_atomic
from ufo_mobile.core.trace.writer import dumps
from ufo_mobile.fleet.scheduler import DONE, FAILED, INTERRUPTED, NOT_RUN, Attempt, TaskResult
from ufo_mobile.report import runs_page as rp
from ufo_mobile.report.markup import text
from ufo_mobile.report.setup import setup_of_run
from ufo_mobile.safe_text import printable

JSONL, HTML = "batch.jsonl", "batch.html"
REASON_LIMIT = 200


@dataclass
class BatchInfo:
    """A batch's facts: id, directory, engine, phones, parallelism, when it started and how long it
    took, why it was stopped and which phones were taken out of the pool."""

    batch_id: str
    batch_dir: Path
    engine: str
    phones: list[str]
    parallel: int
    processes: int = 1  # the local engine's worker processes (batch --processes); 1: all in the batch's own
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    duration_seconds: float = 0.0
    stopped: str | None = None  # the reason the batch was stopped (a signal), if it was
    removed: dict[str, str] = field(default_factory=dict)  # phones taken out of the pool, and why

    @property
    def processes_text(self) -> str:
        """``, 4 processes`` after the engine's name when the local engine had worker processes."""
        return f", {self.processes} processes" if self.processes > 1 else ""


def _relative(path: str | None, base: Path) -> str | None:
    if not path:
        return None
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def attempt_record(info: BatchInfo, result: TaskResult, attempt: Attempt) -> dict[str, Any]:
    """The ``batch.jsonl`` line of one attempt; paths relative to the batch directory."""
    o = attempt.outcome
    run_dir = _relative(o.run_dir, info.batch_dir)
    report = f"{run_dir}/report.html" if run_dir and (info.batch_dir / run_dir / "report.html").is_file() else None
    return {"batch_id": info.batch_id, "task": o.task, "task_file": result.task.file, "task_name": result.task.name,
            "attempt": o.attempt, "phone": o.phone, "node": o.node, "run_id": o.run_id, "run_dir": run_dir,
            "report": report, "status": o.status, "reason": o.reason, "answer": o.answer, "steps": o.steps,
            "duration_seconds": o.duration_seconds, "device_error": o.device_error,
            "phone_lost": attempt.phone_lost, "retried": attempt.retried, "interrupted": o.interrupted,
            "prompt_tokens": o.prompt_tokens, "completion_tokens": o.completion_tokens, "cost_usd": o.cost_usd,
            "outcome": attempt_outcome(attempt)}


def attempt_outcome(attempt: Attempt) -> str:
    """success, failed, needs_person, or interrupted (stopped from outside: not a failure of the task)."""
    o = attempt.outcome
    return ("success" if o.ok else "interrupted" if o.interrupted else "needs_person" if o.needs_person
            else "failed")


def append_attempt(info: BatchInfo, result: TaskResult, attempt: Attempt) -> dict[str, Any]:
    """Append the attempt's line to ``batch.jsonl`` and return the record written."""
    record = attempt_record(info, result, attempt)
    append_line(info.batch_dir / JSONL, json.dumps(record, ensure_ascii=False))
    return record


@dataclass(frozen=True)
class Totals:
    """A batch's counts: tasks by final state, attempts, retries and steps."""

    tasks: int
    finished: int
    failed: int
    not_run: int
    retried: int
    attempts: int
    steps: int
    needs_person: int = 0  # of the failed: the last attempt stopped for a person nobody could be
    interrupted: int = 0  # the last attempt was stopped from outside (the batch's own stop): not failed


def totals(results: list[TaskResult]) -> Totals:
    """Count the tasks' final states, attempts, retries and steps."""
    attempts = [a for r in results for a in r.attempts]
    return Totals(len(results), sum(r.state == DONE for r in results), sum(r.state == FAILED for r in results),
                  sum(r.state == NOT_RUN for r in results), sum(a.retried for a in attempts), len(attempts),
                  sum(a.outcome.steps for a in attempts),
                  sum(r.state == FAILED and r.attempts[-1].outcome.needs_person for r in results),
                  sum(r.state == INTERRUPTED for r in results))


def _why(result: TaskResult) -> str:
    if not result.attempts:
        return result.note
    last = result.attempts[-1].outcome
    why = f"{last.status} on {last.phone}: {last.answer or last.reason}"
    return f"{why} ({result.note})" if result.note else why


def summary_lines(info: BatchInfo, results: list[TaskResult]) -> list[str]:
    """The summary printed when the batch ends: the counts, the phones lost, each task that did not
    finish and why, and where the batch directory and report are."""
    t = totals(results)
    rate = f" ({t.steps / info.duration_seconds:.2f} steps/s)" if info.duration_seconds > 0 and t.steps else ""
    lines = [f"batch {info.batch_id}: {t.tasks} task{'s' if t.tasks != 1 else ''} on {len(info.phones)} "
             f"phone{'s' if len(info.phones) != 1 else ''} ({info.engine} engine{info.processes_text})"
             + (f", stopped: {printable(info.stopped, 40)}" if info.stopped else ""),
             f"finished {t.finished}, failed {t.failed}"
             + (f" ({t.needs_person} of them stopped for a person)" if t.needs_person else "")
             + (f", interrupted {t.interrupted} (stopped before they ended, not counted as failed)"
                if t.interrupted else "")
             + f", not run {t.not_run}; retried {t.retried} after a lost phone; "
             f"{t.attempts} attempt{'s' if t.attempts != 1 else ''}, {t.steps} steps in "
             f"{info.duration_seconds:.1f} s{rate}"]
    for name, why in info.removed.items():
        lines.append(f"phone lost: {printable(name, 80)}: {printable(why, REASON_LIMIT)}")
    for result in results:
        if result.state != DONE:
            lines.append(f"  {result.task.label} {printable(result.task.name, 40)}: {result.state}: "
                         f"{printable(_why(result), REASON_LIMIT)}")
    lines += [f"batch directory: {printable(str(info.batch_dir))}",
              f"report: {printable(str(info.batch_dir / HTML))}"]
    return lines


# --- batch.html ------------------------------------------------------------------------------

_TONE = {DONE: rp.OK, FAILED: rp.FAIL}  # interrupted, not run: neither
COLUMNS = ["task", "outcome", "attempt", "phone", "status", "steps", "time", "tokens", "cost", "answer or reason",
           "report"]


def _attempt_row(info: BatchInfo, result: TaskResult, attempt: Attempt) -> rp.Row:
    o = attempt.outcome
    tone = _TONE.get(result.state, rp.OTHER)
    run_dir = Path(o.run_dir) if o.run_dir else None
    link = (rp.link(run_dir / "report.html", info.batch_dir, "report", f"no report ({run_dir.name})")
            if run_dir is not None else '<span class="muted">no run directory</span>')
    notes = [n for n, on in (("phone lost", attempt.phone_lost), ("retried", attempt.retried)) if on]
    status = rp.badge(INTERRUPTED, rp.OTHER) if o.interrupted and not o.ok else rp.badge(
        o.status, rp.OK if o.ok else rp.FAIL)
    cost = "unknown" if o.cost_usd is None else f"${o.cost_usd:.4f}"
    why = text(o.answer or o.reason, REASON_LIMIT) + (
        f' <span class="muted">({", ".join(notes)})</span>' if notes else "")
    cells = [f"{text(result.task.label)} {text(result.task.name, 80)}", rp.badge(result.state, tone),
             str(o.attempt), text(o.phone, 80), status, str(o.steps), rp.nowrap(f"{o.duration_seconds:.1f} s"),
             rp.nowrap(f"{o.prompt_tokens + o.completion_tokens:,}"), rp.nowrap(cost), why, link]
    return rp.Row(tone, cells, key=f"{result.task.label}-a{o.attempt}")


def _task_rows(info: BatchInfo, result: TaskResult) -> list[rp.Row]:
    if result.attempts:
        return [_attempt_row(info, result, attempt) for attempt in result.attempts]
    cells = [f"{text(result.task.label)} {text(result.task.name, 80)}", rp.badge(result.state, rp.OTHER),
             "", "", "", "", "", "", "", text(result.note), ""]
    return [rp.Row(rp.OTHER, cells, key=result.task.label)]


def setups(results: list[TaskResult]) -> list[str]:
    """What the attempts ran with (``report/setup.py``'s line from each ``run.json``), each once."""
    found: dict[str, None] = {}
    for attempt in (a for r in results for a in r.attempts if a.outcome.run_dir):
        try:
            data = json.loads((Path(str(attempt.outcome.run_dir)) / "run.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        line = setup_of_run(data) if isinstance(data, dict) else None
        if line:
            found[line] = None
    return list(found)


def batch_page(info: BatchInfo, results: list[TaskResult]) -> rp.RunsPage:
    """``batch.html``'s content: the score, the batch's facts, a row per attempt with the failures first."""
    t = totals(results)
    headline = (f"{t.finished}/{t.tasks} tasks finished" + (f", {t.failed} failed" if t.failed else "")
                + (f", {t.interrupted} interrupted" if t.interrupted else "")
                + (f", {t.not_run} not run" if t.not_run else ""))
    tone = rp.OK if t.finished == t.tasks else rp.FAIL if t.failed and not t.finished else rp.OTHER
    facts = [("batch", info.batch_id), *(("setup", line) for line in setups(results)),
             ("engine", info.engine + info.processes_text), ("phones", ", ".join(info.phones)),
             ("parallel", str(info.parallel)), ("started", info.started_at),
             ("duration", f"{info.duration_seconds:.1f} s"),
             ("tasks", f"{t.finished} finished, {t.failed} failed, "
                       + (f"{t.needs_person} of them stopped for a person, " if t.needs_person else "")
                       + (f"{t.interrupted} interrupted, " if t.interrupted else "")
                       + f"{t.not_run} not run of {t.tasks}"),
             ("attempts", f"{t.attempts} ({t.retried} retried after a lost phone), {t.steps} steps")]
    if info.stopped:
        facts.append(("stopped", info.stopped))
    facts += [(f"phone lost: {name}", why) for name, why in info.removed.items()]
    rows = [row for result in results for row in _task_rows(info, result)]
    section = rp.Section("Attempts", COLUMNS, rows,
                         note="the tasks that failed first, then those interrupted or not run, then those that "
                              "finished")
    return rp.RunsPage(f"Batch {info.batch_id}", headline, tone, facts, [section],
                       footer=f"Batch directory: {info.batch_dir}")


def render_html(info: BatchInfo, results: list[TaskResult]) -> str:
    """``batch.html``'s HTML text."""
    return rp.render(batch_page(info, results))


def write_html(info: BatchInfo, results: list[TaskResult]) -> Path:
    """Write ``batch.html`` in the batch directory and return its path. Raises ``RunWriteError``
    when it cannot be written."""
    return rp.write(info.batch_dir / HTML, batch_page(info, results))


def write_summary_json(info: BatchInfo, results: list[TaskResult]) -> None:
    """``batch.json``: the batch's facts and each task's final state (for scripts)."""
    t = totals(results)
    data = {"batch_id": info.batch_id, "engine": info.engine, "phones": info.phones, "parallel": info.parallel,
            "processes": info.processes, "started_at": info.started_at, "duration_seconds": info.duration_seconds,
            "stopped": info.stopped,
            "phones_lost": info.removed, **t.__dict__,
            "results": [{"task": r.task.index, "task_file": r.task.file, "task_name": r.task.name, "state": r.state,
                         "attempts": len(r.attempts), "note": r.note} for r in results]}
    write_atomic(info.batch_dir / "batch.json", dumps(data).encode("utf-8"))
