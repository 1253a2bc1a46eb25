"""Loading ``Settings``: layers of settings merged with the command line's overrides, or a finished
run's settings read back for ``run --resume``. Every error is one ``ConfigError`` line naming the
file, line and key path of the first problem.

The layers, lowest first: the shipped ``default.yaml``; the user config file (``user.py`` says
where); the ``UFO_MOBILE_*`` environment variables; the defaults file next to the task (or
``--config``); the task file; the command line. ``Loaded`` keeps where each key's value came from,
for ``python -m ufo_mobile config`` and for the device choice (``core/device/choice.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ufo_mobile import secret_env
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings.device import DeviceSettings
from ufo_mobile.settings.document import SettingsDoc, read_settings_file, unset_error
from ufo_mobile.settings.merge import merge
from ufo_mobile.settings.root import Settings
from ufo_mobile.settings.user import SHIPPED_DEFAULTS, env_settings, goal_name, user_config_path

SHIPPED = "shipped default"
ENVIRONMENT = "environment"
COMMAND_LINE = "command line"
BUILT_IN = "built in"
DEVICE_KEYS = ("device.kind", "device.serial")  # a layer that sets one of these names the device


@dataclass(frozen=True)
class Layer:
    """One layer of settings: where it came from (``source``), its data, and its file."""

    source: str
    data: dict[str, Any]
    doc: SettingsDoc | None = None


@dataclass(frozen=True)
class Loaded:
    """Settings as loaded, with the source of every key that a layer set (dotted key -> source)."""

    settings: Settings
    sources: dict[str, str] = field(default_factory=dict)
    layers: tuple[str, ...] = ()

    def source_of(self, key: str) -> str:
        """Where the value of the dotted ``key`` came from (``built in`` when no layer set it)."""
        return self.sources.get(key, BUILT_IN)

    @property
    def device_named(self) -> bool:
        """True when something the user wrote (not the shipped defaults) names the device."""
        return _names_device(self.sources)


def _names_device(sources: Mapping[str, str]) -> bool:
    return any(sources.get(key, BUILT_IN) not in (SHIPPED, BUILT_IN) for key in DEVICE_KEYS)


@dataclass(frozen=True)
class Merged:
    """The layers merged but not yet checked: what ``config`` shows even when it does not load."""

    data: dict[str, Any]
    sources: dict[str, str]
    layers: tuple[Layer, ...]
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # what ${VAR} was read from

    def validated(self) -> Loaded:
        """The merged settings checked.

        Raises:
            ConfigError: every ``${VAR}`` still needed and not set, in one line; else the first
                problem, in the file of the layer that set it.
        """
        docs = [layer.doc for layer in self.layers if layer.doc is not None]
        if (unset := unset_error(docs, self.data, self.env)) is not None:
            raise unset
        try:
            settings = Settings.model_validate(self.data)
        except ValidationError as exc:
            raise _owned_error(exc, list(self.layers)) from exc
        return Loaded(settings, self.sources, tuple(layer.source for layer in self.layers))

    def device(self) -> DeviceSettings | None:
        """The ``device`` section when a layer the user wrote names the device, else None (for
        commands that run no task, such as ``mcp``).

        Raises:
            ConfigError: the section does not validate, naming the key.
        """
        if not _names_device(self.sources):
            return None
        try:
            return DeviceSettings.model_validate(self.data.get("device") or {})
        except ValidationError as exc:
            raise _owned_error(exc, list(self.layers), at=("device",)) from exc


def find_default_config(task_path: Path) -> Path | None:
    """The ``default.yaml`` next to ``task_path`` or in the folder above it (not the task itself);
    None when there is none."""
    for folder in (task_path.parent, task_path.parent.parent):
        candidate = folder / "default.yaml"
        if candidate.is_file() and candidate.resolve() != task_path.resolve():
            return candidate
    return None


def load_settings(task_path: Path, *, config_path: Path | None = None,
                  overrides: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None) -> Settings:
    """Load a task file over the defaults (``load_task``) into ``Settings``.

    Raises:
        ConfigError: one line naming the file, line and key path of the first problem.
    """
    return load_task(task_path, config_path=config_path, overrides=overrides, env=env).settings


def load_task(task_path: Path, *, config_path: Path | None = None, overrides: Mapping[str, Any] | None = None,
              env: Mapping[str, str] | None = None) -> Loaded:
    """A task file over the shipped defaults, the user config, the environment and the defaults
    file (``config_path``, else ``default.yaml`` next to or above the task file), with ``overrides``.

    ``logs.dir`` stays relative to the working directory (where users look for ``logs/``);
    every other relative path is relative to the file that names it.

    Raises:
        ConfigError: as ``load_settings``.
    """
    return task_layers(task_path, config_path=config_path, overrides=overrides, env=env).validated()


def task_layers(task_path: Path, *, config_path: Path | None = None, overrides: Mapping[str, Any] | None = None,
                env: Mapping[str, str] | None = None) -> Merged:
    """``load_task``'s layers merged, not yet checked.

    Raises:
        ConfigError: a file that does not read.
    """
    env = secret_env.environ() if env is None else env  # a secret taken earlier in this process is still read
    layers = _base_layers(env, config_path or find_default_config(task_path))
    layers.append(_file_layer(task_path, env, f"task file {task_path}", required=True))
    return _merge(layers, overrides, env)


def load_goal(goal: str, *, config_path: Path | None = None, overrides: Mapping[str, Any] | None = None,
              env: Mapping[str, str] | None = None) -> Loaded:
    """The settings of a goal typed on the command line: the layers under a task file (the defaults
    file only when ``config_path`` names one), with the goal as the task and its words as its name.

    Raises:
        ConfigError: as ``load_settings``; no model named anywhere is the scripted model's error.
    """
    env = secret_env.environ() if env is None else env
    task = {"task": {"text": goal, "name": goal_name(goal)}}
    return _merge(_base_layers(env, config_path), merge(task, overrides or {}), env).validated()


def load_base_settings(near: Path, *, config_path: Path | None = None,
                       overrides: Mapping[str, Any] | None = None,
                       env: Mapping[str, str] | None = None) -> Settings:
    """The defaults alone (the shipped file, the user config, the environment, then ``config_path``,
    else ``default.yaml`` in the folder ``near`` or the one above it) with ``overrides``, for
    commands whose tasks come from elsewhere (``eval``): the task text is a placeholder each run
    replaces.

    Raises:
        ConfigError: as ``load_settings``.
    """
    env = secret_env.environ() if env is None else env
    default_path = config_path or find_default_config(near / "default.yaml")
    base = _base_layers(env, default_path)
    return _merge(base, {"task": {"text": "-"}, **(overrides or {})}, env).validated().settings


def load_user_settings(*, config_path: Path | None = None, overrides: Mapping[str, Any] | None = None,
                       env: Mapping[str, str] | None = None) -> Loaded:
    """The shipped defaults, the user config, the environment and the defaults file ``config_path``
    (if any) with ``overrides`` (the task text a placeholder unless they give one), for commands
    without a task file (``serve``, ``mcp``).

    Raises:
        ConfigError: as ``load_settings``.
    """
    return user_layers(config_path=config_path, overrides=overrides, env=env).validated()


def user_layers(*, config_path: Path | None = None, overrides: Mapping[str, Any] | None = None,
                env: Mapping[str, str] | None = None) -> Merged:
    """``load_user_settings``'s layers (and the defaults file ``config_path``) merged, not yet checked.

    Raises:
        ConfigError: a file that does not read.
    """
    env = secret_env.environ() if env is None else env
    return _merge(_base_layers(env, config_path), merge({"task": {"text": "-"}}, overrides or {}), env)


def _base_layers(env: Mapping[str, str], default_path: Path | None) -> list[Layer]:
    """The shipped defaults, the user config (when the file exists), the environment, and the
    defaults file at ``default_path`` (unless it is the shipped one, already at the bottom)."""
    layers = [_file_layer(SHIPPED_DEFAULTS, env, SHIPPED, required=False)]
    user = user_config_path(env)
    if user.is_file():
        layers.append(_file_layer(user, env, f"user config {user}", required=False))
    below: dict[str, Any] = {}
    for layer in layers:
        below = merge(below, layer.data)
    layers += [Layer(f"{ENVIRONMENT} {name}", data) for name, data in env_settings(env, below)]
    if default_path is not None and default_path.resolve() != SHIPPED_DEFAULTS.resolve():
        layers.append(_file_layer(default_path, env, f"defaults file {default_path}", required=False))
    return layers


def _file_layer(path: Path, env: Mapping[str, str], source: str, *, required: bool) -> Layer:
    data, doc = read_settings_file(path, env, required=required)
    return Layer(source, data, doc)


def _leaves(data: Mapping[str, Any], at: str = "") -> list[str]:
    """The dotted keys of ``data``'s values that are not mappings (an empty mapping is a value)."""
    out: list[str] = []
    for key, value in data.items():
        dotted = f"{at}{key}"
        out += _leaves(value, dotted + ".") if isinstance(value, Mapping) and value else [dotted]
    return out


def _merge(layers: list[Layer], overrides: Mapping[str, Any] | None, env: Mapping[str, str]) -> Merged:
    if overrides:
        layers = [*layers, Layer(COMMAND_LINE, dict(overrides))]
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer in layers:
        merged = merge(merged, layer.data)
        sources.update(dict.fromkeys(_leaves(layer.data), layer.source))
    return Merged(_serial_means_a_phone(merged, sources), sources, tuple(layers), env)


def _serial_means_a_phone(merged: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """A serial the user wrote, with a simulated phone nobody wrote: the phone over plain adb."""
    device = merged.get("device")
    if not isinstance(device, dict) or device.get("serial") is None or device.get("kind", "sim") != "sim":
        return merged
    if sources.get("device.kind", BUILT_IN) not in (SHIPPED, BUILT_IN):
        return merged
    sources["device.kind"] = sources.get("device.serial", BUILT_IN)
    return {**merged, "device": {**device, "kind": "adb"}}


def _owned_error(exc: ValidationError, layers: list[Layer], at: tuple[str, ...] = ()) -> ConfigError:
    """The first validation error, in the highest file the user wrote that sets its key (else the
    highest file the user wrote, else the shipped defaults when they set it)."""
    err = exc.errors()[0]
    key = (*at, *(str(x) for x in err["loc"]))
    message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")

    def sets_key(doc: SettingsDoc) -> bool:
        return any(key[:n] in doc.lines for n in range(len(key), 0, -1))

    files = [layer.doc for layer in layers if layer.doc is not None and layer.source != SHIPPED]
    shipped_files = [layer.doc for layer in layers if layer.doc is not None and layer.source == SHIPPED]
    owner = next((d for d in reversed(files) if sets_key(d)), files[-1] if files else None)
    owner = owner or next((d for d in shipped_files if sets_key(d)), None)
    if owner is None:  # no file at all: the command line's overrides
        return ConfigError(message, key=".".join(key))
    return owner.error(message, key)


def settings_of_run(run: Mapping[str, Any], *, overrides: Mapping[str, Any] | None = None,
                    source: str = "run.json") -> Settings:
    """The settings a run was started with (its ``run.json``), for ``run --resume``, with command-line
    ``overrides``. A key that was written masked (a secret) is read again from the environment.

    Raises:
        ConfigError: the run has no settings, or they no longer validate.
    """
    data = run.get("settings")
    if not isinstance(data, dict):
        raise ConfigError("the run has no settings to resume with", path=source, key="settings")
    model = dict(data.get("model") or {})
    if model.get("api_key") is not None and set(str(model["api_key"])) == {"*"}:
        model["api_key"] = None
    merged = merge({**data, "model": model}, overrides or {})
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        raise ConfigError(err["msg"].removeprefix("Value error, "), path=source, key=key) from exc
