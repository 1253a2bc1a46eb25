"""The tool layer (seed 002): ``ToolRegistry``, the built-in actions, ``ActionContext``,
``ActionResult`` and the ``CredentialManager``. ``build_tool_registry`` makes an agent's registry."""

from ufo_mobile.core.tools.build import BUILTIN_TOOLS, build_tool_registry
from ufo_mobile.core.tools.context import ActionContext, ActionResult, TaskCompletion
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.tools.registry import Tool, ToolRegistry

__all__ = [
    "BUILTIN_TOOLS",
    "ActionContext",
    "ActionResult",
    "CredentialManager",
    "TaskCompletion",
    "Tool",
    "ToolRegistry",
    "build_tool_registry",
]
