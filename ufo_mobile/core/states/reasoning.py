"""The states of reasoning mode: the manager's and its sub-agents', each set with its own registry
and its own rulebook (stated once, in ``MANAGER_RULES`` and ``SUBAGENT_RULES``).

Manager: NONE -> CONTINUE (plan) -> ASSIGN (a subgoal handed to a sub-agent through
``next_agent``) -> CONTINUE again when the sub-agent hands back, or REPLAN when the executor has
failed ``err_to_manager_thresh`` times in a row (the manager must change the plan, with the failures
in its prompt), or FAIL when the run must stop; CONTINUE and REPLAN end in ASSIGN, FINISH or FAIL.
FINISH and FAIL end the round.

Sub-agents (executor, scripter, text manipulator): NONE -> CONTINUE (one step) -> FINISH or FAIL,
through TAKEOVER or CONFIRM when a person is needed. Their FINISH and FAIL end the subtask, not
the round: their work hands back to the manager (``hand_back``), and ``next_agent`` is the manager in
the state the hand-back chose. A new assignment moves them from FINISH or FAIL to CONTINUE again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ufo_mobile.core.states.base import AgentLike, AgentState, AgentStateManager
from ufo_mobile.core.states.mobile import (
    FailMobileAgentState,
    FinishMobileAgentState,
    NoneMobileAgentState,
    need_context,
)
from ufo_mobile.core.states.rulebook import Rulebook
from ufo_mobile.core.status import NONE_STATE, ManagerStatus, SubAgentStatus
from ufo_mobile.errors import UnknownStateError

if TYPE_CHECKING:
    from ufo_mobile.core.context import RunContext

S = ManagerStatus
A = SubAgentStatus

MANAGER_RULES = Rulebook(
    name="manager",
    states=(NONE_STATE, S.CONTINUE, S.ASSIGN, S.REPLAN, S.PENDING, S.FINISH, S.FAIL),
    moves=(
        (NONE_STATE, S.CONTINUE), (NONE_STATE, S.FAIL),
        (S.CONTINUE, S.ASSIGN), (S.CONTINUE, S.FINISH), (S.CONTINUE, S.FAIL),
        (S.REPLAN, S.ASSIGN), (S.REPLAN, S.FINISH), (S.REPLAN, S.FAIL),
        (S.CONTINUE, S.PENDING), (S.REPLAN, S.PENDING),  # the manager asks the user a question
        (S.PENDING, S.CONTINUE), (S.PENDING, S.FAIL),    # ... answered, or nobody can answer
        (S.ASSIGN, S.CONTINUE),  # the sub-agent handed back
        (S.ASSIGN, S.REPLAN),    # ... after the executor failed err_to_manager_thresh times in a row
        (S.ASSIGN, S.FAIL),      # ... and the run must stop (a limit, a signal)
        (S.FAIL, S.FINISH), (S.FINISH, S.FINISH),
    ),
    initial=NONE_STATE,
    final=frozenset({S.FINISH}),
)

SUBAGENT_RULES = Rulebook(
    name="subagent",
    states=(NONE_STATE, A.CONTINUE, A.TAKEOVER, A.PENDING, A.CONFIRM, A.FINISH, A.FAIL),
    moves=(
        (NONE_STATE, A.CONTINUE),
        (A.CONTINUE, A.FINISH), (A.CONTINUE, A.FAIL), (A.CONTINUE, A.TAKEOVER), (A.CONTINUE, A.CONFIRM),
        (A.CONTINUE, A.PENDING), (A.PENDING, A.CONTINUE), (A.PENDING, A.FAIL),
        (A.TAKEOVER, A.CONTINUE), (A.TAKEOVER, A.FAIL),
        (A.CONFIRM, A.FINISH), (A.CONFIRM, A.FAIL), (A.CONFIRM, A.CONTINUE),
        (A.FINISH, A.CONTINUE), (A.FAIL, A.CONTINUE),  # the next assignment
    ),
    initial=NONE_STATE,
)


class ManagerLike(AgentLike, Protocol):
    """What the manager's states need of the manager."""

    def assignee(self) -> AgentLike:
        """The sub-agent for the current subgoal."""
        ...


class SubAgentLike(AgentLike, Protocol):
    """What a sub-agent's states need of the sub-agent."""

    parent: AgentLike

    async def hand_back(self, context: RunContext) -> None:
        """Tell the parent how the subtask went (it sets the parent's status)."""
        ...


def _by_status(agent: AgentLike, source: str) -> AgentState:
    """The state the agent's status names, when the rulebook allows the move; else FAIL."""
    try:
        state = agent.state_manager.get_state(agent.status)
    except UnknownStateError:
        agent.fail_with(f"{agent.name} ended a step with unknown status {agent.status!r}")
        return agent.state_manager.get_state(S.FAIL)
    if not agent.machine.can_move(state.name()):
        agent.fail_with(f"{agent.name}: {agent.status!r} is not a move from {source}")
        return agent.state_manager.get_state(S.FAIL)
    return state


# --- the manager ---------------------------------------------------------------------------------


class ManagerStateManager(AgentStateManager):
    """The registry of these states (its own declarations: see ``AgentStateManager``)."""


class ManagerState(AgentState):
    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        return None

    def next_state(self, agent: AgentLike) -> AgentState:
        return _by_status(agent, self.name())


ManagerStateManager.register(NoneMobileAgentState)  # CONTINUE, or FAIL when the run could not start


@ManagerStateManager.register
class ContinueManagerState(ManagerState):
    """Observe and plan (or declare the request done or impossible)."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.process(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return S.CONTINUE


@ManagerStateManager.register
class ReplanManagerState(ContinueManagerState):
    """Plan again, told which attempts failed: the executor failed too often in a row."""

    @classmethod
    def name(cls) -> str:
        return S.REPLAN


@ManagerStateManager.register
class PendingManagerState(ManagerState):
    """The manager asked the user a question: the answer is in its next turn's prompt."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.ask_user(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return S.PENDING


@ManagerStateManager.register
class AssignManagerState(ManagerState):
    """Hand the current subgoal to the sub-agent for it; it hands back when done."""

    def next_agent(self, agent: AgentLike) -> AgentLike:
        manager: ManagerLike = agent  # type: ignore[assignment]
        return manager.assignee()

    def next_state(self, agent: AgentLike) -> AgentState:
        manager: ManagerLike = agent  # type: ignore[assignment]
        return manager.assignee().state_manager.get_state(S.CONTINUE)

    @classmethod
    def name(cls) -> str:
        return S.ASSIGN


# FINISH and FAIL are the flat agent's: they end the round (FAIL keeps the final screen first)
ManagerStateManager.register(FinishMobileAgentState)
ManagerStateManager.register(FailMobileAgentState)


# --- the sub-agents ------------------------------------------------------------------------------


class SubAgentStateManager(AgentStateManager):
    """The registry of these states (its own declarations: see ``AgentStateManager``)."""


class SubAgentState(ManagerState):
    pass


@SubAgentStateManager.register
class NoneSubAgentState(SubAgentState):
    @classmethod
    def name(cls) -> str:
        return NONE_STATE


@SubAgentStateManager.register
class ContinueSubAgentState(SubAgentState):
    """One step on the assigned subgoal."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.process(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return A.CONTINUE


@SubAgentStateManager.register
class TakeoverSubAgentState(SubAgentState):
    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.take_over(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return A.TAKEOVER


@SubAgentStateManager.register
class PendingSubAgentState(SubAgentState):
    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.ask_user(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return A.PENDING


@SubAgentStateManager.register
class ConfirmSubAgentState(SubAgentState):
    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        await agent.confirm(need_context(context, self))

    @classmethod
    def name(cls) -> str:
        return A.CONFIRM


@SubAgentStateManager.register
class FinishSubAgentState(SubAgentState):
    """The subtask is over (done or failed): hand back to the manager."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        sub: SubAgentLike = agent  # type: ignore[assignment]
        await sub.hand_back(need_context(context, self))

    def next_agent(self, agent: AgentLike) -> AgentLike:
        sub: SubAgentLike = agent  # type: ignore[assignment]
        return sub.parent

    def next_state(self, agent: AgentLike) -> AgentState:
        sub: SubAgentLike = agent  # type: ignore[assignment]
        return _by_status(sub.parent, S.ASSIGN)

    def is_subtask_end(self) -> bool:
        return True

    @classmethod
    def name(cls) -> str:
        return A.FINISH


@SubAgentStateManager.register
class FailSubAgentState(FinishSubAgentState):
    @classmethod
    def name(cls) -> str:
        return A.FAIL
