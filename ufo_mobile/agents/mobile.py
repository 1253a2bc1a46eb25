"""The flat MobileAgent: one four-phase processor driven by the CONTINUE/FINISH/FAIL machine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ufo_mobile.agents.base import BasicAgent
from ufo_mobile.agents.limits import LimitGuard, StepTimer, event_loop_timer
from ufo_mobile.context import RunContext
from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.errors import DeviceError, RunWriteError
from ufo_mobile.llm.base import ChatModel
from ufo_mobile.memory.records import StepRecord
from ufo_mobile.memory.reducers import apply_update
from ufo_mobile.memory.state import SharedState
from ufo_mobile.processors.action_execution import ActionExecution
from ufo_mobile.processors.base import Middleware, Processor
from ufo_mobile.processors.context import StepContext
from ufo_mobile.processors.data_collection import DataCollection
from ufo_mobile.processors.llm_interaction import LLMInteraction
from ufo_mobile.processors.memory_update import MemoryUpdate
from ufo_mobile.processors.recorder import StepRecorder
from ufo_mobile.settings import Settings
from ufo_mobile.states.mobile import MobileAgentStateManager
from ufo_mobile.states.rulebook import MOBILE_RULES
from ufo_mobile.states.status import MobileAgentStatus
from ufo_mobile.tools.build import build_tool_registry
from ufo_mobile.tools.credentials import CredentialManager
from ufo_mobile.tools.registry import ToolRegistry
from ufo_mobile.ui.cache import ControlCache
from ufo_mobile.ui.format import FormatOptions
from ufo_mobile.ui.provider import AndroidStateProvider, StateProvider


class MobileAgent(BasicAgent):
    def __init__(self, name: str, *, device: DeviceDriver, model: ChatModel, settings: Settings,
                 tools: ToolRegistry | None = None, state_manager: MobileAgentStateManager | None = None,
                 middleware: tuple[Middleware, ...] = (), logger: Any = None,
                 clock: Callable[[], float] = time.monotonic, step_timer: StepTimer = event_loop_timer,
                 state_provider: StateProvider | None = None, credentials: CredentialManager | None = None) -> None:
        super().__init__(name, state_manager or MobileAgentStateManager(), MOBILE_RULES, logger=logger)
        self.device = device
        self.model = model
        self.settings = settings
        self.credentials = credentials or CredentialManager()
        self._redact: Callable[[str], str] | None = None  # the run's Redactor.text, once the run is known
        self.state_provider: StateProvider = state_provider or AndroidStateProvider(
            device, dump_retries=settings.perception.dump_retries, redact=self._redact_dump, logger=logger,
            format_options=FormatOptions(legend=False))  # the legend is in the system prompt
        self.tools = tools or build_tool_registry(settings, device, self.state_provider, self.credentials)
        self.clock = clock
        self.cache = ControlCache(settings.perception.control_cache_ttl_seconds, clock=clock)
        self.records: list[StepRecord] = []
        self.shared = SharedState()  # the instruction comes from the run context (redacted) on the first step
        self.limits = LimitGuard(settings.limits)
        self.middleware = middleware
        self.logger = logger
        self.answer = ""
        self.step_timer = step_timer
        self._processor: Processor | None = None

    def _redact_dump(self, text: str) -> str:
        """Secrets typed into a visible field never reach the model or the logs."""
        return self._redact(text) if self._redact is not None else text

    def processor(self, context: RunContext) -> Processor:
        """The processor is built once per run: its phases keep per-run caches (apps)."""
        if self._processor is None:
            self._redact = context.writer.redactor.text
            p, a = self.settings.perception, self.settings.agent
            phases = (
                DataCollection(self.device, self.cache, p, logger=context.logger, clock=self.clock,
                               provider=self.state_provider),
                LLMInteraction(self.model, self.tools, self.records, history_steps=a.history_steps,
                               vision=self.settings.model.vision, image_detail=p.image_detail,
                               clean_screenshot=p.send_clean_screenshot, secret_ids=self.credentials.ids(),
                               logger=context.logger, redact=context.writer.redactor.text),
                ActionExecution(self.tools, self.device, self.cache, a, state_provider=self.state_provider,
                                credentials=self.credentials),
                MemoryUpdate(self.records),
            )
            recorder = StepRecorder(context.writer, annotate=p.annotate)
            self._processor = Processor(phases, recorder=recorder, middleware=self.middleware)
        return self._processor

    async def process(self, context: RunContext) -> None:
        if context.interrupted:
            self.fail_with(context.stop_reason)
            return
        context.step += 1
        self.step, self.run_id = context.step, context.run_id
        if not self.shared.instruction:
            self.shared = apply_update(self.shared, {"instruction": context.request})
        ctx = StepContext(run_id=context.run_id, step=context.step, agent_name=self.name,
                          request=context.request, shared=self.shared)
        task = asyncio.ensure_future(self.processor(context).process(ctx))
        context.current_step_task, context.current_step = task, ctx
        timeout = self.settings.limits.step_timeout_seconds
        timer = self.step_timer(timeout, lambda: context.cancel_step(f"step {ctx.step} timed out after {timeout:g} s"))
        try:
            await task
        except RunWriteError as exc:  # not even the step's line could be written
            ctx.fail(str(exc))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not (task.cancelled() and ctx.status == MobileAgentStatus.FAIL
                    and (current is None or current.cancelling() == 0)):
                raise  # this coroutine itself was cancelled: not ours to absorb
        finally:
            timer.cancel()
            context.current_step_task, context.current_step = None, None
        self._after_step(context, ctx)

    def _after_step(self, context: RunContext, ctx: StepContext) -> None:
        self.shared = ctx.shared
        context.usage = context.usage + ctx.usage
        limit = self.limits.check(ctx, self.shared, ctx.step)
        if limit is not None:
            ctx.fail(limit)
        self.status, self.reason = ctx.status, ctx.reason
        if ctx.status == MobileAgentStatus.FINISH:
            self.answer = ctx.reason
            self.shared = apply_update(self.shared, {"finished": True, "success": True})
        elif ctx.status == MobileAgentStatus.FAIL:
            self.shared = apply_update(self.shared, {"finished": True, "success": False})
        if context.on_step is not None:
            context.on_step(ctx)

    async def on_fail(self, context: RunContext) -> None:
        """Keep the final screen and the reason; a dead device must not hide the reason."""
        context.logger.warning("run_failed", step=context.step, reason=self.reason)
        try:
            png = await asyncio.wait_for(self.device.screenshot(),
                                         self.settings.device.command_timeout_seconds)
        except (DeviceError, TimeoutError, NotImplementedError) as exc:
            context.logger.warning("final_screenshot_unavailable", error=str(exc))
            return
        try:
            context.writer.write_file("final.png", png)
        except RunWriteError as exc:
            context.logger.warning("final_screenshot_not_written", error=str(exc))
