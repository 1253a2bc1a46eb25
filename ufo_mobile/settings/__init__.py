"""Typed settings, loaded once from YAML and passed down explicitly.

Precedence, lowest first: the defaults in these models, the shipped ``config/default.yaml``, the
user config file and the ``UFO_MOBILE_*`` environment variables (``user.py``), a ``default.yaml``
next to the task file or in its parent directory (or given with ``--config``), the task file, then
CLI overrides. Unknown keys are errors. Strings may use ``${ENV_VAR}``; a missing variable is an
error naming the key. Every error is a ``ConfigError`` whose text is one line:
``file:line: key.path: what is wrong``.

The sections live in ``model.py`` (model, models), ``device.py`` (device, perception), ``agent.py``
(limits, agent, human), ``tools.py`` (tools, credentials), ``modes.py`` (reasoning, codeact),
``run.py`` (task, logs, replay) and ``root.py`` (``Settings``, all of them); reading a file is
``document.py``, the user's own settings ``user.py``, loading and resuming ``loading.py``. Import every name from here.
Each name is imported when first used, so the light ones (``user_config_path``, ``ENV_KEYS``) load no pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ufo_mobile.lazy import lazy_names

# light, and named as its module is: imported now, so that importing the module later does not put the
# module where the function is
from ufo_mobile.settings.merge import merge

# each public name -> the module it lives in
_WHERE: dict[str, str] = {
    "AgentSettings": "ufo_mobile.settings.agent",
    "CodeActSettings": "ufo_mobile.settings.modes",
    "ConfirmSettings": "ufo_mobile.settings.agent",
    "CredentialSettings": "ufo_mobile.settings.tools",
    "CustomToolSettings": "ufo_mobile.settings.tools",
    "DeviceSettings": "ufo_mobile.settings.device",
    "ENV_KEYS": "ufo_mobile.settings.user",
    "HumanSettings": "ufo_mobile.settings.agent",
    "LimitSettings": "ufo_mobile.settings.agent",
    "Loaded": "ufo_mobile.settings.loading",
    "LogSettings": "ufo_mobile.settings.run",
    "Merged": "ufo_mobile.settings.loading",
    "ModelKind": "ufo_mobile.settings.model",
    "ModelRole": "ufo_mobile.settings.model",
    "ModelSettings": "ufo_mobile.settings.model",
    "PerceptionSettings": "ufo_mobile.settings.device",
    "PriceSettings": "ufo_mobile.settings.model",
    "ReasoningSettings": "ufo_mobile.settings.modes",
    "ReplaySettings": "ufo_mobile.settings.run",
    "RetrySettings": "ufo_mobile.settings.model",
    "ScripterSettings": "ufo_mobile.settings.modes",
    "Settings": "ufo_mobile.settings.root",
    "SimSettings": "ufo_mobile.settings.device",
    "TaskSettings": "ufo_mobile.settings.run",
    "ToolSettings": "ufo_mobile.settings.tools",
    "Unattended": "ufo_mobile.settings.agent",
    "find_default_config": "ufo_mobile.settings.loading",
    "goal_name": "ufo_mobile.settings.user",
    "import_callable": "ufo_mobile.settings.tools",
    "load_base_settings": "ufo_mobile.settings.loading",
    "load_goal": "ufo_mobile.settings.loading",
    "load_settings": "ufo_mobile.settings.loading",
    "load_task": "ufo_mobile.settings.loading",
    "load_user_settings": "ufo_mobile.settings.loading",
    "settings_of_run": "ufo_mobile.settings.loading",
    "task_layers": "ufo_mobile.settings.loading",
    "user_config_path": "ufo_mobile.settings.user",
    "user_layers": "ufo_mobile.settings.loading",
    "write_starter": "ufo_mobile.settings.user",
}

if TYPE_CHECKING:  # what the type checker and editors see; at run time __getattr__ imports them
    from ufo_mobile.settings.agent import AgentSettings, ConfirmSettings, HumanSettings, LimitSettings, Unattended
    from ufo_mobile.settings.device import DeviceSettings, PerceptionSettings, SimSettings
    from ufo_mobile.settings.loading import (
        Loaded,
        Merged,
        find_default_config,
        load_base_settings,
        load_goal,
        load_settings,
        load_task,
        load_user_settings,
        settings_of_run,
        task_layers,
        user_layers,
    )
    from ufo_mobile.settings.model import ModelKind, ModelRole, ModelSettings, PriceSettings, RetrySettings
    from ufo_mobile.settings.modes import CodeActSettings, ReasoningSettings, ScripterSettings
    from ufo_mobile.settings.root import Settings
    from ufo_mobile.settings.run import LogSettings, ReplaySettings, TaskSettings
    from ufo_mobile.settings.tools import CredentialSettings, CustomToolSettings, ToolSettings, import_callable
    from ufo_mobile.settings.user import ENV_KEYS, goal_name, user_config_path, write_starter

__all__ = [
    "ENV_KEYS",
    "AgentSettings",
    "CodeActSettings",
    "ConfirmSettings",
    "CredentialSettings",
    "CustomToolSettings",
    "DeviceSettings",
    "HumanSettings",
    "LimitSettings",
    "Loaded",
    "Merged",
    "LogSettings",
    "ModelKind",
    "ModelRole",
    "ModelSettings",
    "PerceptionSettings",
    "PriceSettings",
    "ReasoningSettings",
    "ReplaySettings",
    "RetrySettings",
    "ScripterSettings",
    "Settings",
    "SimSettings",
    "TaskSettings",
    "ToolSettings",
    "Unattended",
    "find_default_config",
    "goal_name",
    "import_callable",
    "load_base_settings",
    "load_goal",
    "load_settings",
    "load_task",
    "load_user_settings",
    "merge",
    "settings_of_run",
    "task_layers",
    "user_config_path",
    "user_layers",
    "write_starter",
]


# each name is imported on first use (ufo_mobile/lazy.py)
__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
