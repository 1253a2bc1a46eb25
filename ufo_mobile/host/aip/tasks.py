"""A TASK's settings: the service's base settings with what the client may set laid over them.

Precedence, lowest first: the base (``serve --config`` and the command line's model options), the
TASK's ``metadata.task_yaml`` (a task file's text), its ``metadata.options`` (the same keys, as a JSON
object), its ``task_name`` (``task.name``, when the YAML names none) and its ``request`` (``task.text``).
The phone and the log directory are always the service's.

A client may set only what shapes the task: ``task`` (``text``, ``name``, and ``output`` as an inline
``schema``), ``mode``, ``limits``, ``perception``, ``agent`` and ``tools.disabled``. The model, the
device, credentials, custom tools, log and cache paths and the reasoning and CodeAct sandboxes stay
the operator's: a task that names them is refused (they read files, import code, run Python or send the
model's key somewhere). ``${VAR}`` is not expanded in a client's YAML: the server's environment is not
the client's to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ufo_mobile import yamlio
from ufo_mobile.errors import ConfigError
from ufo_mobile.host.aip.protocol import ClientMessage, TaskMetadata
from ufo_mobile.safe_text import printable
from ufo_mobile.settings import Settings, merge

SOURCE = "TASK"
#: What a client may set: a section, or a section limited to some of its keys.
CLIENT_KEYS: dict[str, frozenset[str] | None] = {
    "task": frozenset({"text", "name", "output"}), "mode": None, "limits": None, "perception": None,
    "agent": None, "tools": frozenset({"disabled"}),
}


def check_client_keys(data: Mapping[str, Any], where: str) -> None:
    """Refuse the keys a client may not set (see the module docstring).

    Raises:
        ConfigError: naming the first such key.
    """
    for section, value in data.items():
        if section not in CLIENT_KEYS:
            known = section in Settings.model_fields
            why = "is the server's to set (serve --config), not a task's" if known else "unknown key"
            raise ConfigError(why, path=where, key=printable(str(section), 80))
        allowed = CLIENT_KEYS[section]
        if allowed is None or not isinstance(value, Mapping):
            continue  # a scalar where a mapping belongs is for the settings to refuse
        for key in value:
            if key not in allowed:
                raise ConfigError("is the server's to set (serve --config), not a task's", path=where,
                                  key=f"{section}.{printable(str(key), 80)}")
    task = data.get("task")
    output = task.get("output") if isinstance(task, Mapping) else None
    if isinstance(output, Mapping) and "model" in output:
        raise ConfigError("a task sent over the network gives its output as an inline 'schema', not a model "
                          "to import", path=where, key="task.output.model")


def _yaml_task(text: str) -> dict[str, Any]:
    data = yamlio.load_text(text, "task_yaml")  # bounded; a YAML error is a ConfigError naming the line
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping of settings (a task file)", path="task_yaml")
    if isinstance(data.get("task"), str):
        data["task"] = {"text": data["task"]}
    check_client_keys(data, "task_yaml")
    return data


def client_overrides(message: ClientMessage, meta: TaskMetadata) -> dict[str, Any]:
    """What the TASK sets, merged in precedence order and checked against ``CLIENT_KEYS``.

    Raises:
        ConfigError: a key the client may not set, or a task YAML that does not parse.
    """
    data = _yaml_task(meta.task_yaml) if meta.task_yaml is not None else {}
    if meta.options is not None:
        check_client_keys(meta.options, "metadata.options")
        data = merge(data, meta.options)
    task = dict(data["task"]) if isinstance(data.get("task"), Mapping) else {}
    if message.task_name and not task.get("name"):
        task["name"] = message.task_name
    if message.request:
        task["text"] = message.request
    if not task.get("text"):
        raise ConfigError("the task has no text: give 'request' (or task.text in metadata.task_yaml)",
                          path=SOURCE, key="request")
    data["task"] = task
    return data


def task_settings(base: Settings, overrides: Mapping[str, Any]) -> Settings:
    """``base`` with the client's ``overrides``, validated as a task file is.

    Raises:
        ConfigError: one line naming the key and what is wrong with it.
    """
    data = merge(base.model_dump(by_alias=True), overrides)
    data["task"] = dict(overrides.get("task") or {})  # the base's task is a placeholder: nothing of it is kept
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(part) for part in err["loc"])
        message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        raise ConfigError(printable(message, 300), path=SOURCE, key=printable(key, 120)) from exc


def settings_of_task(base: Settings, message: ClientMessage, meta: TaskMetadata) -> Settings:
    """The settings a TASK runs with (the phone and log directory are laid over them per run).

    Raises:
        ConfigError: the task is not one this service can run; one line.
    """
    return task_settings(base, client_overrides(message, meta))
