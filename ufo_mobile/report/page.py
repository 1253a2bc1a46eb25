"""The report page: the run's summary, then (for a failed run) why it failed with the final
screen, the timeline (``timeline.py``), the legend of the screenshots' colours and every step
with its screens before and after its action (``figures.py``, ``steps.py``), and where the record
ends.

A failed run puts its reason and final screenshot first: that is what a reader opens it for. A
run that was cut off, interrupted or is still going says so at the top and where its steps end.
"""

from __future__ import annotations

from typing import Any

from ufo_mobile.report import markup as m
from ufo_mobile.report.figures import Screens, after_screens, legend, render_figures
from ufo_mobile.report.images import mark_of, picture
from ufo_mobile.report.load import Plan, RunView
from ufo_mobile.report.setup import setup_of_run
from ufo_mobile.report.steps import render_step
from ufo_mobile.report.style import stylesheet
from ufo_mobile.report.timeline import outcome_words, render_timeline


def render_body(run: RunView) -> str:
    """Everything inside ``<main>``."""
    parts = [_title(run)]
    if run.failed:
        parts.append(_failure(run))  # first: what a reader opens a failed run's report for
    parts.append(_summary(run))
    if run.problems:
        parts.append('<div class="problems">' + "".join(f"<p>{m.text(p)}</p>" for p in run.problems) + "</div>")
    parts.append(render_timeline(run))
    parts.append('<h2 id="steps">Steps</h2>' + legend() + _steps(run))
    if not run.steps:
        parts.append('<p class="muted">No step was recorded.</p>')
    parts.append(_ending(run))
    parts.append(f'<footer>Run directory: {m.text(run.run_dir)}</footer>')
    return "\n".join(parts)


def render_document(run: RunView, body: str, font_css: str, families: list[str]) -> str:
    title = m.text(f"{run.status}: {run.data.get('task', run.run_dir.name)}", 200)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
            "font-src data:; style-src 'unsafe-inline'\">"
            f"<title>{title}</title><style>{font_css}\n{stylesheet(families)}</style></head>"
            f"<body><main>\n{body}\n</main></body></html>\n")


def _title(run: RunView) -> str:
    data = run.data
    recorded = sum(1 for s in run.steps if s.recorded)
    unrecorded = len(run.steps) - recorded
    how = outcome_words(run)
    outcome = (f'<p class="outcome"><span id="outcome" class="badge big {m.status_class(run.status)}" '
               f'data-outcome="{m.text(run.status, 40)}">{m.text(run.status, 40)}</span> '
               + (f'<span class="warn">{m.text(how)}</span> ' if how else "")
               + f'<span id="step-count" data-steps="{recorded}">{_count_words(data, recorded)}'
               + (f" (+{unrecorded} not recorded)" if unrecorded else "") + "</span>"
               + _failed_badge(run.actions_failed) + "</p>")
    task = m.text(data.get("task", "(task unknown: run.json unreadable)"))
    return f'<header><h1 id="task">{task}</h1>{outcome}</header>'


def _count_words(data: dict[str, Any], turns: int) -> str:
    """"7 steps", or in reasoning mode "4 steps (7 turns)": the steps of the budget (actions and the
    answer) and the turns recorded, as the terminal's summary line says them."""
    used = data.get("steps_used")
    steps = int(used) if isinstance(used, int) else turns
    words = f"{steps} step{'s' if steps != 1 else ''}"
    return words if steps == turns else f"{words} ({turns} turn{'s' if turns != 1 else ''})"


def _steps(run: RunView) -> str:
    """Every step's article, a marker before the first step after each break of a resumed run."""
    breaks = _breaks(run)
    afters = after_screens(run)
    screens = Screens()
    out = []
    previous: Plan | None = None
    for step in run.steps:
        figures = render_figures(run, step, mark_of(step.action, step.controls), afters.get(step.number), screens)
        out.append(breaks.get(step.number, "") + render_step(step, figures, previous))
        previous = step.plan or previous
    return "".join(out)


def _failed_badge(failed: int) -> str:
    """Beside the outcome: how many actions failed, so a FINISH with failed actions does not read as clean."""
    if failed <= 0:
        return ""
    return (f' <span id="actions-failed" class="badge warn" data-failed="{failed}">'
            f'{failed} action{"s" if failed != 1 else ""} failed</span>')


def _resumptions(run: RunView) -> list[dict[str, Any]]:
    found = run.data.get("resumed")
    return [b for b in found if isinstance(b, dict)] if isinstance(found, list) else []


def _breaks(run: RunView) -> dict[int, str]:
    """A marker before the first step after each break of a resumed run (``run --resume``)."""
    marks: dict[int, str] = {}
    for item in _resumptions(run):
        at = int(item.get("at_step") or 0)
        how = f'{m.text(item.get("previous_status") or "?")}: {m.text(item.get("previous_reason") or "", 300)}'
        marks[at + 1] = (marks.get(at + 1, "") + f'<div class="break">The run stopped after step {at} ({how}) and '
                         f'was resumed at {m.text(item.get("at") or "?")}.</div>')
    return marks


def _summary(run: RunView) -> str:
    data = run.data
    recorded = sum(1 for s in run.steps if s.recorded)
    facts: list[tuple[str, str]] = []
    if data.get("reason"):
        facts.append(("Reason", m.pre(data["reason"], "inline")))
    if data.get("answer") and data.get("answer") != data.get("reason"):
        facts.append(("Answer", m.pre(data["answer"], "inline")))
    elif data.get("answer"):
        facts.append(("Answer", '<span class="muted">(the reason above)</span>'))
    if data.get("output") is not None:
        facts.append(("Output", m.pre(m.pretty_json(data["output"]))))
    setup = setup_of_run(data)
    facts.append(("Mode", m.text(run.mode)))
    if setup:  # the same words as the terminal's first line
        facts.append(("Ran with", m.text(setup)))
    facts += [("Run", m.text(data.get("run_id", run.run_dir.name))),
              ("Started", m.text(data.get("started_at", "?"))),
              ("Duration", m.seconds(data.get("duration_seconds")) if "duration_seconds" in data else "unknown"),
              ("Steps", m.text(_count_words(data, int(data.get("steps", recorded) or 0)))),
              ("Tokens", f"{m.count(data.get('prompt_tokens', 0))} prompt ({m.count(data.get('cached_tokens', 0))} "
                         f"cached) + {m.count(data.get('completion_tokens', 0))} completion"),
              ("Model calls", m.count(data.get("model_calls", 0))),
              ("Cost", m.cost(data.get("cost_usd")) if "cost_usd" in data else "unknown")]
    roles = data.get("usage_by_role")
    if isinstance(roles, dict) and len(roles) > 1:  # a model per role: each one's share
        facts.append(("By role", "<br>".join(
            f"{m.text(str(role))} ({m.text(str(u.get('model', '?')))}): {m.count(u.get('calls', 0))} calls, "
            f"{m.count(u.get('prompt_tokens', 0))} prompt + {m.count(u.get('completion_tokens', 0))} completion, "
            f"{m.cost(u.get('cost_usd'))}" for role, u in roles.items() if isinstance(u, dict))))
    if data.get("outcome") == "needs_person":
        facts.append(("Outcome", m.text("needs a person (nobody could answer, take over or approve)")))
    if data.get("signal"):
        facts.append(("Signal", m.text(data["signal"])))
    resumed = _resumptions(run)
    if resumed:
        facts.append(("Resumed", m.text(", ".join(f"after step {b.get('at_step', '?')}" for b in resumed))))
    settings = data.get("settings")
    extra = m.details("Settings (run.json)", m.pre(m.pretty_json(settings))) if isinstance(settings, dict) else ""
    return f'<section id="summary">{m.rows(facts)}{extra}</section>'


def _failure(run: RunView) -> str:
    """Why the run failed and the last screen, before everything else."""
    shot, what = run.final_png, "the screen when the run ended (final.png)"
    if shot is None:
        last = next((s.image for s in reversed(run.steps) if s.image is not None), None)
        shot, what = last, "the last step's screenshot (there is no final.png)"
    image = picture(shot) if shot is not None else None
    href = shot.relative_to(run.run_dir).as_posix() if shot is not None and shot.is_relative_to(run.run_dir) else ""
    img = (f'<img src="{image.uri}" width="{image.width}" height="{image.height}" alt="final screen">'
           if image is not None else "")
    if img and href:
        img = f'<a class="full" href="{m.text(href)}" title="open the full-size image">{img}</a>'
    figure = f'<figure class="shot final">{img}<figcaption>{what}</figcaption></figure>' if img else ""
    reason = run.data.get("reason") or "(no reason recorded)"
    end = run.steps[-1] if run.steps else None
    where = (f'<p>Last step: <a href="#step-{end.number}">step {end.number}</a> '
             f'({m.text(end.get("agent", "?"), 80)}, {m.text(end.get("status", "?"), 40)})</p>') if end else ""
    return (f'<section id="failure" class="panel failure"><h2>Why it failed</h2><div class="cols">{figure}'
            f'<div class="info"><p class="fail-text">{m.pre(reason, "inline")}</p>{where}</div></div></section>')


def _ending(run: RunView) -> str:
    """Where the record ends, visibly, for a run that did not end by itself."""
    data: dict[str, Any] = run.data
    count = sum(1 for s in run.steps if s.recorded)
    if run.running:
        return (f'<div id="break" class="break running">The run is still going (process '
                f'{m.text(data.get("pid", "?"))}): {count} step(s) so far. Make the report again when it ends.</div>')
    how = outcome_words(run)
    if not how and run.status != "UNKNOWN":
        return ""
    reason = m.text(data.get("reason") or "run.json does not say how the run ended", 500)
    return f'<div id="break" class="break">The run stopped here ({m.text(how or "unknown")}): {reason}</div>'
