"""The states of the flat MobileAgent: NONE -> CONTINUE* -> (FINISH | FAIL -> FINISH), with
CONTINUE -> TAKEOVER -> CONTINUE when the model asks a person to take over, and CONTINUE -> CONFIRM
-> CONTINUE when an action waits for a person's approval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ufo_mobile.errors import UnknownStateError
from ufo_mobile.states.base import AgentState, AgentStateManager
from ufo_mobile.states.status import MODEL_STATUSES, NONE_STATE, MobileAgentStatus

if TYPE_CHECKING:
    from ufo_mobile.agents.base import BasicAgent
    from ufo_mobile.context import RunContext


class MobileAgentStateManager(AgentStateManager):
    @property
    def none_state(self) -> AgentState:
        return self.get_state(NONE_STATE)


class MobileAgentState(AgentState):
    """Shared behaviour: the next state is the one named by the agent's status."""

    async def handle(self, agent: BasicAgent, context: RunContext) -> None:
        return None

    def next_state(self, agent: BasicAgent) -> AgentState:
        return agent.state_manager.get_state(agent.status)

    @classmethod
    def agent_class(cls) -> type[Any]:
        from ufo_mobile.agents.mobile import MobileAgent

        return MobileAgent


@MobileAgentStateManager.register
class ContinueMobileAgentState(MobileAgentState):
    """Run one step of the four-phase processor."""

    async def handle(self, agent: BasicAgent, context: RunContext) -> None:
        await agent.process(context)

    def next_state(self, agent: BasicAgent) -> AgentState:
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
    """The round is over. Cleanup has nothing left to do here."""

    def next_state(self, agent: BasicAgent) -> AgentState:
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
    """Record the reason and the final screen, then move to FINISH. The outcome stays failed."""

    async def handle(self, agent: BasicAgent, context: RunContext) -> None:
        await agent.on_fail(context)

    def next_state(self, agent: BasicAgent) -> AgentState:
        return agent.state_manager.get_state(MobileAgentStatus.FINISH)

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.FAIL


@MobileAgentStateManager.register
class TakeoverMobileAgentState(MobileAgentState):
    """A person does on the phone what the model asked for; then the agent looks again."""

    async def handle(self, agent: BasicAgent, context: RunContext) -> None:
        await agent.take_over(context)

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.TAKEOVER


@MobileAgentStateManager.register
class ConfirmMobileAgentState(MobileAgentState):
    """A person approves (or refuses) the action the last step chose; approved, it runs."""

    async def handle(self, agent: BasicAgent, context: RunContext) -> None:
        await agent.confirm(context)

    @classmethod
    def name(cls) -> str:
        return MobileAgentStatus.CONFIRM


@MobileAgentStateManager.register
class NoneMobileAgentState(MobileAgentState):
    """Before the first step."""

    def next_state(self, agent: BasicAgent) -> AgentState:
        return agent.state_manager.get_state(MobileAgentStatus.CONTINUE)

    @classmethod
    def name(cls) -> str:
        return NONE_STATE
