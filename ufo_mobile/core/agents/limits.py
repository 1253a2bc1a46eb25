"""Run limits. Each one, when hit, turns the step's status into FAIL with a reason."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from hashlib import blake2b
from typing import Protocol

from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.status import ManagerStatus, MobileAgentStatus
from ufo_mobile.settings import LimitSettings


class TimerHandle(Protocol):
    """A started timer (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None:
        """Stop the timer before it fires."""
        ...


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

    def check(self, ctx: StepContext, shared: SharedState) -> str | None:
        """The reason to stop, or None. Only a step that goes on (CONTINUE, or a manager's ASSIGN)
        can be stopped. The step budget counts actions and the final answer (``processors.budget``):
        a run with no step left but the final answer's goes on to that answer."""
        if ctx.status not in (MobileAgentStatus.CONTINUE, ManagerStatus.ASSIGN):
            return None
        s = self.settings
        failures = shared.consecutive_failures()
        if failures >= s.max_consecutive_failures:
            last = shared.summary_history[-1] if shared.summary_history else ""
            return f"{failures} consecutive actions failed (limit {s.max_consecutive_failures}); last: {last}"
        actions = ctx.actions
        if actions and ctx.observation is not None:
            done = "; ".join(a.render() for a in actions)
            screen = blake2b(ctx.observation.ui_state.formatted_text.encode(), digest_size=8).hexdigest()
            self._recent.append((done, screen))
            if len(self._recent) == self._recent.maxlen and len(set(self._recent)) == 1:
                return (f"the same action {done} was repeated {s.max_repeated_actions} times "
                        "on an unchanged screen")
        if shared.steps_used >= s.max_steps:
            return ctx.budget().limit_reason()
        return None
