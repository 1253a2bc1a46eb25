"""Agent states, their registry, and the rulebook of legal moves."""

from ufo_mobile.states.base import AgentState, AgentStateManager
from ufo_mobile.states.mobile import (
    ContinueMobileAgentState,
    FailMobileAgentState,
    FinishMobileAgentState,
    MobileAgentState,
    MobileAgentStateManager,
    NoneMobileAgentState,
)
from ufo_mobile.states.rulebook import MOBILE_RULES, AgentMachine, Rulebook
from ufo_mobile.status import NONE_STATE, MobileAgentStatus

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
