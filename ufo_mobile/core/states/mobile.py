"""The states of the flat MobileAgent: NONE -> CONTINUE* -> (FINISH | FAIL), with CONTINUE ->
TAKEOVER -> CONTINUE when the model asks a person to take over, CONTINUE -> PENDING -> CONTINUE when it
asks the user a question, CONTINUE -> CONFIRM -> CONTINUE when an action waits for a person's
approval (the same step goes on), and NONE -> FAIL when the run cannot start (no device).

FINISH and FAIL end the round and the subtask (seed 004); the round loop then runs the final
state's ``handle`` once (FAIL keeps the final screen). The legal moves are the rulebook's
(``MOBILE_RULES``); ``next_state`` only names the state the agent's status asks for and checks it
against the rulebook, it never restates the moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ufo_mobile.core.states.base import AgentLike, AgentState, AgentStateManager
from ufo_mobile.core.status import MODEL_STATUSES, NONE_STATE, MobileAgentStatus
from ufo_mobile.errors import StateMachineError, UnknownStateError

if TYPE_CHECKING:
    from ufo_mobile.core.context import RunContext


def need_context(context: RunContext | None, state: AgentState) -> RunContext:
    """The run context a working state needs (``handle``'s ``context`` is optional in UFO's API)."""
    if context is None:
        raise StateMachineError(f"{state!r} does work and needs the run context")
    return context


class MobileAgentStateManager(AgentStateManager):
    """The registry of these states (its own declarations: see ``AgentStateManager``)."""


class MobileAgentState(AgentState):
    """Shared behaviour: the next state is the one named by the agent's status."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        return None

    def next_state(self, agent: AgentLike) -> AgentState:
        return agent.state_manager.get_state(agent.status)


@MobileAgentStateManager.register
class ContinueMobileAgentState(MobileAgentState):
    """Run one step of the four-phase processor."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.process(need_context(context, self))

    def next_state(self, agent: AgentLike) -> AgentState:
        manager = agent.state_manager
        try:
            state = manager.get_state(agent.status)
        except UnknownStateError:
            agent.fail_with(f"the model answered with unknown status {agent.status!r} "
                            f"(expected one of {', '.join(MODEL_STATUSES)})")
            return manager.get_state(MobileAgentStatus.FAIL)
        if not agent.machine.can_move(state.name()):
            agent.fail_with(f"the model asked for status {agent.status!r}, which is not a move from CONTINUE")
            return manager.get_state(MobileAgentStatus.FAIL)
        return state

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.CONTINUE


@MobileAgentStateManager.register
class FinishMobileAgentState(MobileAgentState):
    """The round is over. Cleanup has nothing left to do here; staying in FINISH is a no-op."""

    def next_state(self, agent: AgentLike) -> AgentState:
        return self

    def is_round_end(self) -> bool:
        return True

    def is_subtask_end(self) -> bool:
        return True

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.FINISH


@MobileAgentStateManager.register
class FailMobileAgentState(MobileAgentState):
    """The round ends in failure. Its work, run once at the end of the round, keeps the reason and
    the final screen; a host that drives it further moves it to FINISH (cleanup). The outcome stays
    failed."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.on_fail(need_context(context, self))

    def next_state(self, agent: AgentLike) -> AgentState:
        return agent.state_manager.get_state(MobileAgentStatus.FINISH)

    def is_round_end(self) -> bool:
        return True

    def is_subtask_end(self) -> bool:
        return True

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.FAIL


@MobileAgentStateManager.register
class TakeoverMobileAgentState(MobileAgentState):
    """A person does on the phone what the model asked for; then the agent looks again."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.take_over(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.TAKEOVER


@MobileAgentStateManager.register
class PendingMobileAgentState(MobileAgentState):
    """The model asked the user a question (UFO's PENDING): the answer comes back for the next step,
    or, with nobody to answer, the run ends as needing a person."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.ask_user(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.PENDING


@MobileAgentStateManager.register
class ConfirmMobileAgentState(MobileAgentState):
    """A person approves (or refuses) the action the last step chose; approved, it runs."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.confirm(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.CONFIRM


@MobileAgentStateManager.register
class NoneMobileAgentState(MobileAgentState):
    """Before the first step: CONTINUE, or FAIL when the run could not start (``fail_with``)."""

    def next_state(self, agent: AgentLike) -> AgentState:
        failed = agent.status == MobileAgentStatus.FAIL
        return agent.state_manager.get_state(MobileAgentStatus.FAIL if failed else MobileAgentStatus.CONTINUE)

    @classmethod
    def name(cls) -> str:
        return NONE_STATE
