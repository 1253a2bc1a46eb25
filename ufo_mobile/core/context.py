"""What every agent and state of one run shares: ids, the run directory, logging, the shared
state (its one owner: agents replace it with what a step's reducers made of it), usage, stop flag,
and the execution state (``ufo_mobile/core/memory/execution.py``: where the run is, how it stands).

Stopping, in three strengths: ``interrupt`` (the first Ctrl-C or SIGTERM) cancels the running step
or connect, which is still recorded, and the agent ends in FAIL with the reason; ``abandon`` (the
second) cancels the whole run at once, and the session records FAIL with the same reason without
waiting for anything else.

Watching it live: ``on_progress`` receives what the run is doing now (``progress``: a phase that
starts, the model's thought, a retry; ``ufo_mobile/core/trace/progress.py``), ``on_step`` each step
that ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ufo_mobile.core.llm.base import ChatModel, Usage
from ufo_mobile.core.memory.execution import ExecutionState
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.trace.progress import Progress
from ufo_mobile.core.trace.writer import RunWriter

if TYPE_CHECKING:
    from ufo_mobile.core.processors.context import StepContext


@dataclass
class RunContext:
    """The state one run shares between its agents and states: ids, the run directory's writer,
    the logger, the shared state, usage and cost, and the flags and tasks that stop the run."""

    run_id: str
    request: str
    writer: RunWriter
    logger: Any
    step: int = 0
    usage: Usage = Usage()
    usage_by_role: dict[str, Usage] = field(default_factory=dict)  # the same, per agent role (see models)
    models: dict[str, ChatModel] = field(default_factory=dict, repr=False)  # settings.models, built: role -> model
    shared: SharedState = field(default_factory=SharedState)
    execution: ExecutionState = field(default_factory=ExecutionState)  # where the run is, and how it stands
    interrupted: bool = False
    stop_reason: str = ""
    stop_signal: int | None = None
    abandoned: bool = False
    on_step: Callable[[StepContext], None] | None = None
    on_progress: Callable[[Progress], None] | None = None  # what the run is doing now (see ``progress``)
    current_step_task: asyncio.Task[Any] | None = field(default=None, repr=False)
    current_step: StepContext | None = field(default=None, repr=False)
    run_task: asyncio.Task[Any] | None = field(default=None, repr=False)
    device_lost: bool = False  # the last step failed because the phone stopped answering
    # What a session host shares between its agents and rounds (``ufo_mobile.host.inprocess``): the
    # steps of the current round, each ended round's outcome, and anything else the agents agree on.
    round_step: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    blackboard: dict[str, Any] = field(default_factory=dict)

    @property
    def run_dir(self) -> Path:
        """The directory the run writes its steps, logs and report to."""
        return self.writer.run_dir

    @property
    def session_step(self) -> int:
        """Steps taken in the session so far (UFO's SESSION_STEP; the same as ``step``)."""
        return self.step

    def model_for(self, role: str, default: ChatModel) -> ChatModel:
        """The model of ``role`` when the settings name one (``models``), else ``default``."""
        return self.models.get(role, default)

    def progress(self, event: Progress) -> None:
        """Tell whoever watches the run live (``on_progress``) what it is doing now. A watcher that
        fails (a terminal that went away) is logged and told nothing more: it never stops the run."""
        if self.on_progress is None:
            return
        try:
            self.on_progress(event)
        except Exception as exc:
            self.on_progress = None
            self.logger.warning("progress_watcher_failed", error=repr(exc))

    @property
    def cost(self) -> float | None:
        """The models' cost so far in US dollars; None when a price is unknown (never a made-up $0)."""
        return self.usage.cost_usd

    def cancel_step(self, reason: str) -> bool:
        """Fail the running step with ``reason`` and cancel it; it is still recorded. False if none runs.

        The running "step" may also be the device connect before the first step (no ``StepContext``).
        """
        task, step = self.current_step_task, self.current_step
        if task is None or task.done():
            return False
        if step is not None:
            step.fail(reason)  # before cancelling, so the recorded step says why it ended
        task.cancel()
        return True

    def interrupt(self, reason: str = "interrupted", signal: int | None = None) -> None:
        """Ask the run to stop (Ctrl-C, SIGTERM): the running step is cancelled and recorded."""
        if not self.interrupted:
            self.interrupted, self.stop_reason, self.stop_signal = True, reason, signal
            self.execution.request_stop(reason)
        self.cancel_step(self.stop_reason)

    def abandon(self) -> None:
        """Stop now (a second Ctrl-C): cancel the whole run; the session still records why."""
        self.abandoned = True
        self.execution.abandon()
        if self.run_task is not None and not self.run_task.done():
            self.run_task.cancel()
