"""The states of the replay agent, with their own registry and rulebook (``REPLAY_RULES``).

NONE -> CONTINUE (one recorded step, checked against the screen) -> CONTINUE ... -> FINISH when
the recorded run's FINISH is reached on a matching screen. On a mismatch the step ends in
HANDOVER, whose work prepares the shared state for the agent taking over; ``next_agent`` is that
agent (the one the settings' mode builds) and ``next_state`` its CONTINUE, so the round loop goes
on with it, as a manager hands a subgoal to its executor. Without a fallback a mismatch is FAIL.
FINISH and FAIL end the round; HANDOVER ends the replay agent's part of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ufo_mobile.core.states.base import AgentLike, AgentState, AgentStateManager
from ufo_mobile.core.states.mobile import (
    ContinueMobileAgentState,
    FailMobileAgentState,
    FinishMobileAgentState,
    MobileAgentState,
    NoneMobileAgentState,
    need_context,
)
from ufo_mobile.core.states.rulebook import Rulebook
from ufo_mobile.core.status import NONE_STATE, ReplayStatus

if TYPE_CHECKING:
    from ufo_mobile.core.context import RunContext

S = ReplayStatus

REPLAY_RULES = Rulebook(
    name="replay",
    states=(NONE_STATE, S.CONTINUE, S.HANDOVER, S.FINISH, S.FAIL),
    moves=(
        (NONE_STATE, S.CONTINUE), (NONE_STATE, S.FAIL),
        (S.CONTINUE, S.CONTINUE), (S.CONTINUE, S.FINISH), (S.CONTINUE, S.FAIL),
        (S.CONTINUE, S.HANDOVER),  # the screen differs: the agent does the rest
        (S.FAIL, S.FINISH), (S.FINISH, S.FINISH),
    ),
    initial=NONE_STATE,
    final=frozenset({S.FINISH}),
)


class ReplayLike(AgentLike, Protocol):
    """What the replay agent's states need of it."""

    @property
    def fallback(self) -> AgentLike | None:
        """The agent that takes over on a mismatch (None: the replay stops instead)."""
        ...

    async def hand_over(self, context: RunContext) -> None:
        """Give the agent taking over the shared state it needs."""
        ...


class ReplayStateManager(AgentStateManager):
    """The registry of these states (its own declarations: see ``AgentStateManager``)."""


ReplayStateManager.register(NoneMobileAgentState)  # CONTINUE, or FAIL when the run could not start


@ReplayStateManager.register
class ContinueReplayState(ContinueMobileAgentState):
    """Replay one recorded step (observe, check, act, remember)."""


@ReplayStateManager.register
class HandoverReplayState(MobileAgentState):
    """The replay ends here; the agent the settings' mode builds continues from this point."""

    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        replay: ReplayLike = agent  # type: ignore[assignment]
        await replay.hand_over(need_context(context, self))

    def next_agent(self, agent: AgentLike) -> AgentLike:
        replay: ReplayLike = agent  # type: ignore[assignment]
        if replay.fallback is None:  # pragma: no cover - the replay phases fail instead
            return agent
        return replay.fallback

    def next_state(self, agent: AgentLike) -> AgentState:
        replay: ReplayLike = agent  # type: ignore[assignment]
        if replay.fallback is None:  # pragma: no cover - the replay phases fail instead
            agent.fail_with("a replay without a fallback cannot hand over")
            return agent.state_manager.get_state(S.FAIL)
        return replay.fallback.state_manager.get_state(S.CONTINUE)

    def is_subtask_end(self) -> bool:
        return True

    @classmethod
    def name(cls) -> str:
        return S.HANDOVER


# FINISH and FAIL are the flat agent's: the round ends (FAIL keeps the final screen first)
ReplayStateManager.register(FinishMobileAgentState)
ReplayStateManager.register(FailMobileAgentState)
