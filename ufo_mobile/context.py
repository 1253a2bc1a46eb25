"""What every agent and state of one run shares: ids, the run directory, logging, stop flag."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ufo_mobile.llm.base import Usage
from ufo_mobile.trace.writer import RunWriter

if TYPE_CHECKING:
    from ufo_mobile.processors.context import StepContext


@dataclass
class RunContext:
    run_id: str
    request: str
    writer: RunWriter
    logger: Any
    step: int = 0
    usage: Usage = Usage()
    interrupted: bool = False
    on_step: Callable[[StepContext], None] | None = None
    current_step_task: asyncio.Task[Any] | None = field(default=None, repr=False)
    current_step: StepContext | None = field(default=None, repr=False)

    @property
    def run_dir(self) -> Path:
        return self.writer.run_dir

    def cancel_step(self, reason: str) -> bool:
        """Fail the running step with ``reason`` and cancel it; it is still recorded. False if none runs."""
        task, step = self.current_step_task, self.current_step
        if task is None or step is None or task.done():
            return False
        step.fail(reason)  # before cancelling, so the recorded step says why it ended
        task.cancel()
        return True

    def interrupt(self) -> None:
        """Ask the run to stop (Ctrl-C): the running step is cancelled and recorded."""
        self.interrupted = True
        self.cancel_step("interrupted")
