"""Agent states, their registry, and the rulebook of legal moves."""

from ufo_mobile.core.states.base import AgentState, AgentStateManager
from ufo_mobile.core.states.mobile import (
    ContinueMobileAgentState,
    FailMobileAgentState,
    FinishMobileAgentState,
    MobileAgentState,
    MobileAgentStateManager,
    NoneMobileAgentState,
)
from ufo_mobile.core.states.rulebook import MOBILE_RULES, AgentMachine, Rulebook
from ufo_mobile.core.status import NONE_STATE, MobileAgentStatus

__all__ = [
    "MOBILE_RULES",
    "NONE_STATE",
    "AgentMachine",
    "AgentState",
    "AgentStateManager",
    "ContinueMobileAgentState",
    "FailMobileAgentState",
    "FinishMobileAgentState",
    "MobileAgentState",
    "MobileAgentStateManager",
    "MobileAgentStatus",
    "NoneMobileAgentState",
    "Rulebook",
]
