"""The agent side of the UFO state API: an agent holds its state and its rulebook position."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ufo_mobile.errors import StateMachineError
from ufo_mobile.states.base import AgentState, AgentStateManager
from ufo_mobile.states.rulebook import AgentMachine, Rulebook
from ufo_mobile.states.status import MobileAgentStatus

if TYPE_CHECKING:
    from ufo_mobile.context import RunContext


class BasicAgent:
    """An agent: a name, a state from its own registry, a status, and the reason for it."""

    def __init__(self, name: str, state_manager: AgentStateManager, rules: Rulebook, *,
                 logger: Any = None) -> None:
        self.name = name
        self.state_manager = state_manager
        self.machine = AgentMachine(rules, logger=logger, agent_name=name)
        self._state: AgentState = state_manager.none_state
        self.status: str = MobileAgentStatus.CONTINUE
        self.reason: str = ""
        self.run_id: str = ""
        self.step: int = 0
        self.failed = False

    @property
    def state(self) -> AgentState:
        return self._state

    def set_state(self, state: AgentState) -> None:
        """Move to ``state``; the rulebook must allow it.

        Raises:
            StateMachineError: the state belongs to another kind of agent.
            IllegalTransitionError: the rulebook has no such move.
        """
        if not isinstance(self, state.agent_class()):
            raise StateMachineError(f"{state!r} is not a state of {type(self).__name__}")
        self.machine.move(state.name(), step=self.step, reason=self.reason, run_id=self.run_id)
        self._state = state
        if state.name() == MobileAgentStatus.FAIL:
            self.failed = True

    def fail_with(self, reason: str) -> None:
        """Decide that the next state is FAIL, for ``reason``."""
        self.status = MobileAgentStatus.FAIL
        self.reason = reason

    async def handle(self, context: RunContext) -> None:
        await self.state.handle(self, context)

    async def process(self, context: RunContext) -> None:
        """Run one step (the CONTINUE state's work)."""
        raise NotImplementedError

    async def take_over(self, context: RunContext) -> None:
        """Have a person do what the model asked (the TAKEOVER state's work)."""
        raise NotImplementedError

    async def confirm(self, context: RunContext) -> None:
        """Have a person approve the pending action, then run it (the CONFIRM state's work)."""
        raise NotImplementedError

    async def on_fail(self, context: RunContext) -> None:
        """Record the failure (the FAIL state's work). The default does nothing."""
