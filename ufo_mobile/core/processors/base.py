"""The processor: ordered phases over one ``StepContext``, with middleware and a recorder.

``process`` runs each phase in order, timing it and merging what it returns into the shared state
through the reducers: a partial update (field -> value), a list of chat messages (appended to
``message_history`` through ``add_messages``), or nothing. An expected runtime failure (device, UI dump, model, action)
ends the task: the step's status becomes FAIL with the failing phase and message as the reason.
Phases marked ``always`` (memory update) still run after a failure, and the recorder runs in a
``finally``, so every step that started is on disk, even when it was cancelled or crashed.

Whoever watches the run live (``RunContext.on_progress``) is told as each phase starts (and
``recording`` as the recorder does), and the model's thought as soon as a phase has read it; a
model client's retries reach it too, through the step's sink (``ufo_mobile/core/trace/progress.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from time import perf_counter
from typing import Any, Protocol

from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.trace.progress import Progress, reporting
from ufo_mobile.errors import (
    ConfigError,
    DeviceDisconnectedError,
    DeviceTimeoutError,
    RunWriteError,
    StateMachineError,
    UfoMobileError,
)

#: What a phase may return: a partial shared-state update, chat messages for the history, or nothing.
PhaseResult = Mapping[str, Any] | Sequence[ChatMessage] | None


def as_update(result: PhaseResult) -> Mapping[str, Any] | None:
    """A phase's result as a shared-state update.

    Raises:
        TypeError: the result is neither an update, nor chat messages, nor None.
    """
    if result is None or isinstance(result, Mapping):
        return result
    messages = list(result)
    if not all(isinstance(m, ChatMessage) for m in messages):
        raise TypeError(f"a phase returned {type(result).__name__} of something other than chat messages")
    return {"message_history": messages} if messages else None


class Phase(Protocol):
    @property
    def name(self) -> str:
        """The phase's name in timings, logs and error reasons."""
        ...

    @property
    def always(self) -> bool:
        """Run even after an earlier phase failed (memory update)."""
        ...

    async def run(self, ctx: StepContext) -> PhaseResult:
        """Do the phase's work; return a partial shared-state update, chat messages, or None."""
        ...


class Middleware:
    """Hooks around every phase. Override what you need; all default to doing nothing."""

    async def before(self, ctx: StepContext, phase: str) -> None:
        return None

    async def after(self, ctx: StepContext, phase: str) -> None:
        return None

    async def on_error(self, ctx: StepContext, phase: str, error: BaseException) -> None:
        return None


Recorder = Callable[[StepContext], Awaitable[None]]
RECORDING = "recording"  # the phase name the recorder is reported under


def tell(ctx: StepContext, event: Progress) -> None:
    """Report ``event`` of the step ``ctx`` to whoever watches its run live (none outside a run)."""
    if ctx.run is not None:
        ctx.run.progress(replace(event, step=ctx.step, agent=ctx.agent_name))


def thought_of(ctx: StepContext) -> str:
    """The thought of the step's model reply so far: a flat agent's or executor's, or the manager's."""
    if ctx.reply is not None:
        return ctx.reply.thought
    manager = ctx.extra.get("manager_reply")
    return str(manager.get("thought") or "") if isinstance(manager, dict) else ""

# Errors that are a fault of the program or its configuration, never a fact of the run.
_PROGRAMMING = (ConfigError, StateMachineError)


class Processor:
    def __init__(self, phases: Sequence[Phase], *, recorder: Recorder | None = None,
                 middleware: Sequence[Middleware] = ()) -> None:
        self.phases = tuple(phases)
        self.middleware = tuple(middleware)
        self._recorder = recorder

    async def process(self, ctx: StepContext) -> StepContext:
        with reporting(lambda event: tell(ctx, event)):
            shown = thought_of(ctx)  # a step that goes on after an approval has shown its thought
            try:
                for phase in self.phases:
                    if ctx.failed_phase is not None and not phase.always:
                        continue
                    await self._run_phase(phase, ctx)
                    if (thought := thought_of(ctx)) and thought != shown:
                        tell(ctx, Progress("thought", text=thought))
                        shown = thought
            finally:
                if self._recorder is not None:
                    tell(ctx, Progress("phase", phase=RECORDING))
                    await self._recorder(ctx)
        return ctx

    async def _run_phase(self, phase: Phase, ctx: StepContext) -> None:
        tell(ctx, Progress("phase", phase=phase.name))
        for m in self.middleware:
            await m.before(ctx, phase.name)
        start = perf_counter()
        try:
            update = await phase.run(ctx)
        except UfoMobileError as exc:
            ctx.timings[phase.name] = perf_counter() - start
            await self._on_error(ctx, phase.name, exc)
            if isinstance(exc, _PROGRAMMING):
                raise
            ctx.failed_phase = phase.name
            ctx.error = f"{type(exc).__name__}: {exc}"
            ctx.device_lost = isinstance(exc, DeviceTimeoutError | DeviceDisconnectedError)
            # a full disk is the run's problem, not the phase's: its reason names the file
            ctx.fail(str(exc) if isinstance(exc, RunWriteError) else f"{phase.name} failed: {exc}")
            return
        except BaseException as exc:
            ctx.timings[phase.name] = perf_counter() - start
            ctx.failed_phase = phase.name
            cancelled = isinstance(exc, asyncio.CancelledError)
            ctx.error = f"cancelled: {ctx.reason or 'no reason given'}" if cancelled else f"{type(exc).__name__}: {exc}"
            await self._on_error(ctx, phase.name, exc)
            raise
        ctx.timings[phase.name] = perf_counter() - start
        ctx.shared = apply_update(ctx.shared, as_update(update))
        for m in reversed(self.middleware):
            await m.after(ctx, phase.name)

    async def _on_error(self, ctx: StepContext, phase: str, exc: BaseException) -> None:
        for m in self.middleware:
            await m.on_error(ctx, phase, exc)
