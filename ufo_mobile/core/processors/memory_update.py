"""Phase 4: the typed step record, appended to the shared state's step history, and the phone's date
(``device_date``) as the step's observation read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ufo_mobile.core.memory.records import StepRecord
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.status import MobileAgentStatus


def record_from(ctx: StepContext) -> StepRecord:
    actions = ctx.actions
    obs = ctx.observation
    return StepRecord(
        step=ctx.step,
        agent=ctx.agent_name,
        observation_id=obs.observation_id if obs else "",
        current_app=obs.current_app.package if obs else "",
        status=ctx.status,
        reason=ctx.reason,
        thought=ctx.reply.thought if ctx.reply else "",
        observation=ctx.reply.observation if ctx.reply else "",
        action=actions[0].model_dump() if actions else None,
        action_text="; ".join(a.render() for a in actions),
        success=ctx.result.success if ctx.result else None,
        summary=ctx.result.summary if ctx.result else "",
        outcomes=list(ctx.outcomes) if len(actions) > 1 else [],
        subgoal=ctx.shared.current_subgoal if ctx.agent_name != "Manager" and ctx.state != "NONE" else "",
        error=ctx.error,
        raw_reply=ctx.raw_replies[-1] if ctx.raw_replies else "",
        timings=dict(ctx.timings),
    )


class MemoryUpdate:
    """Runs even after a failed phase, so a failed step is remembered too. A step that waits for a
    person's approval (CONFIRM) is remembered when it goes on, once."""

    name: ClassVar[str] = "memory_update"
    always: ClassVar[bool] = True

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        if ctx.status == MobileAgentStatus.CONFIRM and ctx.failed_phase is None:
            return None
        record = record_from(ctx)
        ctx.record = record
        update: dict[str, Any] = {"step_records": record}
        if ctx.observation is not None and ctx.observation.ui_state.device_date:
            update["device_date"] = ctx.observation.ui_state.device_date  # the phone's date (seed 000)
        return update
