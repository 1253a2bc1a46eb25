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
"""

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
from ufo_mobile.settings.merge import merge
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
