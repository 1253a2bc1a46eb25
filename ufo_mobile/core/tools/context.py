"""The data an action works with and the data it gives back.

``ActionContext`` is what every tool function receives as ``ctx``: the driver, the screen the model
saw (``ui``), the shared state (read it, never change it), the state provider and the credential
manager, plus what the runtime needs (observation id, control cache, installed apps, timings and
an injectable ``sleep``).

``ActionResult`` is what a tool returns. Besides ``success`` and ``summary`` (the line the model
reads next turn) it may carry ``state_update``, a partial shared-state update that the
action-execution phase merges through the reducers, and ``completion``, which ends the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ufo_mobile.core.device.base import AppInfo, DeviceDriver
    from ufo_mobile.core.memory.state import SharedState
    from ufo_mobile.core.tools.credentials import CredentialManager
    from ufo_mobile.core.ui.cache import ControlCache
    from ufo_mobile.core.ui.provider import StateProvider
    from ufo_mobile.core.ui.state import UIState

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class TaskCompletion:
    """The task is over: FINISH when ``success``, FAIL otherwise; ``message`` is the answer or reason."""

    success: bool
    message: str


@dataclass(frozen=True)
class ActionResult:
    """The outcome of one tool call.

    Attributes:
        success: whether the action did what was asked.
        summary: one line for the model (and the progress line): what happened, or why not.
        data: extra JSON-ready details for the run directory.
        state_update: shared-state fields to merge (through their reducers) after the action.
        completion: set by ``complete``: the task ends with this outcome.
    """

    success: bool
    summary: str
    data: dict[str, Any] = field(default_factory=dict)
    state_update: Mapping[str, Any] | None = None
    completion: TaskCompletion | None = None

    @classmethod
    def failed(cls, summary: str) -> ActionResult:
        """A failed action, with ``summary`` saying why."""
        return cls(success=False, summary=summary)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (empty parts left out)."""
        out: dict[str, Any] = {"success": self.success, "summary": self.summary}
        if self.data:
            out["data"] = self.data
        if self.state_update:
            out["state_update"] = dict(self.state_update)
        if self.completion is not None:
            out["completion"] = {"success": self.completion.success, "message": self.completion.message}
        return out


@dataclass
class ActionContext:
    """Everything a tool may use. One is made per action by the action-execution phase.

    ``ui`` is the observation the model decided on; control indices refer to it, and
    ``observation_id`` must be its id (otherwise index-based actions fail as stale).
    """

    driver: DeviceDriver
    ui: UIState
    shared_state: SharedState
    state_provider: StateProvider | None = None
    credential_manager: CredentialManager | None = None
    observation_id: str = ""
    cache: ControlCache | None = None
    apps: list[AppInfo] = field(default_factory=list)
    swipe_duration_ms: int = 300  # what ``scroll`` uses
    max_wait_seconds: float = 10.0  # the cap on ``wait``
    sleep: Sleep = asyncio.sleep  # tests pass one that returns at once

    def __post_init__(self) -> None:
        if not self.observation_id:
            self.observation_id = self.ui.observation_id


@dataclass(frozen=True)
class ToolExecutionEvent:
    """Sent to ``workflow_ctx`` after every execution (the shape of DroidRun's event)."""

    tool_name: str
    tool_args: Mapping[str, Any]
    success: bool
    summary: str


class EventStream(Protocol):
    """What ``ToolRegistry.execute`` accepts as ``workflow_ctx`` (a llama-index ``Context`` fits)."""

    def write_event_to_stream(self, ev: Any) -> None:
        """Take one event (a ``ToolExecutionEvent`` after each call)."""
        ...
