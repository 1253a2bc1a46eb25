"""The report's timeline: one row per step with when it ran (its start, as an offset from the run's
start, and its duration, drawn as a bar on the run's time axis), which agent took it and how it
ended, what it did, and its tokens and cost, then the run's totals; the state machines' raw
transitions (``run.log``) follow, folded.

A step's duration is the sum of its phases (``timings``); its end is the time of the first
transition its agent logged for it, so its start is that end less the duration. A run without
those times (an older one, a log lost) shows the durations only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ufo_mobile.report import markup as m
from ufo_mobile.report.load import RunView, StepView, Transition

ACTION_CHARS = 90  # of an action shown in its row
AGENT_COLOURS = 6  # agents get the classes agent-0 .. agent-5, in the order they first act


def render_timeline(run: RunView) -> str:
    """The timeline section: the steps' table, then the transitions, folded."""
    head = '<h2 id="timeline">Timeline</h2>'
    if not run.steps:
        steps = '<p class="muted">No step was recorded.</p>'
    else:
        steps = _steps_table(run)
    return head + steps + _transitions(run)


def _times(run: RunView) -> dict[int, float]:
    """Each step's end, in seconds from the run's start, where run.log says it."""
    start = _parse(run.data.get("started_at"))
    if start is None:
        return {}
    ends: dict[int, float] = {}
    by_number = {s.number: str(s.get("agent", "")) for s in run.steps}
    for t in run.transitions:
        at = _parse(t.time)
        if t.step is None or t.step in ends or at is None or t.source == "NONE":
            continue
        if by_number.get(t.step) in ("", t.agent):
            ends[t.step] = (at - start).total_seconds()
    return ends


def _parse(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _steps_table(run: RunView) -> str:
    ends = _times(run)
    durations = {s.number: sum(s.timings.values()) for s in run.steps}
    total = run.data.get("duration_seconds")
    span = max([*ends.values(), float(total) if isinstance(total, int | float) else 0.0])
    agents: dict[str, int] = {}
    rows = []
    for step in run.steps:
        agent = str(step.get("agent", "?"))
        colour = agents.setdefault(agent, len(agents) % AGENT_COLOURS)
        end = ends.get(step.number)
        start = max(0.0, end - durations[step.number]) if end is not None else None
        rows.append(_row(step, colour, start, durations[step.number], span))
    rows.append(_totals(run))
    rows.append(f'<tr class="end"><td></td><td colspan="7">{_end_words(run)}</td></tr>')
    names = ", ".join(f'<span class="agent agent-{k}">{m.text(a, 80)}</span>' for a, k in agents.items())
    return (f'<p class="muted">Every step in order: when it started (from the run\'s start) and how long it took, '
            f"the agent that took it ({names}), how it ended, what it did, and what the model cost.</p>"
            '<table class="timeline"><thead><tr><th>Step</th><th>Start</th><th>Took</th><th>Agent</th>'
            "<th>Status</th><th>What</th><th>Tokens</th><th>Cost</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _row(step: StepView, colour: int, start: float | None, took: float, span: float) -> str:
    status = str(step.get("status", "?"))
    bar = ""
    if start is not None and span > 0:
        left, width = 100 * start / span, max(0.5, 100 * took / span)
        bar = (f'<div class="bar"><span class="agent-{colour}" style="margin-left: {min(left, 99.5):.1f}%; '
               f'width: {min(width, 100 - min(left, 99.5)):.1f}%"></span></div>')
    usage = step.usage or {}
    tokens = (f"{m.count(usage.get('prompt_tokens'))} + {m.count(usage.get('completion_tokens'))}"
              if usage.get("calls") else '<span class="muted">&ndash;</span>')
    cost = m.cost(usage.get("cost_usd")) if usage.get("calls") else '<span class="muted">&ndash;</span>'
    return (f'<tr data-step="{step.number}"><td><a href="#step-{step.number}">{step.number}</a></td>'
            f'<td class="num">{"+" + m.seconds(start) if start is not None else "?"}{bar}</td>'
            f'<td class="num">{m.seconds(took) if step.timings else "?"}</td>'
            f'<td><span class="agent agent-{colour}">{m.text(step.get("agent", "?"), 80)}</span></td>'
            f'<td><span class="badge {m.status_class(status)}">{m.text(status, 40)}</span></td>'
            f'<td class="what">{_what(step)}</td><td class="num">{tokens}</td><td class="num">{cost}</td></tr>')


def _what(step: StepView) -> str:
    """The step's action (marked when it failed), else why it ended or what it assigned."""
    action = step.action
    if action is not None:
        args = action.get("args")
        shown = f"{action.get('name', '?')}({_args(args)})" if step.code is None else "code"
        result = step.result
        failed = result is not None and result.get("success") is False
        words = f'<code>{m.text(shown, ACTION_CHARS)}</code>'
        return words + (' <span class="badge fail">failed</span>' if failed else "")
    reason = step.get("reason")
    return m.text(reason, 200) if reason else '<span class="muted">no action</span>'


def _args(args: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items()) if isinstance(args, dict) else ""


def _totals(run: RunView) -> str:
    usages = [s.usage for s in run.steps if s.usage and s.usage.get("calls")]
    prompt = sum(int(u.get("prompt_tokens") or 0) for u in usages)
    completion = sum(int(u.get("completion_tokens") or 0) for u in usages)
    costs = [u.get("cost_usd") for u in usages]
    cost = (m.cost(None) if any(c is None for c in costs) else
            m.cost(sum(float(c) for c in costs if isinstance(c, int | float))))
    took = sum(sum(s.timings.values()) for s in run.steps)
    return (f'<tr class="totals"><td>All</td><td></td><td class="num">{m.seconds(took)}</td><td colspan="3">'
            f"{len(run.steps)} step{'s' if len(run.steps) != 1 else ''}, {len(usages)} with a model call</td>"
            f'<td class="num">{prompt} + {completion}</td><td class="num">{cost}</td></tr>')


def _transitions(run: RunView) -> str:
    if not run.transitions:
        return '<p class="muted">run.log has no state transitions.</p>'
    root = run.transitions[0].agent
    rows = [_transition_row(t, root) for t in run.transitions]
    rows.append(f'<tr class="end"><td></td><td colspan="3">{_end_words(run)}</td></tr>')
    agents = sorted({t.agent for t in run.transitions})
    table = (f'<p class="muted">State transitions from run.log, in order ({m.text(", ".join(agents))}).</p>'
             '<table class="transitions"><thead><tr><th>Step</th><th>Agent</th><th>Transition</th><th>Reason</th>'
             f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return m.details(f"State transitions ({len(run.transitions)})", table, cls="transitions")


def _transition_row(t: Transition, root: str) -> str:
    step = f'<a href="#step-{t.step}">{t.step}</a>' if t.step else "&ndash;"
    cls = ' class="sub"' if t.agent != root else ""
    return (f"<tr{cls}><td>{step}</td><td class=\"agent\">{m.text(t.agent, 80)}</td>"
            f'<td><span class="badge {m.status_class(t.source)}">{m.text(t.source, 40)}</span> &rarr; '
            f'<span class="badge {m.status_class(t.target)}">{m.text(t.target, 40)}</span></td>'
            f'<td class="reason">{m.text(t.reason)}</td></tr>')


def _end_words(run: RunView) -> str:
    if run.running:
        return f"still running (process {m.text(run.data.get('pid', '?'))}): the log goes on"
    how = outcome_words(run)
    return (f"ended: {m.text(run.status, 40)}" + (f" ({m.text(how)})" if how else "")
            + (f": {m.text(run.data.get('reason'), 300)}" if run.data.get("reason") else ""))


def outcome_words(run: RunView) -> str:
    """How a run that did not end by itself ended: cut off, stopped by a signal, interrupted; else ""."""
    data = run.data
    if data.get("cut_off"):
        return "cut off"
    if data.get("signal"):
        return f"stopped by {data.get('signal')}"
    if data.get("interrupted"):
        return "interrupted"
    return ""
