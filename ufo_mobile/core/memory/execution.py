"""Where a run is (seed 003's execution state): the agent and state running, the step, and how the
run stands: RUNNING, INTERRUPTED, COMPLETED or ERROR.

The run context holds one (``RunContext.execution``). Every move an agent's machine makes reaches
``moved`` through the machine's after-move hook (``ufo_mobile/core/states/rulebook.py``); a stop
asked from outside (a signal, ``RunContext.interrupt``) reaches ``request_stop``, and a run cancelled
at once (``RunContext.abandon``) ``abandon``. Once the run has ended (COMPLETED, ERROR or
INTERRUPTED) its status stays: a host's cleanup move (FAIL -> FINISH) does not make a failure a
success. ``run.json`` carries it as ``execution``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from ufo_mobile.core.status import MobileAgentStatus


class ExecutionStatus(StrEnum):
    """How a run stands: RUNNING, then COMPLETED, INTERRUPTED or ERROR once it has ended."""

    RUNNING = "RUNNING"
    INTERRUPTED = "INTERRUPTED"  # stopped from outside (a signal): it ended on the stop's reason
    COMPLETED = "COMPLETED"  # the round ended in FINISH
    ERROR = "ERROR"  # the round ended in FAIL for any other reason


class ExecutionState(BaseModel):
    """The run's position and standing, kept up to date by the runtime (bookkeeping only)."""

    current_node: str = ""  # the agent running (its name)
    current_state: str = ""  # ... and its state
    step: int = 0
    status: ExecutionStatus = ExecutionStatus.RUNNING
    interrupt_node: str = ""  # the agent running when the stop was asked
    interrupt_reason: str = ""
    stop_requested: bool = False

    def is_running(self) -> bool:
        """Whether the run has not ended yet."""
        return self.status == ExecutionStatus.RUNNING

    def is_interrupted(self) -> bool:
        """Whether the run ended stopped from outside."""
        return self.status == ExecutionStatus.INTERRUPTED

    def is_stopped_requested(self) -> bool:
        """Whether a stop was asked (the run may still be ending its step)."""
        return self.stop_requested

    def moved(self, node: str, state: str, *, step: int, reason: str = "", ends_round: bool = False) -> None:
        """``node`` is now in ``state`` at ``step``; a round-ending state decides how the run ended."""
        self.current_node, self.current_state, self.step = node, state, step
        if ends_round:
            self.end(failed=state != MobileAgentStatus.FINISH, reason=reason)

    def end(self, *, failed: bool, reason: str = "") -> None:
        """The run ended, failed or not (a no-op once it has): COMPLETED, INTERRUPTED when it failed on
        the stop's reason (as ``RunResult.interrupted`` counts it), else ERROR."""
        if not self.is_running():
            return
        if not failed:
            self.status = ExecutionStatus.COMPLETED
        elif self.stop_requested and reason == self.interrupt_reason:
            self.status = ExecutionStatus.INTERRUPTED
        else:
            self.status = ExecutionStatus.ERROR

    def request_stop(self, reason: str) -> None:
        """A stop was asked for ``reason``; the first one is kept, with the agent that was running."""
        if not self.stop_requested:
            self.stop_requested, self.interrupt_reason, self.interrupt_node = True, reason, self.current_node

    def abandon(self) -> None:
        """The run is cancelled at once (a second signal): it ends interrupted, unless it had ended."""
        if self.is_running():
            self.status = ExecutionStatus.INTERRUPTED

    def to_json(self) -> dict[str, Any]:
        """The state as JSON-ready data (``execution`` in ``run.json``)."""
        return self.model_dump(mode="json")
