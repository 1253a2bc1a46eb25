"""One step of the report: who acted and in which state, the screenshot with the chosen control
highlighted, the thought, the action and its result, the timings and what went wrong; the prompt,
the raw reply, the code (CodeAct) and the screen text in collapsed sections."""

from __future__ import annotations

from typing import Any

from ufo_mobile.report import markup as m
from ufo_mobile.report.images import Mark, mark_of
from ufo_mobile.report.load import Plan, StepView
from ufo_mobile.report.plans import manager_thought, plan_facts

_PHASES = {"data_collection": "observe", "llm_interaction": "model", "action_execution": "act",
           "memory_update": "record"}


def render_step(step: StepView, figures: str, previous: Plan | None = None) -> str:
    """One step's article; ``figures``: its screens (``figures.render_figures``); ``previous``: the
    plan and memory after the step before, so that what this step added to the memory stands out."""
    status = str(step.get("status", "?"))
    head = (f'<h3><a href="#step-{step.number}">Step {step.number}</a> '
            f'<span class="agent">{m.text(step.get("agent", "?"), 80)}</span> '
            f'<span class="state">{m.text(step.get("state", "?"), 40)}</span> &rarr; '
            f'<span class="badge {m.status_class(status)}">{m.text(status, 40)}</span></h3>')
    notes = []
    if not step.recorded:
        notes.append('<p class="warn">This step has no line in steps.jsonl: the run stopped while it was '
                     "under way. What it left on disk is shown.</p>")
    if step.missing:
        notes.append(f'<p class="warn">Files missing: {m.text(", ".join(step.missing))}</p>')
    mark = mark_of(step.action, step.controls)
    facts = _facts(step, mark, plan_facts(step, previous))
    body = f'<div class="cols">{figures}<div class="info">{m.rows(facts)}</div></div>'
    return (f'<article class="step" id="step-{step.number}" data-step="{step.number}" '
            f'data-status="{m.text(status, 40)}">{head}{"".join(notes)}{body}{_sections(step)}</article>')


def _facts(step: StepView, mark: Mark | None, plan: list[tuple[str, str]]) -> list[tuple[str, str]]:
    facts: list[tuple[str, str]] = []
    thought = step.get("thought") or manager_thought(step)
    if thought:
        facts.append(("Thought", m.pre(thought, "inline thought")))
    facts += plan  # the plan, memory and subgoal: what the step worked towards
    facts.append(("Action", _action(step, mark)))
    outcomes = step.get("outcomes")
    if isinstance(outcomes, list) and len(outcomes) > 1:  # a turn that carried several actions
        facts.append(("Actions", "<br>".join(
            f'<span class="badge {"ok" if o.get("success") else "fail"}">'
            f'{"ok" if o.get("success") else "failed" if o.get("ran", True) else "not run"}</span> '
            f'<code>{m.text(str(o.get("action", "?")))}</code> {m.pre(str(o.get("summary", "")), "inline")}'
            for o in outcomes if isinstance(o, dict))))
    confirmation = step.get("confirmation")
    if isinstance(confirmation, dict):
        said = m.text(str(confirmation.get("note") or ""))
        facts.append(("Approval", ("approved by a person" if confirmation.get("approved") else "refused by a person")
                      + (f": {said}" if said else "")))
    result = step.result
    if result is not None:
        ok = result.get("success") is True
        facts.append(("Result", f'<span class="badge {"ok" if ok else "fail"}">{"ok" if ok else "failed"}</span> '
                                f'{m.pre(result.get("summary", ""), "inline")}'))
    reason = step.get("reason")
    if reason:
        facts.append(("Reason", m.pre(reason, "inline")))
    if step.get("current_app"):
        facts.append(("App", m.text(step.get("current_app"))))
    if step.timings:
        facts.append(("Timings", " &middot; ".join(f"{m.text(_PHASES.get(k, k))} {m.seconds(v)}"
                                                   for k, v in step.timings.items())))
    facts += _observation(step)
    facts += _problems(step)
    usage = step.get("usage")
    if isinstance(usage, dict) and usage.get("calls"):
        facts.append(("Model", f"{m.count(usage.get('prompt_tokens'))} prompt ({m.count(usage.get('cached_tokens'))} "
                               f"cached) + {m.count(usage.get('completion_tokens'))} completion tokens, "
                               f"{m.count(usage.get('calls'))} call(s), cost {m.cost(usage.get('cost_usd'))}"))
    return facts


def _action(step: StepView, mark: Mark | None) -> str:
    action = step.action
    if action is None:
        return '<span class="muted">none</span>'
    name = str(action.get("name", "?"))
    given = action.get("args")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    if step.code is not None:
        lines = step.code.count("\n") + 1
        shown = f"{m.text(name)} ({lines} line{'s' if lines != 1 else ''} of Python, below)"
    else:
        shown = m.text(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})")
    extra = " <span class=\"muted\">(marked as needing approval)</span>" if action.get("confirm") else ""
    if mark is None and isinstance(args.get("index"), int):
        extra += ' <span class="warn">(control not found in controls.json)</span>'
    return f"<code>{shown}</code>{extra}"


def _observation(step: StepView) -> list[tuple[str, str]]:
    facts = []
    cache = step.get("cache")
    if isinstance(cache, dict):
        hit = bool(cache.get("hit"))
        facts.append(("Cache", f'{"hit" if hit else "miss"} <span class="muted">({m.count(cache.get("hits", 0))} '
                               f'hits, {m.count(cache.get("misses", 0))} misses so far)</span>'))
    refusals = step.get("dump_refusals", [])
    if refusals:  # several attempts without refusals are the settle check, not trouble
        shown = ", ".join(str(r) for r in refusals) if isinstance(refusals, list) else str(refusals)
        facts.append(("UI dump", f'<span class="warn">refused {m.text(shown)}</span> '
                                 f'<span class="muted">({m.count(step.get("dump_attempts"))} attempts)</span>'))
    if step.get("observation_fallback"):
        facts.append(("Fallback", f'<span class="warn">{m.text(step.get("observation_fallback"))}</span>'))
    if step.get("screenshot_blocked"):
        facts.append(("Screenshot", '<span class="warn">blocked by the app (secure screen)</span>'))
    return facts


def _problems(step: StepView) -> list[tuple[str, str]]:
    facts = []
    for key, name in (("error", "Error"), ("failed_phase", "Failed phase"), ("write_error", "Write error")):
        if step.get(key):
            facts.append((name, f'<span class="fail-text">{m.text(step.get(key))}</span>'))
    parse_errors = step.get("parse_errors", [])
    if parse_errors:
        items = parse_errors if isinstance(parse_errors, list) else [parse_errors]
        facts.append(("Parse errors", "".join(m.pre(e, "inline fail-text") for e in items)))
    return facts


def _sections(step: StepView) -> str:
    parts = []
    if step.code is not None:
        parts.append(m.details("Code", m.pre(step.code, "code"), cls="code", open_=True))
    if step.prompt is not None:
        parts.append(m.details(f"Prompt {_count_messages(step.prompt)}", _prompt(step.prompt), cls="prompt"))
    if step.reply is not None:
        parts.append(m.details("Raw reply", m.pre(step.reply), cls="reply"))
    if step.screen is not None:
        parts.append(m.details("Screen text (as the model saw it)", m.pre(step.screen), cls="screen"))
    if step.recorded:
        parts.append(m.details("Step record (steps.jsonl)", m.pre(m.pretty_json(step.line)), cls="record"))
    return f'<div class="sections">{"".join(parts)}</div>' if parts else ""


def _count_messages(prompt: Any) -> str:
    return f"({len(prompt)} messages)" if isinstance(prompt, list) else ""


def _prompt(prompt: Any) -> str:
    if not isinstance(prompt, list):
        return m.pre(prompt)
    out = []
    for message in prompt:
        if isinstance(message, dict):
            role, content = message.get("role", "?"), message.get("content", "")
            shown = content if isinstance(content, str) else m.pretty_json(content)
            out.append(f'<div class="message"><div class="role">{m.text(role, 40)}</div>{m.pre(shown)}</div>')
        else:
            out.append(m.pre(m.pretty_json(message)))
    return "".join(out)
