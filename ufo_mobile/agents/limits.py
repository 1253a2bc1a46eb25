"""Run limits. Each one, when hit, turns the step's status into FAIL with a reason."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from hashlib import blake2b
from typing import Protocol

from ufo_mobile.memory.state import SharedState
from ufo_mobile.processors.context import StepContext
from ufo_mobile.settings import LimitSettings
from ufo_mobile.status import MobileAgentStatus


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


#: Starts a timer: ``timer(seconds, callback)`` calls ``callback()`` once after ``seconds`` unless the
#: returned handle is cancelled first. Tests pass one they fire themselves, never real time.
StepTimer = Callable[[float, Callable[[], object]], TimerHandle]


def event_loop_timer(seconds: float, callback: Callable[[], object]) -> TimerHandle:
    """The real step timer: the running event loop's ``call_later``."""
    return asyncio.get_running_loop().call_later(seconds, callback)


class LimitGuard:
    """Checks the limits after every step; stateful (remembers recent actions)."""

    def __init__(self, settings: LimitSettings) -> None:
        self.settings = settings
        self._recent: deque[tuple[str, str]] = deque(maxlen=settings.max_repeated_actions)

    def check(self, ctx: StepContext, shared: SharedState, steps_taken: int) -> str | None:
        """The reason to stop, or None. Only a step that goes on (CONTINUE, or a manager's ASSIGN)
        can be stopped."""
        if ctx.status not in (MobileAgentStatus.CONTINUE, MobileAgentStatus.ASSIGN):
            return None
        s = self.settings
        failures = shared.consecutive_failures()
        if failures >= s.max_consecutive_failures:
            last = shared.summary_history[-1] if shared.summary_history else ""
            return f"{failures} consecutive actions failed (limit {s.max_consecutive_failures}); last: {last}"
        if ctx.action is not None and ctx.observation is not None:
            screen = blake2b(ctx.observation.ui_state.formatted_text.encode(), digest_size=8).hexdigest()
            self._recent.append((ctx.action.render(), screen))
            if len(self._recent) == self._recent.maxlen and len(set(self._recent)) == 1:
                return (f"the same action {ctx.action.render()} was repeated {s.max_repeated_actions} times "
                        "on an unchanged screen")
        if steps_taken >= s.max_steps:
            return f"reached the step limit ({s.max_steps} steps) without finishing"
        return None
