"""Phase 3: run the turn's actions through the tool registry.

A turn holds one action or a short chain on one screen (``agent.max_actions_per_turn``), run in
order. Before each action after the first, the screen is read again: when the control the action
names (by number or by point) is no longer the one the model saw there, the chain stops, and the
rest is reported as not run; so does every action after one that failed.

The step budget (``processors.budget``) keeps room for the final answer: actions beyond it do not
run, and a turn that asks for an action when only the final answer fits ends the run at the step
limit. Every action that ran, or that was refused, uses a step.

Approvals (``processors.confirm``): an action that needs one does not run unasked. With a person
there, the chain stops at it, the step ends in CONFIRM and the agent asks; the CONFIRM state then
runs this phase again on the same step with the answer in ``ctx.extra["confirmation"]`` (approved:
the action runs; refused: a failed action with the person's reason, and it stays refused). With
nobody there, ``human.unattended`` decides at once: refuse (a failed action saying why), stop (the
run ends as needing a person) or approve.

An action's ``ActionResult.state_update`` (``remember``) is merged into the shared state; its
``completion`` (``complete``) ends the task as FINISH (the message is the answer) or FAIL.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.memory.records import ActionOutcome
from ufo_mobile.core.memory.reducers import append_items, append_unique, reducer_of
from ufo_mobile.core.memory.state import ActionEntry, SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.confirm import (
    Attendance,
    ConfirmPolicy,
    Gate,
    needs_person,
    nobody_can_approve,
    refused_before,
    signature,
    target_control,
)
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.status import NEEDS_PERSON, MobileAgentStatus
from ufo_mobile.core.tools.context import ActionContext, ActionResult, Sleep
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.controls import Control, ControlKind
from ufo_mobile.core.ui.state import UIState
from ufo_mobile.errors import UfoMobileError
from ufo_mobile.settings import AgentSettings

GIVE_UP = "answer FAIL"  # how the JSON reply ends a task that cannot be done (in the refusal texts)
CHAIN_SETTLE_SECONDS = 0.3  # a chained action's screen is read again once after this pause when it differs


def _identity(control: Control) -> tuple[str, str]:
    """What a control is, for the chain check: its class and its name (a field's hint or id, since its
    text is what typing changes; anything else's label)."""
    if control.kind is ControlKind.EDIT:
        return control.short_class, control.hint or control.node.resource_id or control.description
    return control.short_class, control.label or control.description or control.node.resource_id


_OWN_FIELDS = frozenset({"action_history", "action_outcomes", "summary_history", "error_descriptions",
                         "steps_used", "refused_actions", "needs_person"})


def _merge(update: dict[str, Any], key: str, value: Any) -> None:
    """Add one action's ``state_update`` entry to the turn's: a history field collects every
    action's values, any other field takes the last one."""
    if key in update and reducer_of(SharedState, key) in (append_items, append_unique):
        before = update[key] if isinstance(update[key], list) else [update[key]]
        update[key] = [*before, *(value if isinstance(value, list) else [value])]
    else:
        update[key] = value


def combined(outcomes: list[ActionOutcome]) -> ActionResult:
    """The turn's result: one action's own, or every action's line."""
    if len(outcomes) == 1 and outcomes[0].ran:
        return ActionResult(outcomes[0].success, outcomes[0].summary)
    ok = all(o.ran and o.success for o in outcomes)
    return ActionResult(ok, "; ".join(o.text() for o in outcomes))


class ActionExecution:
    name: ClassVar[str] = "action_execution"
    always: ClassVar[bool] = False

    def __init__(self, tools: ToolRegistry, phone: Phone, settings: AgentSettings, *,
                 policy: ConfirmPolicy | None = None, attendance: Attendance | None = None,
                 sleep: Sleep = asyncio.sleep) -> None:
        self.tools = tools  # the agent's view of the phone's tools
        self.phone = phone
        self.device = phone.driver
        self.state_provider = phone.provider
        self.settings = settings
        self.policy = policy
        self.attendance = attendance or Attendance()
        self._sleep = sleep  # what ``wait`` sleeps with, and the chain check's pause (tests inject one)

    def action_context(self, ctx: StepContext, obs: Observation) -> ActionContext:
        """What the tools get for an action decided on ``obs``."""
        return self.phone.action_context(
            obs.ui_state, ctx.shared, observation_id=obs.observation_id, apps=obs.apps,
            swipe_duration_ms=self.settings.swipe_duration_ms, max_wait_seconds=self.settings.max_wait_seconds,
            sleep=self._sleep)

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        actions = ctx.actions
        if not actions or ctx.observation is None:
            return None
        obs = ctx.observation
        decision = ctx.extra.get("confirmation")
        start = int(ctx.extra.get("pending", 0)) if decision is not None else 0
        if decision is None:
            allowed = ctx.budget().actions_left
            if allowed == 0:  # only the final answer fitted: nothing runs
                why = "not run: the step budget keeps its last step for the final answer"
                ctx.outcomes = [ActionOutcome(action=a.render(), success=False, summary=why, ran=False)
                                for a in actions]
                ctx.result = ActionResult(False, why)
                ctx.fail(ctx.budget().limit_reason())
                return None
        else:
            allowed = start + 1  # the approved (or refused) action, and nothing after it
        action_ctx = self.action_context(ctx, obs)
        outcomes: list[ActionOutcome] = list(ctx.outcomes[:start])
        update: dict[str, Any] = {"action_history": [], "action_outcomes": [], "summary_history": [],
                                  "error_descriptions": [], "steps_used": 0, "refused_actions": []}
        stop = ""
        for i in range(start, len(actions)):
            action = actions[i]
            if stop or i >= allowed:
                why = stop or ("the chain stopped at the action that waits for approval" if decision is not None
                               else "the step budget keeps its last step for the final answer")
                outcomes.append(ActionOutcome(action=action.render(), success=False, summary=why, ran=False))
                continue
            renumbered = ""
            if i > start:
                moved, now = await self._screen_moved(action_ctx, obs.ui_state, action, ctx, i)
                if moved:
                    stop = moved
                    outcomes.append(ActionOutcome(action=action.render(), success=False, summary=moved, ran=False))
                    continue
                if now.args.get("index") != action.args.get("index"):
                    renumbered = (f" (its control was renumbered from {action.args.get('index')} to "
                                  f"{now.args.get('index')} by the earlier actions)")
                action = now
            result = await self._gate_and_run(ctx, action_ctx, action, i, decision, update)
            if result is not None and renumbered:
                result = dataclasses.replace(result, summary=result.summary + renumbered)
            if result is None:  # waits for a person (CONFIRM), or the run stops for one
                break
            outcomes.append(ActionOutcome(action=action.render(), success=result.success, summary=result.summary))
            self._account(ctx, action, i, result, update)
            if result.completion is not None:
                stop = "the task ended before it"
            elif not result.success:
                stop = "an earlier action of this turn failed"
        ctx.outcomes = outcomes
        if ctx.status == MobileAgentStatus.CONFIRM:
            return {k: v for k, v in update.items() if v}
        if outcomes:
            ctx.result = combined(outcomes)
        return {k: v for k, v in update.items() if v}

    async def _gate_and_run(self, ctx: StepContext, action_ctx: ActionContext, action: ActionCall, i: int,
                            decision: Mapping[str, Any] | None, update: dict[str, Any]) -> ActionResult | None:
        """Run ``action`` unless it needs an approval it has not got (module docstring); None when
        the step now waits for a person or the run stops for one."""
        app = ctx.observation.current_app.package if ctx.observation is not None else ""
        sig = signature(action, action_ctx.ui, app)
        verdict, why = Gate(self.policy, self.attendance).verdict(action, app, sig, ctx.shared.refused_actions)
        if verdict == "refused":  # refused stays refused, whatever the flag: nobody is asked again
            return ActionResult(False, refused_before(GIVE_UP))
        if decision is not None and i == int(ctx.extra.get("pending", 0)):  # the person's answer
            if not decision["approved"]:
                update["refused_actions"].append(sig)
                note = decision.get("note") or ""
                return ActionResult(False, "not run: the person refused it" + (f" ({note})" if note else "")
                                    + "; it stays refused for the rest of the run")
            return await self.phone.act(action.name, dict(action.args), action_ctx, tools=self.tools)
        if verdict == "run":
            return await self.phone.act(action.name, dict(action.args), action_ctx, tools=self.tools)
        if verdict == "ask":
            ctx.status = MobileAgentStatus.CONFIRM
            ctx.reason = f"{action.render()} waits for a person's approval: {why}"
            ctx.extra.update(pending=i, confirm_why=why)
            return None
        if verdict == "stop":
            reason = needs_person(action, why)
            ctx.fail(f"needs a person: {reason}")
            ctx.extra["outcome"] = NEEDS_PERSON
            update["needs_person"] = reason
            return None
        update["refused_actions"].append(sig)
        return ActionResult(False, nobody_can_approve(why, GIVE_UP))

    async def _screen_moved(self, action_ctx: ActionContext, first: UIState, action: ActionCall, ctx: StepContext,
                            i: int) -> tuple[str, ActionCall]:
        """Why the chain stops before ``action`` (the screen changed under it), or '', and the action to
        run: the same control only renumbered (same class, name and place) is acted on under its new
        number. On success the tools act on the screen as it is now."""
        wanted = target_control(first, action)
        if wanted is None:
            return "", action
        identity = _identity(wanted)
        for attempt in (1, 2):
            try:
                now = await self.state_provider.get_state(
                    observation_id=f"{first.observation_id}-{i}.{attempt}",
                    screen_size=(first.screen_width, first.screen_height))
            except UfoMobileError as exc:
                return f"the screen could not be read again before it ({exc})", action
            found = target_control(now, action)
            same = [c for c in now.elements if _identity(c) == identity and c.bounds == wanted.bounds]
            if (found is None or _identity(found) != identity) and len(same) == 1 and "index" in action.args:
                action = action.model_copy(update={"args": {**action.args, "index": same[0].index}})
                found = same[0]
            if found is not None and _identity(found) == identity:
                action_ctx.ui, action_ctx.observation_id = now, now.observation_id
                self.device.observe(now.observation_id)
                return "", action
            if attempt == 1:
                await self._sleep(CHAIN_SETTLE_SECONDS)
        shown = (f"{found.short_class} {(found.label or found.description)!r}" if found is not None
                 else "nothing")
        return f"the screen changed before it: its control is now {shown}, not {identity[1]!r}", action

    def _account(self, ctx: StepContext, action: ActionCall, i: int, result: ActionResult,
                 update: dict[str, Any]) -> None:
        """The history entries and the step of one action that ran (or was refused)."""
        obs = ctx.observation
        suffix = f":{i}" if i else ""
        update["action_history"].append(ActionEntry(
            id=f"{ctx.run_id}:{ctx.agent_name}:{ctx.step}{suffix}", step=ctx.step, name=action.name,
            args=dict(action.args), observation_id=obs.observation_id if obs is not None else ""))
        update["action_outcomes"].append(result.success)
        update["summary_history"].append(result.summary)
        update["steps_used"] += 1
        if not result.success:
            update["error_descriptions"].append(result.summary)
        if result.state_update:
            clash = sorted(set(result.state_update) & _OWN_FIELDS)
            if clash:  # a tool bug: these fields belong to this phase
                raise ValueError(f"tool {action.name} may not update {', '.join(clash)}")
            for key, value in result.state_update.items():
                _merge(update, key, value)
        done = result.completion
        if done is not None:
            if done.success:
                ctx.status, ctx.reason = MobileAgentStatus.FINISH, done.message
            else:
                ctx.fail(done.message)
