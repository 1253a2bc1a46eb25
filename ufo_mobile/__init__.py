"""ufo_mobile: an explicit finite-state-machine runtime for LLM agents that operate Android phones.

The shortest way in is one call (``api.py``)::

    import ufo_mobile

    result = ufo_mobile.run("Turn on Wi-Fi")   # the model and phone of your user config
    print(result.status, result.answer)

Every name below is imported when first used, so ``import ufo_mobile`` is quick and loads no agent
code: ``run`` and ``run_async`` (``api.py``), ``Session``, ``Settings``, ``RunResult`` and the
parts of a run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ufo_mobile.lazy import lazy_names

__version__ = "0.1.0"

# each public name -> the module it lives in
_WHERE: dict[str, str] = {
    "run": "ufo_mobile.api",
    "run_async": "ufo_mobile.api",
    "AgentState": "ufo_mobile.core.states.base",
    "AgentStateManager": "ufo_mobile.core.states.base",
    "ChatModel": "ufo_mobile.core.llm.base",
    "Completion": "ufo_mobile.core.llm.base",
    "ConfigError": "ufo_mobile.errors",
    "DeviceDriver": "ufo_mobile.core.device.base",
    "DeviceError": "ufo_mobile.errors",
    "HostedRun": "ufo_mobile.host.inprocess",
    "LLMError": "ufo_mobile.errors",
    "MobileAgent": "ufo_mobile.core.agents.mobile",
    "MobileAgentStateManager": "ufo_mobile.core.states.mobile",
    "MobileAgentStatus": "ufo_mobile.core.status",
    "Round": "ufo_mobile.core.session",
    "RunContext": "ufo_mobile.core.context",
    "RunResult": "ufo_mobile.core.session",
    "ScriptedModel": "ufo_mobile.core.llm.scripted",
    "Session": "ufo_mobile.core.session",
    "Settings": "ufo_mobile.settings",
    "StateMachineError": "ufo_mobile.errors",
    "UfoMobileError": "ufo_mobile.errors",
    "Usage": "ufo_mobile.core.llm.base",
    "load_settings": "ufo_mobile.settings",
    "open_agent": "ufo_mobile.host.inprocess",
    "round_outcome": "ufo_mobile.host.inprocess",
}

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
    "run",
    "run_async",
]

if TYPE_CHECKING:  # what the type checker and editors see; at run time __getattr__ imports them
    from ufo_mobile.api import run, run_async
    from ufo_mobile.core.agents.mobile import MobileAgent
    from ufo_mobile.core.context import RunContext
    from ufo_mobile.core.device.base import DeviceDriver
    from ufo_mobile.core.llm.base import ChatModel, Completion, Usage
    from ufo_mobile.core.llm.scripted import ScriptedModel
    from ufo_mobile.core.session import Round, RunResult, Session
    from ufo_mobile.core.states.base import AgentState, AgentStateManager
    from ufo_mobile.core.states.mobile import MobileAgentStateManager
    from ufo_mobile.core.status import MobileAgentStatus
    from ufo_mobile.errors import ConfigError, DeviceError, LLMError, StateMachineError, UfoMobileError
    from ufo_mobile.host.inprocess import HostedRun, open_agent, round_outcome
    from ufo_mobile.settings import Settings, load_settings


# each name is imported on first use (ufo_mobile/lazy.py)
__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
