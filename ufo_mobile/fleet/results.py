"""What a batch leaves behind: ``batch.jsonl`` (one line per attempt, written as each ends),
``batch.html`` (one self-contained page linking every run's ``report.html``) and the summary lines.

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
from ufo_mobile.report.markup import status_class, text
from ufo_mobile.safe_text import printable

JSONL, HTML = "batch.jsonl", "batch.html"
REASON_LIMIT = 200


@dataclass
class BatchInfo:
    batch_id: str
    batch_dir: Path
    engine: str
    phones: list[str]
    parallel: int
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    duration_seconds: float = 0.0
    stopped: str | None = None  # the reason the batch was stopped (a signal), if it was
    removed: dict[str, str] = field(default_factory=dict)  # phones taken out of the pool, and why


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
    record = attempt_record(info, result, attempt)
    append_line(info.batch_dir / JSONL, json.dumps(record, ensure_ascii=False))
    return record


@dataclass(frozen=True)
class Totals:
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
    t = totals(results)
    rate = f" ({t.steps / info.duration_seconds:.2f} steps/s)" if info.duration_seconds > 0 and t.steps else ""
    lines = [f"batch {info.batch_id}: {t.tasks} task{'s' if t.tasks != 1 else ''} on {len(info.phones)} "
             f"phone{'s' if len(info.phones) != 1 else ''} ({info.engine} engine)"
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

_CSS = """
body { margin: 0; font-family: system-ui, sans-serif; color: #1f2328; font-size: 15px; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 22px; margin: 0 0 10px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 10px 4px 0; border-bottom: 1px solid #eaeef2; vertical-align: top; }
th { color: #656d76; font-weight: 600; }
td.why { overflow-wrap: anywhere; max-width: 40em; }
table.facts { width: auto; margin-bottom: 18px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  color: #fff; background: #656d76; white-space: nowrap; }
.badge.ok { background: #1a7f37; } .badge.fail { background: #cf222e; } .badge.running { background: #9a6700; }
.muted { color: #656d76; }
"""


_STATE_CLASS = {DONE: "FINISH", FAILED: "FAIL"}  # interrupted, not run: grey


def _badge(word: str, status: str | None = None) -> str:
    return f'<span class="badge {status_class(status or word)}">{text(word, 20)}</span>'


def _attempt_row(info: BatchInfo, result: TaskResult, attempt: Attempt, first: bool) -> str:
    o = attempt.outcome
    record = attempt_record(info, result, attempt)
    link = (f'<a href="{text(record["report"])}">report</a>' if record["report"]
            else text(record["run_dir"] or "no run directory"))
    notes = [n for n, on in (("phone lost", attempt.phone_lost), ("retried", attempt.retried)) if on]
    span = len(result.attempts)
    state = _badge(result.state, _STATE_CLASS.get(result.state))
    task_cells = (f'<td rowspan="{span}">{text(result.task.label)} {text(result.task.name, 80)}</td>'
                  f'<td rowspan="{span}">{state}</td>') if first else ""
    status = _badge(INTERRUPTED) if o.interrupted and not o.ok else _badge(o.status)
    return (f"<tr>{task_cells}<td>{o.attempt}</td><td>{text(o.phone, 80)}</td><td>{status}</td>"
            f"<td>{o.steps}</td><td>{o.duration_seconds:.1f} s</td>"
            f'<td class="why">{text(o.answer or o.reason, REASON_LIMIT)}'
            f'{" <span class=muted>(" + ", ".join(notes) + ")</span>" if notes else ""}</td><td>{link}</td></tr>')


def render_html(info: BatchInfo, results: list[TaskResult]) -> str:
    t = totals(results)
    facts = [("batch", info.batch_id), ("engine", info.engine), ("phones", ", ".join(info.phones)),
             ("parallel", str(info.parallel)), ("started", info.started_at),
             ("duration", f"{info.duration_seconds:.1f} s"),
             ("tasks", f"{t.finished} finished, {t.failed} failed, "
                       + (f"{t.interrupted} interrupted, " if t.interrupted else "")
                       + f"{t.not_run} not run of {t.tasks}"),
             ("attempts", f"{t.attempts} ({t.retried} retried after a lost phone), {t.steps} steps")]
    if info.stopped:
        facts.append(("stopped", info.stopped))
    facts += [(f"phone lost: {name}", why) for name, why in info.removed.items()]
    fact_rows = "".join(f"<tr><th>{text(k)}</th><td>{text(v, 2000)}</td></tr>" for k, v in facts)
    rows = []
    for result in results:
        if not result.attempts:
            rows.append(f"<tr><td>{text(result.task.label)} {text(result.task.name, 80)}</td>"
                        f"<td>{_badge(NOT_RUN)}</td><td colspan=6 class=why>{text(result.note)}</td>"
                        "<td></td></tr>")
        for n, attempt in enumerate(result.attempts):
            rows.append(_attempt_row(info, result, attempt, n == 0))
    head = ("<tr><th>task</th><th>outcome</th><th>attempt</th><th>phone</th><th>status</th><th>steps</th>"
            "<th>time</th><th>answer or reason</th><th>run</th></tr>")
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>batch {text(info.batch_id)}</title><style>{_CSS}</style></head><body><main>"
            f"<h1>Batch {text(info.batch_id)}</h1><table class=facts>{fact_rows}</table>"
            f"<table>{head}{''.join(rows)}</table></main></body></html>\n")


def write_html(info: BatchInfo, results: list[TaskResult]) -> Path:
    path = info.batch_dir / HTML
    write_atomic(path, render_html(info, results).encode("utf-8"))
    return path


def write_summary_json(info: BatchInfo, results: list[TaskResult]) -> None:
    """``batch.json``: the batch's facts and each task's final state (for scripts)."""
    t = totals(results)
    data = {"batch_id": info.batch_id, "engine": info.engine, "phones": info.phones, "parallel": info.parallel,
            "started_at": info.started_at, "duration_seconds": info.duration_seconds, "stopped": info.stopped,
            "phones_lost": info.removed, **t.__dict__,
            "results": [{"task": r.task.index, "task_file": r.task.file, "task_name": r.task.name, "state": r.state,
                         "attempts": len(r.attempts), "note": r.note} for r in results]}
    write_atomic(info.batch_dir / "batch.json", dumps(data).encode("utf-8"))
