"""What a step worked towards, as fields of the step rather than text inside its raw reply: the
plan, the manager's memory (what this step added to it marked new), the subgoal the manager
assigned next and the subgoal an executor's step worked on (all from the step's ``state.json``,
``load.plan_of``), and the manager's thought (parsed from its tagged reply: a manager step's line
in ``steps.jsonl`` has no thought of its own)."""

from __future__ import annotations

from ufo_mobile.core.llm.manager_reply import parse_manager_reply
from ufo_mobile.core.processors.recorder import REASK_SEPARATOR
from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.report import markup as m
from ufo_mobile.report.load import Plan, StepView

_NEW = '<li class="new">{} <span class="badge go">new</span></li>'


def manager_thought(step: StepView) -> str | None:
    """The ``<thought>`` of a manager's reply (its last attempt), or None for any other reply."""
    if step.action is not None or not step.reply or "<thought" not in step.reply.lower():
        return None
    try:
        reply = parse_manager_reply(step.reply.split(REASK_SEPARATOR)[-1])
    except (LLMOutputParseError, ValueError):
        return None
    return reply.thought or None


def plan_facts(step: StepView, previous: Plan | None) -> list[tuple[str, str]]:
    """Rows for the step's facts table: the subgoal, and the plan and memory where they differ from
    ``previous`` (the step before's); empty for a step whose ``state.json`` has none of them."""
    plan = step.plan
    if plan is None:
        return []
    facts: list[tuple[str, str]] = []
    if plan.subgoal:
        facts.append(("Subgoal", f'<span class="subgoal">{m.text(plan.subgoal)}</span>'))
    elif plan.current_subgoal:
        facts.append(("Next subgoal", f'<span class="subgoal next">{m.text(plan.current_subgoal)}</span>'))
    if plan.plan and (previous is None or previous.plan != plan.plan):  # shown where it changes
        items = "".join(f"<li>{m.text(item)}</li>" for item in plan.plan)
        facts.append(("Plan", f'<ol class="plan">{items}</ol>'))
    if plan.memory and (previous is None or previous.memory != plan.memory):
        known = set(previous.memory) if previous is not None else set()
        items = "".join(_NEW.format(m.text(item)) if item not in known else f"<li>{m.text(item)}</li>"
                        for item in plan.memory)
        facts.append(("Memory", f'<ul class="memory">{items}</ul>'))
    return facts
