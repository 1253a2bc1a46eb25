"""Phase 3: run the chosen action through the tool registry.

The action's ``ActionResult`` becomes the step's result. Its ``state_update`` (``remember``) is
merged into the shared state with this phase's own update, through the reducers; its
``completion`` (``complete``) ends the task as a FINISH or FAIL reply would: the step's status
becomes FINISH (the message is the answer) or FAIL (the message is the reason).

An action that needs a person's approval (``ConfirmPolicy``) does not run: the step ends in CONFIRM
and the agent asks. The CONFIRM state then runs this phase again with the answer in
``ctx.extra["confirmation"]``: approved, the action runs; refused, it is a failed action the model
reads next turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.memory.state import ActionEntry
from ufo_mobile.processors.confirm import ConfirmPolicy
from ufo_mobile.processors.context import Observation, StepContext
from ufo_mobile.settings import AgentSettings
from ufo_mobile.status import MobileAgentStatus
from ufo_mobile.tools.context import ActionContext, ActionResult, Sleep
from ufo_mobile.tools.credentials import CredentialManager
from ufo_mobile.tools.registry import ToolRegistry
from ufo_mobile.ui.cache import ControlCache
from ufo_mobile.ui.provider import StateProvider


class ActionExecution:
    name: ClassVar[str] = "action_execution"
    always: ClassVar[bool] = False

    def __init__(self, tools: ToolRegistry, device: DeviceDriver, cache: ControlCache, settings: AgentSettings,
                 *, state_provider: StateProvider | None = None, credentials: CredentialManager | None = None,
                 policy: ConfirmPolicy | None = None, sleep: Sleep = asyncio.sleep) -> None:
        self.tools = tools
        self.device = device
        self.cache = cache
        self.settings = settings
        self.state_provider = state_provider
        self.credentials = credentials
        self.policy = policy
        self._sleep = sleep  # what ``wait`` sleeps with (tests inject one)

    def action_context(self, ctx: StepContext, obs: Observation) -> ActionContext:
        """What the tools get for an action decided on ``obs``."""
        return ActionContext(
            driver=self.device, ui=obs.ui_state, shared_state=ctx.shared, state_provider=self.state_provider,
            credential_manager=self.credentials, observation_id=obs.observation_id, cache=self.cache,
            apps=obs.apps, swipe_duration_ms=self.settings.swipe_duration_ms,
            max_wait_seconds=self.settings.max_wait_seconds, sleep=self._sleep)

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        if ctx.action is None or ctx.observation is None:
            return None
        obs = ctx.observation
        action_ctx = self.action_context(ctx, obs)
        decision = ctx.extra.get("confirmation")
        if decision is None and self.policy is not None:
            why = self.policy.why(ctx.action, obs.current_app.package)
            if why is not None:  # the action waits; the agent asks a person in the CONFIRM state
                ctx.status = MobileAgentStatus.CONFIRM
                ctx.reason = f"{ctx.action.render()} waits for a person's approval: {why}"
                ctx.extra["confirm_why"] = why
                return None
        if decision is not None and not decision["approved"]:
            note = decision.get("note") or ""
            result = ActionResult(False, f"a person refused {ctx.action.render()}" + (f": {note}" if note else ""))
        else:
            result = await self.tools.execute(ctx.action.name, dict(ctx.action.args), action_ctx)
        ctx.result = result
        entry = ActionEntry(id=f"{ctx.run_id}:{ctx.agent_name}:{ctx.step}", step=ctx.step, name=ctx.action.name,
                            args=dict(ctx.action.args), observation_id=obs.observation_id)
        update: dict[str, Any] = {
            "action_history": entry,
            "action_outcomes": result.success,
            "summary_history": result.summary,
        }
        if not result.success:
            update["error_descriptions"] = result.summary
        return self._merge(ctx, result, update)

    @staticmethod
    def _merge(ctx: StepContext, result: ActionResult, update: dict[str, Any]) -> dict[str, Any]:
        if result.state_update:
            clash = sorted(set(result.state_update) & set(update))
            if clash:  # a tool bug: these fields belong to this phase
                raise ValueError(f"tool {ctx.action.name if ctx.action else '?'} may not update {', '.join(clash)}")
            update.update(result.state_update)
        done = result.completion
        if done is not None:
            if done.success:
                ctx.status, ctx.reason = MobileAgentStatus.FINISH, done.message
                update["answer"] = done.message
            else:
                ctx.fail(done.message)
        return update
