"""The Scripter: a ``<script>`` plan item, run off the device.

The manager's item says what to compute or fetch; the Scripter's model writes the Python for it
(``prompts/scripter.yaml``), which runs in the sandbox (``ufo_mobile.core.sandbox.run_script``): a
separate process with a clean environment (no secrets), a temporary directory, and wall-clock, CPU
and memory limits, with no device. What it printed comes back to the manager in its next prompt.
It is opt-in (``reasoning.scripter.enabled``); when it is off, a script item fails at once with a
reason the manager reads (its prompt already says scripts are off).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.agents.options import DEFAULT_OPTIONS, AgentOptions
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.prompt import PromptTemplates
from ufo_mobile.core.llm.subagent_reply import parse_code_reply
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.base import Processor
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.llm_interaction import LLMInteraction
from ufo_mobile.core.processors.memory_update import MemoryUpdate
from ufo_mobile.core.processors.recorder import StepRecorder
from ufo_mobile.core.sandbox import SandboxError, SandboxLimits, run_script
from ufo_mobile.core.sandbox.isolation import Confinement
from ufo_mobile.core.states.base import AgentLike
from ufo_mobile.core.states.reasoning import SUBAGENT_RULES, SubAgentStateManager
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.core.tools.context import ActionResult
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.settings import ScripterSettings, Settings

OUTPUT_CHARS = 4000  # of the script's output, kept for the manager


class ScriptPhase(LLMInteraction):
    """Ask for the script, run it in the sandbox; the step's result is the run."""

    name: ClassVar[str] = "script"

    def __init__(self, model: ChatModel, settings: ScripterSettings, **kwargs: Any) -> None:
        super().__init__(model, ToolRegistry(), templates=PromptTemplates.load("scripter"), **kwargs)
        self.schema = None
        self.settings = settings

    async def _code(self, ctx: StepContext, task: str) -> str:
        t = self.templates
        messages = [ChatMessage(role="system", content=t.render("system", timeout=f"{self.settings.wall_seconds:g}")),
                    ChatMessage(role="user", content=t.render("user", request=ctx.request, task=task))]
        return await self.ask_until_parsed(ctx, messages, parse_code_reply, what="the script reply")

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        """Have the model write the script for the current subgoal and run it; the shared state's update."""
        task = ctx.shared.current_subgoal
        if not self.settings.enabled:
            ctx.fail("script items are turned off (reasoning.scripter.enabled: false): plan the step on the phone")
            return {"error_descriptions": ctx.reason, "action_outcomes": False}
        code = await self._code(ctx, task)
        s = self.settings
        limits = SandboxLimits(wall_seconds=s.wall_seconds, cpu_seconds=s.cpu_seconds, memory_mb=s.memory_mb,
                               max_processes=s.max_processes, max_output_chars=OUTPUT_CHARS)
        try:
            run = await run_script(code, limits, Confinement(s.isolation, network=s.network))
        except SandboxError as exc:  # no namespaces here, and the weaker mode is not chosen
            ctx.fail(f"the script was not run: {exc}")
            return {"error_descriptions": ctx.reason, "action_outcomes": False}
        ctx.extra["script"] = {"code": code, "ok": run.ok, "error": run.error, "seconds": run.duration_seconds}
        output = run.render()
        ctx.result = ActionResult(run.ok, output[:300] if run.ok else (run.error or run.refused or "failed"))
        if run.ok:
            ctx.status, ctx.reason = MobileAgentStatus.FINISH, "the script ran"
        else:
            ctx.fail(f"the script failed: {run.error or run.refused}")
        status = "succeeded" if run.ok else f"failed ({run.error or run.refused})"
        update: dict[str, Any] = {
            "scripter_history": {"step": ctx.step, "task": task, "status": status, "output": output},
            "action_outcomes": run.ok, "summary_history": ctx.result.summary}
        if not run.ok:
            update["error_descriptions"] = ctx.reason
        return update


class ScripterAgent(BasicAgent):
    """Runs ``<script>`` items off the device; the run's phone only lends it its redactor."""

    model_role: ClassVar[str] = "scripter"

    def __init__(self, name: str, *, parent: AgentLike, phone: Phone, model: ChatModel, settings: Settings,
                 options: AgentOptions = DEFAULT_OPTIONS) -> None:
        super().__init__(name, SubAgentStateManager(), SUBAGENT_RULES, limits=settings.limits,
                         step_timer=options.step_timer, logger=options.logger, phone=phone)
        self.parent = parent
        self.model, self.settings = model, settings
        phase = ScriptPhase(model, settings.reasoning.scripter, logger=options.logger, redact=phone.redact,
                            role=self.model_role)
        self.processor = Processor((phase, MemoryUpdate()), recorder=StepRecorder())

    async def process(self, context: RunContext) -> None:
        if context.interrupted:
            self.fail_with(context.stop_reason)
            return
        await self.run_step(context, self.processor, self.new_step(context))

    async def hand_back(self, context: RunContext) -> None:
        """Tell the manager how the script went."""
        done = getattr(self.parent, "subtask_done", None)
        if done is not None:
            done(context, self, ok=self.status == MobileAgentStatus.FINISH)
