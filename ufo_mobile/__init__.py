"""ufo_mobile: an explicit finite-state-machine runtime for LLM agents that operate Android phones."""

from ufo_mobile.core import build as _build  # noqa: F401 - builds every Session (Session.default_parts)
from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.llm.base import ChatModel, Completion, Usage
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.session import Round, RunResult, Session
from ufo_mobile.core.states.base import AgentState, AgentStateManager
from ufo_mobile.core.states.mobile import MobileAgentStateManager
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import (
    ConfigError,
    DeviceError,
    LLMError,
    StateMachineError,
    UfoMobileError,
)
from ufo_mobile.host.inprocess import HostedRun, open_agent, round_outcome
from ufo_mobile.settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "AgentState",
    "AgentStateManager",
    "ChatModel",
    "Completion",
    "ConfigError",
    "DeviceDriver",
    "DeviceError",
    "HostedRun",
    "LLMError",
    "MobileAgent",
    "MobileAgentStateManager",
    "MobileAgentStatus",
    "Round",
    "RunContext",
    "RunResult",
    "ScriptedModel",
    "Session",
    "Settings",
    "StateMachineError",
    "UfoMobileError",
    "Usage",
    "load_settings",
    "open_agent",
    "round_outcome",
]
