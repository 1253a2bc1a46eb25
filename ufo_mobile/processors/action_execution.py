"""Phase 3: run the chosen action through the tool registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.memory.state import ActionEntry
from ufo_mobile.processors.context import StepContext
from ufo_mobile.settings import AgentSettings
from ufo_mobile.tools.registry import ActionContext, ToolRegistry
from ufo_mobile.ui.cache import ControlCache


class ActionExecution:
    name: ClassVar[str] = "action_execution"
    always: ClassVar[bool] = False

    def __init__(self, tools: ToolRegistry, device: DeviceDriver, cache: ControlCache,
                 settings: AgentSettings) -> None:
        self.tools = tools
        self.device = device
        self.cache = cache
        self.settings = settings

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        if ctx.action is None or ctx.observation is None:
            return None
        obs = ctx.observation
        action_ctx = ActionContext(device=self.device, ui_state=obs.ui_state, observation_id=obs.observation_id,
                                   cache=self.cache, apps=obs.apps,
                                   swipe_duration_ms=self.settings.swipe_duration_ms,
                                   max_wait_seconds=self.settings.max_wait_seconds)
        result = await self.tools.execute(ctx.action, action_ctx)
        ctx.result = result
        entry = ActionEntry(id=f"{ctx.run_id}:{ctx.agent_name}:{ctx.step}", step=ctx.step, name=ctx.action.name,
                            args=dict(ctx.action.args), observation_id=obs.observation_id)
        return {
            "action_history": entry,
            "action_outcomes": result.success,
            "summary_history": result.summary,
            "error_descriptions": "" if result.success else result.summary,
        }
