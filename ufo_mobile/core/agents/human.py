"""A person in the loop: who takes over the phone when the model asks, and who approves actions.

The runtime never talks to a person directly: it asks an ``Operator``. The command line gives it a
terminal operator when it runs in a terminal; a host passes its own (``CallbackOperator`` wraps
functions). Without an operator, a question or a takeover ends the run as needing a person (FAIL,
outcome ``needs_person``), and an action that needs approval is handled by ``human.unattended``.

Which actions need approval is the task file's ``human.confirm``: by tool name, by the app in the
foreground, or when the model flags the action itself (``"confirm": true``).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from ufo_mobile.core.processors.confirm import ConfirmPolicy

if TYPE_CHECKING:
    from ufo_mobile.core.context import RunContext

T = TypeVar("T")

__all__ = ["AskAnswer", "AskRequest", "CallbackOperator", "ConfirmAnswer", "ConfirmPolicy", "ConfirmRequest",
           "Operator", "PersonInTheLoop", "TakeoverAnswer", "TakeoverRequest"]


@dataclass(frozen=True)
class TakeoverRequest:
    """The model asks a person to do something on the phone."""

    run_id: str
    step: int
    message: str  # what the person should do, in the model's words (already redacted)
    app: str  # the app in the foreground


@dataclass(frozen=True)
class TakeoverAnswer:
    """A person's answer to a ``TakeoverRequest``."""

    done: bool  # False: the person will not (or cannot) do it; the run ends in FAIL
    note: str = ""  # what the person says happened; the model reads it next step


@dataclass(frozen=True)
class ConfirmRequest:
    """An action waits for a person's approval."""

    run_id: str
    step: int
    action: str  # the action as shown in progress lines, e.g. click(index=7, text='Pay')
    app: str
    why: str  # which rule asked for approval


@dataclass(frozen=True)
class ConfirmAnswer:
    """A person's answer to a ``ConfirmRequest``: whether the action may run."""

    approved: bool
    note: str = ""  # with a refusal, the model reads it next step


@dataclass(frozen=True)
class AskRequest:
    """The model asks the user a question (status PENDING)."""

    run_id: str
    step: int
    question: str  # in the model's words (already redacted)
    app: str


@dataclass(frozen=True)
class AskAnswer:
    """The user's answer to an ``AskRequest``."""

    answered: bool  # False: no answer (the run ends as needing a person)
    text: str = ""  # the answer, which the model reads next step


@runtime_checkable
class Operator(Protocol):
    """A person (or a host speaking for one)."""

    async def take_over(self, request: TakeoverRequest) -> TakeoverAnswer:
        """Have the person do on the phone what the model asked for; return once they are done (or will not)."""
        ...

    async def confirm(self, request: ConfirmRequest) -> ConfirmAnswer:
        """Ask the person whether the action may run."""
        ...

    async def ask(self, request: AskRequest) -> AskAnswer:
        """Put the model's question to the user and return their answer."""
        ...


TakeoverCallback = Callable[[TakeoverRequest], TakeoverAnswer | Awaitable[TakeoverAnswer]]
ConfirmCallback = Callable[[ConfirmRequest], ConfirmAnswer | Awaitable[ConfirmAnswer]]
AskCallback = Callable[[AskRequest], AskAnswer | Awaitable[AskAnswer]]


class CallbackOperator:
    """An ``Operator`` made of functions (plain or async), for hosts; a missing one answers no."""

    def __init__(self, take_over: TakeoverCallback | None = None, confirm: ConfirmCallback | None = None,
                 ask: AskCallback | None = None) -> None:
        self._take_over = take_over
        self._confirm = confirm
        self._ask = ask

    async def take_over(self, request: TakeoverRequest) -> TakeoverAnswer:
        """The ``take_over`` function's answer; without one, the takeover is declined."""
        if self._take_over is None:
            return TakeoverAnswer(False, "the host takes no takeovers")
        answer = self._take_over(request)
        return await answer if inspect.isawaitable(answer) else answer

    async def confirm(self, request: ConfirmRequest) -> ConfirmAnswer:
        """The ``confirm`` function's answer; without one, the action is refused."""
        if self._confirm is None:
            return ConfirmAnswer(False, "the host confirms nothing")
        answer = self._confirm(request)
        return await answer if inspect.isawaitable(answer) else answer

    async def ask(self, request: AskRequest) -> AskAnswer:
        """The ``ask`` function's answer; without one, the question goes unanswered."""
        if self._ask is None:
            return AskAnswer(False, "the host takes no questions")
        answer = self._ask(request)
        return await answer if inspect.isawaitable(answer) else answer


class PersonInTheLoop:
    """Asks the operator one question, bounded by ``timeout`` seconds and cancellable like a step (a
    signal stops the wait). Returns the answer, or a string saying why there is none."""

    def __init__(self, operator: Operator | None, timeout: float, context: RunContext) -> None:
        self.operator = operator
        self.timeout = timeout
        self.context = context

    async def take_over(self, request: TakeoverRequest) -> TakeoverAnswer | str:
        """The operator's answer to a takeover, or why there is none."""
        if self.operator is None:
            return f"needs a person: the agent asked a person to take over ({request.message}), and nobody can answer"
        return await self._ask(self.operator.take_over(request), f"take over ({request.message})")

    async def confirm(self, request: ConfirmRequest) -> ConfirmAnswer | str:
        """The operator's approval or refusal, or why there is none."""
        if self.operator is None:
            return "nobody can approve during this run"
        return await self._ask(self.operator.confirm(request), f"approve {request.action}")

    async def ask(self, request: AskRequest) -> AskAnswer | str:
        """The user's answer to the model's question, or why there is none."""
        ask = getattr(self.operator, "ask", None) if self.operator is not None else None
        if ask is None:
            return f"needs a person: the agent asked the user: {request.question}"
        return await self._ask(ask(request), f"answer: {request.question}")

    async def _ask(self, question: Awaitable[T], what: str) -> T | str:
        context = self.context
        task = asyncio.ensure_future(question)
        context.current_step_task = task  # Ctrl-C or SIGTERM cancels the wait like a step
        context.logger.info("waiting_for_person", step=context.step, question=what)
        try:
            return await asyncio.wait_for(task, self.timeout)
        except TimeoutError:
            return f"no person answered within {self.timeout:g} s (asked to {what})"
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if context.interrupted and not context.abandoned and (current is None or current.cancelling() == 0):
                return context.stop_reason
            raise
        finally:
            context.current_step_task = None
