"""An evaluation's pages: ``eval.html`` in the evaluation's directory, and the page of ``eval --compare A B``.

``eval.html`` gives the score (success rate, pass@k, by kind, what was interrupted), the setup (mode,
phone, model: ``report/setup.py``'s line), the totals, and a row per run with the failures first:
the task and seed, the verdict, the check's explanation and how the run ended, steps of the
budget, time, tokens, cost, and a link to the run's ``report.html`` (under ``runs/``). The
comparison page puts the tasks that got worse first, then those that got better, each with the
runs of both sides linked. Both are ``report/runs_page.py`` pages: self-contained, no script, and
relative links only to reports that exist.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ufo_mobile.eval.results import SUMMARY_FILE, Comparison, Summary, TaskChange, Totals, is_interrupted
from ufo_mobile.report import markup as m
from ufo_mobile.report import runs_page as rp

PAGE_FILE = "eval.html"
RUN_COLUMNS = ["task", "verdict", "why", "steps", "time", "tokens", "cost", "report"]


def report_of(eval_dir: Path, record: Mapping[str, Any]) -> Path:
    """Where the run's ``report.html`` is: under the evaluation's ``runs/``, else its recorded directory."""
    inside = eval_dir / "runs" / str(record.get("run_id") or "-") / "report.html"
    recorded = record.get("run_dir")
    if inside.is_file() or not recorded:
        return inside
    return Path(str(recorded)) / "report.html"


def verdict(record: Mapping[str, Any]) -> tuple[str, str]:
    """The run's verdict word and tone: an interrupted run was not judged."""
    if is_interrupted(record):
        return "interrupted", rp.OTHER
    return ("pass", rp.OK) if record.get("passed") else ("FAIL", rp.FAIL)


def ending(record: Mapping[str, Any]) -> str:
    """How the run ended, in a few words: ``FINISH: the answer``, ``FAIL: the reason``."""
    status = str(record.get("status") or "?")
    if is_interrupted(record):
        return f"interrupted: {record.get('reason') or ''}"
    said = record.get("answer") if status == "FINISH" else record.get("reason")
    return f"{status}: {said}" if said else status


def _cost(value: Any) -> str:
    return "unknown" if value is None else f"${float(value):.4f}"


def _tokens(record: Mapping[str, Any]) -> str:
    return f"{int(record.get('prompt_tokens') or 0) + int(record.get('completion_tokens') or 0):,}"


def run_row(record: Mapping[str, Any], eval_dir: Path, page_dir: Path) -> rp.Row:
    """A run's row of ``eval.html``."""
    word, tone = verdict(record)
    task = f"{record['task_id']} s{record.get('seed', 0)}"
    why = "not judged: the run did not end" if tone == rp.OTHER else str(record.get("why") or "")
    if record.get("outcome") == "needs_person":
        why = f"{why} (it stopped for a person)"
    run_id = str(record.get("run_id") or "")
    cells = [f"{m.text(task, 200)}<br><span class=\"muted small\">{m.text(record.get('kind', ''), 40)}</span>",
             rp.badge(word, tone),
             f"{m.text(why)}<br><span class=\"muted small\">{m.text(ending(record), 600)}</span>",
             rp.nowrap(f"{m.count(record.get('steps'))}/{m.count(record.get('budget'))}"),
             rp.nowrap(m.text(m.seconds(record.get("duration_seconds")))), rp.nowrap(m.text(_tokens(record))),
             rp.nowrap(m.text(_cost(record.get("cost_usd")))),
             rp.link(report_of(eval_dir, record), page_dir, "report", f"no report ({run_id or 'no run'})")]
    return rp.Row(tone, cells, key=task)


def headline(totals: Totals) -> tuple[str, str]:
    """The score in one line, and its tone (all passed, none, some)."""
    if not totals.ended:
        return f"no run ended ({totals.interrupted} interrupted)", rp.OTHER
    of = f"{totals.ended} runs that ended" if totals.interrupted else f"{totals.ended} runs"
    line = f"{totals.passed}/{of} passed ({totals.success_rate:.1%})"
    tone = rp.OK if totals.passed == totals.ended else rp.FAIL if totals.passed == 0 else rp.OTHER
    return line + (f"; {totals.interrupted} interrupted, not counted" if totals.interrupted else ""), tone


def score_facts(summary: Summary) -> list[tuple[str, str]]:
    """pass@k, by kind, what stopped for a person, and the totals."""
    t = summary.totals
    facts = []
    if summary.pass_at:
        facts.append(("pass@k", "; ".join(f"pass@{k} {v:.3f}" for k, v in summary.pass_at.items())))
    facts.append(("by kind", ", ".join(f"{kind} {k.passed}/{k.ended}"
                                       + (f" ({k.interrupted} interrupted)" if k.interrupted else "")
                                       for kind, k in summary.by_kind.items())))
    if t.needs_person:
        facts.append(("stopped for a person", f"{t.needs_person} of the runs that did not pass"))
    facts.append(("totals", f"{summary.tasks} tasks, {t.runs} runs, {t.steps} steps, {t.seconds:.1f} s, "
                            f"{t.prompt_tokens:,} prompt + {t.completion_tokens:,} completion tokens, "
                            f"cost {_cost(t.cost_usd)}"))
    return facts


def eval_page(records: Sequence[Mapping[str, Any]], summary: Summary, meta: Mapping[str, Any],
              eval_dir: Path) -> rp.RunsPage:
    """``eval.html``'s content: ``meta`` as ``summary.json`` keeps it (suite, setup, model, mode, ...)."""
    line, tone = headline(summary.totals)
    facts = [("setup", str(meta.get("setup") or f"{meta.get('mode', '?')} · model {meta.get('model', '?')}")),
             ("suite", ", ".join(str(s) for s in meta.get("suite") or [])),
             ("runs", f"{len(records)} of {meta.get('planned_runs', len(records))} planned "
                      f"(repeat {meta.get('repeat', 1)}, first seed {meta.get('seed', 0)})"),
             *score_facts(summary)]
    if meta.get("stopped"):
        facts.append(("stopped", str(meta["stopped"])))
    failed = sum(1 for r in records if verdict(r)[1] == rp.FAIL)
    section = rp.Section("Runs", RUN_COLUMNS, [run_row(r, eval_dir, eval_dir) for r in records],
                         note=f"{failed} failed first, then the runs that did not end, then those that passed")
    return rp.RunsPage(f"Evaluation {eval_dir.name}", line, tone, [f for f in facts if f[1]], [section],
                       footer=f"Evaluation directory: {eval_dir}")


def write_eval_page(eval_dir: Path, records: Sequence[Mapping[str, Any]], summary: Summary,
                    meta: Mapping[str, Any]) -> Path:
    """Write ``eval.html``. Raises ``RunWriteError`` when it cannot be written."""
    return rp.write(eval_dir / PAGE_FILE, eval_page(records, summary, meta, eval_dir))


# --- eval --compare A B ------------------------------------------------------------------------


def results_dir(path: Path) -> Path:
    """The evaluation's directory of a ``--compare`` argument (the directory, or its ``results.jsonl``)."""
    return path if path.is_dir() else path.parent


def compare_page_path(a: Path, b: Path) -> Path:
    """Where the comparison page goes: in B's directory, named after A's."""
    return results_dir(b) / f"compare-{results_dir(a).resolve().name}.html"


def read_meta(eval_dir: Path) -> dict[str, Any]:
    """The evaluation's ``summary.json`` (its setup, model, mode), or nothing when it is missing or torn."""
    try:
        data = json.loads((eval_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _setup(meta: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    if meta.get("setup"):
        return str(meta["setup"])
    first = records[0] if records else {}
    return f"{first.get('mode', '?')} · model {first.get('model', '?')}"


def change_word(change: TaskChange) -> tuple[str, str, int]:
    """The change's word, tone and place: worse first, then better, then the rest."""
    if change.a is None or change.b is None:
        return ("only in A" if change.b is None else "only in B"), rp.OTHER, 2
    if change.delta is None:
        return "no run ended", rp.OTHER, 2
    if change.delta < 0:
        return "worse", rp.FAIL, 0
    return ("better", rp.OK, 1) if change.delta > 0 else ("same", rp.OK, 3)


def _rate(t: Totals | None) -> str:
    if t is None:
        return "-"
    return f"{t.passed}/{t.ended}" + (f" (+{t.interrupted} interrupted)" if t.interrupted else "")


def _runs_links(records: Sequence[Mapping[str, Any]], eval_dir: Path, page_dir: Path) -> str:
    """A task's runs on one side: each its verdict, linking its report."""
    if not records:
        return '<span class="muted">-</span>'
    parts = []
    for r in records:
        word, tone = verdict(r)
        label = f"s{r.get('seed', 0)} {word}"
        parts.append(rp.nowrap(f"{rp.dot(tone)} "
                               + rp.link(report_of(eval_dir, r), page_dir, label, f"{label} (no report)")))
    return "<br>".join(parts)


def compare_page(comparison: Comparison, a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]],
                 a_dir: Path, b_dir: Path, page_dir: Path) -> rp.RunsPage:
    """The comparison page: A's and B's records and directories, the page written in ``page_dir``."""
    sa, sb = comparison.a.totals, comparison.b.totals
    points = (sb.success_rate - sa.success_rate) * 100
    line = f"success rate: A {sa.success_rate:.1%} -> B {sb.success_rate:.1%} ({points:+.1f} points)"
    tone = rp.FAIL if points < 0 else rp.OK if points > 0 else rp.OTHER
    tokens_a, tokens_b = sa.prompt_tokens + sa.completion_tokens, sb.prompt_tokens + sb.completion_tokens
    facts = [("A", f"{a_dir} · {_setup(read_meta(a_dir), a)}"), ("B", f"{b_dir} · {_setup(read_meta(b_dir), b)}"),
             ("tasks", f"{len(comparison.worse)} worse, {len(comparison.better)} better, "
                       f"{len(comparison.tasks)} in all"),
             ("runs", f"A {_rate(sa)}, B {_rate(sb)} passed"),
             ("tokens", f"A {tokens_a:,} -> B {tokens_b:,}"),
             ("cost", f"A {_cost(sa.cost_usd)} -> B {_cost(sb.cost_usd)}")]
    for k in sorted(set(comparison.a.pass_at) & set(comparison.b.pass_at)):
        facts.append((f"pass@{k}", f"A {comparison.a.pass_at[k]:.3f} -> B {comparison.b.pass_at[k]:.3f}"))
    rows = []
    for change in comparison.tasks:
        word, row_tone, rank = change_word(change)
        runs_a = [r for r in a if str(r["task_id"]) == change.task_id]
        runs_b = [r for r in b if str(r["task_id"]) == change.task_id]
        rows.append(rp.Row(row_tone, [m.text(change.task_id, 200), rp.badge(word, row_tone),
                                      m.text(_rate(change.a)), m.text(_rate(change.b)),
                                      _runs_links(runs_a, a_dir, page_dir), _runs_links(runs_b, b_dir, page_dir)],
                           key=change.task_id, rank=rank))
    section = rp.Section("Tasks", ["task", "change", "A passed", "B passed", "A runs", "B runs"], rows,
                         note="the tasks that got worse first, then those that got better")
    return rp.RunsPage(f"Evaluation {b_dir.name} against {a_dir.name}", line, tone, facts, [section])


def write_compare_page(comparison: Comparison, a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]],
                       a_path: Path, b_path: Path) -> Path:
    """Write the comparison page in B's directory (``compare_page_path``). Raises ``RunWriteError``."""
    path = compare_page_path(a_path, b_path)
    return rp.write(path, compare_page(comparison, a, b, results_dir(a_path), results_dir(b_path), path.parent))
