"""Typed settings, loaded once from YAML and passed down explicitly.

Precedence, lowest first: the defaults in these models, ``config/default.yaml`` (looked up next to
the task file and in its parent directory, or given with ``--config``), the task file, then CLI
overrides. Unknown keys are errors. Strings may use ``${ENV_VAR}``; a missing variable is an
error naming the key. Every error is a ``ConfigError`` whose text is one line:
``file:line: key.path: what is wrong``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from ufo_mobile import secret_env, yamlio
from ufo_mobile.errors import ConfigError
from ufo_mobile.output_settings import OutputSettings
from ufo_mobile.safe_text import printable

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrySettings(_Strict):
    """How the model client retries 429, 5xx, timeouts and dropped connections."""

    max_retries: int = Field(default=4, ge=0, description="retries after the first attempt")
    budget_seconds: float = Field(default=90.0, gt=0, description="total time one call may take, retries included")
    base_delay_seconds: float = Field(default=1.0, gt=0, description="backoff before the first retry (doubles)")
    max_delay_seconds: float = Field(default=20.0, gt=0, description="longest backoff between two attempts")


class PriceSettings(_Strict):
    """USD per million tokens; ``cached_input`` defaults to ``input`` (no cache discount)."""

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    output: float = Field(ge=0)


ModelKind = Literal["scripted", "openai", "azure", "openai_compatible"]


class ModelSettings(_Strict):
    kind: ModelKind = "scripted"
    script: Path | None = Field(default=None, description="reply script for the scripted model")
    name: str = Field(default="gpt-4o", min_length=1, description="the model (for azure: the deployment, "
                                                                  "unless azure_deployment is set)")
    base_url: str | None = Field(default=None, description="openai_compatible (required) or a proxy for openai")
    api_key: SecretStr | None = Field(default=None, description="use ${VAR}; never a literal key in a file")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                    description="the variable holding the key (default per kind)")
    azure_endpoint: str | None = Field(default=None, description="None = $AZURE_OPENAI_ENDPOINT")
    azure_deployment: str | None = Field(default=None, description="None = name")
    api_version: str | None = Field(default=None, description="azure; None = $OPENAI_API_VERSION")
    temperature: float | None = Field(default=0.0, ge=0, le=2, description="None = not sent (reasoning models)")
    max_tokens: int = Field(default=1024, gt=0)
    timeout_seconds: float = Field(default=60.0, gt=0, description="bound on every attempt of a call")
    vision: bool = True
    structured_output: Literal["auto", "json_schema", "off"] = "auto"
    retry: RetrySettings = RetrySettings()
    prices: dict[str, PriceSettings] = Field(default_factory=dict, description="per model, over the built-in table")

    @field_validator("base_url", "azure_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
        except ValueError:  # a malformed port or IPv6 address
            usable = False
        if not usable:
            raise ValueError(f"not an http(s) URL: {value!r} (e.g. http://localhost:11434/v1)")
        return value

    @model_validator(mode="after")
    def _kind_needs(self) -> ModelSettings:
        if self.kind == "scripted" and self.script is None:
            raise ValueError("the scripted model needs 'script: <reply script file>'")
        if self.kind == "openai_compatible" and not self.base_url:
            raise ValueError("the openai_compatible model needs 'base_url: <server URL>', "
                             "e.g. http://localhost:11434/v1")
        if self.kind == "azure" and self.base_url:
            raise ValueError("azure takes its resource URL as 'azure_endpoint' (or $AZURE_OPENAI_ENDPOINT), "
                             "not 'base_url'")
        return self


class SimSettings(_Strict):
    width: int = Field(default=1080, gt=0)
    height: int = Field(default=2400, gt=0)
    apps: list[Path] = Field(default_factory=list, description="extra app YAML files to install")
    install: list[str] = Field(default_factory=list,
                               description="shipped apps that are not preinstalled, by package (com.example.shop)")
    start_app: str | None = None


class DeviceSettings(_Strict):
    kind: Literal["sim", "adb", "u2"] = "sim"
    serial: str | None = Field(default=None, description="adb serial (or host:port); None = the only device")
    adb_host: str = "127.0.0.1"
    adb_port: int | None = Field(default=None, description="adb server port; None = $ANDROID_ADB_SERVER_PORT or 5037")
    command_timeout_seconds: float = Field(default=20.0, gt=0)
    u2_start_timeout_seconds: float = Field(default=40.0, gt=0)
    u2_fallback: bool = True
    label_cache_dir: str | None = Field(default="~/.cache/ufo_mobile/labels",
                                        description="labels read from APKs, per device and version; None = memory")
    display_id: str | None = Field(default=None, description="screencap -d on multi-display phones; None = the first")
    record_actions: bool = Field(default=True, description="write every action to <run>/actions.jsonl")
    stealth: bool = Field(default=False, description="human-like timing, tap points, swipes and typing")
    stealth_seed: int | None = None
    sim: SimSettings = SimSettings()


class LimitSettings(_Strict):
    max_steps: int = Field(default=20, gt=0, description="the step budget: each action on the phone is a step, and "
                                                          "so is the final answer, in every mode")
    max_planner_turns: int | None = Field(default=None, gt=0, description="the manager's planning turns (reasoning "
                                                                          "mode); None = twice max_steps")
    max_consecutive_failures: int = Field(default=3, gt=0)
    max_repeated_actions: int = Field(default=3, gt=1)
    step_timeout_seconds: float = Field(default=120.0, gt=0)


class PerceptionSettings(_Strict):
    control_cache_ttl_seconds: float = Field(default=5.0, ge=0)
    image_longest_side: int = Field(default=1280, ge=64, description="the model's screenshot at most this long")
    image_max_tiles: int = Field(default=3, ge=0, description="and at most this many 512 px tiles (0: no limit)")
    image_detail: Literal["low", "high", "auto"] = "high"
    send_clean_screenshot: bool = Field(default=False, description="also send the screenshot without numbers")
    dump_retries: int = Field(default=2, ge=0)
    dump_refused_retries: int = Field(default=3, ge=0, description="a dump the phone refuses: tries again")
    dump_retry_delay_seconds: float = Field(default=0.5, gt=0, description="the first pause; it doubles")
    annotate: bool = True
    settle_timeout_seconds: float = Field(default=3.0, ge=0, description="0 turns the stability check off")
    settle_interval_seconds: float = Field(default=0.3, ge=0)


class AgentSettings(_Strict):
    history_steps: int = Field(default=6, ge=0)
    max_actions_per_turn: int = Field(default=5, ge=1, description="actions one reply may chain on one screen")
    swipe_duration_ms: int = Field(default=300, gt=0)
    max_wait_seconds: float = Field(default=10.0, gt=0)


_TOOL_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class CustomToolSettings(_Strict):
    """A tool of the user's: ``function`` is ``package.module:function``, importable and callable."""

    name: str = Field(pattern=_TOOL_NAME)
    function: str = Field(description="package.module:function; its parameters come from its signature")
    description: str = ""
    deps: list[str] | None = Field(default=None, description="capabilities it needs; None = always offered")

    @field_validator("function")
    @classmethod
    def _importable(cls, value: str) -> str:
        import_callable(value)
        return value


class ToolSettings(_Strict):
    disabled: list[str] = Field(default_factory=list, description="tools never offered to the model")
    custom: list[CustomToolSettings] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> ToolSettings:
        names = [tool.name for tool in self.custom]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"custom tool names must be unique: {', '.join(twice)}")
        return self


class CredentialSettings(_Strict):
    env: dict[str, str] = Field(default_factory=dict, description="secret id -> environment variable")
    file: Path | None = Field(default=None, description="YAML {id: value}, outside every git work tree")

    @field_validator("env")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        for secret_id, variable in value.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", secret_id):
                raise ValueError(f"secret id {printable(secret_id, 80)!r} must be a plain name")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
                raise ValueError(f"{printable(variable, 80)!r} is not an environment variable name")
        return value


def import_callable(path: str) -> Any:
    """The callable named ``package.module:attribute``; a ``ValueError`` (one line) otherwise."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"{printable(path, 120)!r} is not 'package.module:function'")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # an import runs the module's code: any error is the file's problem
        detail = " ".join(str(exc).split())
        raise ValueError(f"cannot import {printable(module_name, 120)}: {type(exc).__name__}: "
                         f"{printable(detail, 200)}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"module {module_name} has no {printable(attribute, 120)}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{printable(path, 120)} is not callable")
    return target


class ConfirmSettings(_Strict):
    tools: list[str] = Field(default_factory=list, description="actions that always need a person's approval")
    apps: list[str] = Field(default_factory=list, description="packages in which every action needs approval")
    when_model_asks: bool = Field(default=True, description="honour the model's own \"confirm\": true")


Unattended = Literal["refuse", "stop", "approve"]


class HumanSettings(_Strict):
    timeout_seconds: float = Field(default=600.0, gt=0, description="how long to wait for a person")
    confirm: ConfirmSettings = ConfirmSettings()
    unattended: Unattended = Field(default="refuse", description="with nobody to approve (eval, batch, a host "
                                   "without an operator): refuse the action, stop the run as needing a person, "
                                   "or approve it")


class LogSettings(_Strict):
    dir: Path = Path("logs")
    report: bool = Field(default=True, description="write <run>/report.html when the run ends")


class TaskSettings(_Strict):
    text: str = Field(min_length=1)
    name: str | None = None
    output: OutputSettings | None = Field(default=None, description="a structured final answer (model or schema)")


class ScripterSettings(_Strict):
    enabled: bool = Field(default=False, description="let the manager run off-device Python (<script> items)")
    wall_seconds: float = Field(default=30.0, gt=0)
    cpu_seconds: float = Field(default=20.0, gt=0)
    memory_mb: int = Field(default=512, ge=64, description="per process of the script")
    max_processes: int = Field(default=16, ge=1, description="processes of the script's whole tree (namespaces)")
    isolation: Literal["namespaces", "process"] = Field(
        default="namespaces", description="namespaces (bubblewrap): the script sees only its own files and "
                                          "processes; process: the weaker mode, named to be chosen")
    network: bool = Field(default=False, description="whether the script may reach the network (namespaces)")


class ReasoningSettings(_Strict):
    err_to_manager_thresh: int = Field(default=2, ge=1, description="executor failures in a row before a replan")
    memory_items: int = Field(default=20, ge=1, description="facts the manager keeps (oldest dropped)")
    app_cards_dir: str | None = Field(default=None, description="per-app guidance: <dir>/<package>.md")
    scripter: ScripterSettings = ScripterSettings()


class CodeActSettings(_Strict):
    wall_seconds: float = Field(default=10.0, gt=0, description="how long one reply's code may run")
    cpu_seconds: float = Field(default=10.0, gt=0)
    memory_mb: int = Field(default=256, ge=64)
    max_tool_calls: int = Field(default=10, ge=1, description="tool calls one reply's code may make")
    isolation: Literal["auto", "namespaces", "process"] = Field(
        default="auto", description="auto: namespaces where the machine makes them, else a plain process")


class ReplaySettings(_Strict):
    """Guarded replay (``replay RUN_DIR``) and the run cache: a finished run's steps replayed, screen
    checked by screen, the next time the same task runs."""

    cache_dir: Path | None = Field(default=None, description="the run cache (relative to the working "
                                                             "directory, like logs.dir); None = off")
    threshold: float = Field(default=0.8, ge=0, le=1, description="the least screen similarity to replay a step")


ModelRole = Literal["manager", "executor", "text_manipulator", "scripter", "codeact"]
"""The agents that can name a model of their own (``models:``); the rest, and any role not named,
use ``model``."""


class Settings(_Strict):
    mode: Literal["direct", "reasoning", "codeact"] = "direct"
    task: TaskSettings
    device: DeviceSettings = DeviceSettings()
    model: ModelSettings
    models: dict[ModelRole, ModelSettings] = Field(
        default_factory=dict, description="a model per role, each written as changes to 'model' (e.g. "
                                          "executor: {name: gpt-4.1-mini}): a strong planner with a cheap executor")
    limits: LimitSettings = LimitSettings()
    perception: PerceptionSettings = PerceptionSettings()
    agent: AgentSettings = AgentSettings()
    logs: LogSettings = LogSettings()
    human: HumanSettings = HumanSettings()
    tools: ToolSettings = ToolSettings()
    credentials: CredentialSettings = CredentialSettings()
    reasoning: ReasoningSettings = ReasoningSettings()
    codeact: CodeActSettings = CodeActSettings()
    replay: ReplaySettings = ReplaySettings()

    @model_validator(mode="before")
    @classmethod
    def _roles_change_the_model(cls, data: Any) -> Any:
        """Each ``models.<role>`` is written as changes to ``model``: merged over it here."""
        if not isinstance(data, Mapping) or not isinstance(data.get("models"), Mapping):
            return data
        base = data.get("model")
        base = base.model_dump() if isinstance(base, ModelSettings) else base
        if not isinstance(base, Mapping):
            return data
        roles = {role: change if not isinstance(change, Mapping) else merge(dict(base), change)
                 for role, change in data["models"].items()}
        return {**data, "models": roles}

    def model_for(self, role: str) -> ModelSettings:
        """The model settings of ``role`` (a ``ModelRole``, or "agent"): its own (``models``), else ``model``."""
        return {str(k): v for k, v in self.models.items()}.get(role, self.model)

    def secrets(self) -> list[str]:
        """Secret values that must never be written anywhere."""
        keys = [self.model.api_key, *(m.api_key for m in self.models.values())]
        return list(dict.fromkeys(k.get_secret_value() for k in keys if k is not None and k.get_secret_value()))


# --- loading ---------------------------------------------------------------------------------

# Paths resolved against the file that names them (logs.dir stays relative to the working directory).
_PATH_FIELDS = {("model", "script"), ("device", "sim", "apps"), ("credentials", "file"),
                ("reasoning", "app_cards_dir"), *(("models", role, "script") for role in get_args(ModelRole))}


class _Doc:
    """A YAML document as plain data plus the line of every key path.

    The file is read through ``yamlio`` (bounded size, alias expansion and depth), so the recursive
    ``_build`` below walks at most ``yamlio.MAX_NODES`` nodes, ``yamlio.MAX_DEPTH`` deep.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: dict[tuple[str, ...], int] = {}
        node = yamlio.compose_file(path)
        self.empty = node is None  # no document: empty, or only comments
        if node is None:
            self.lines[()] = 1  # its errors point at the top of the file
        self.data: Any = {} if node is None else self._build(node, ())

    def _build(self, node: yaml.Node, at: tuple[str, ...]) -> Any:
        self.lines.setdefault(at, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.error("a key must be a name, not a list or a mapping", at,
                                     line=key_node.start_mark.line + 1)
                key = str(key_node.value)
                if key in out:
                    raise self.error("duplicate key", (*at, key), line=key_node.start_mark.line + 1)
                self.lines[(*at, key)] = key_node.start_mark.line + 1
                out[key] = self._build(value_node, (*at, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self._build(v, (*at, str(i))) for i, v in enumerate(node.value)]
        return yamlio.construct(node, str(self.path))  # PyYAML resolves the type

    def line_of(self, key: tuple[str, ...]) -> int | None:
        if not key:
            return self.lines.get(())
        for n in range(len(key), 0, -1):  # a missing key points at its nearest present parent
            if key[:n] in self.lines:
                return self.lines[key[:n]]
        return None

    def error(self, message: str, key: tuple[str, ...], *, line: int | None = None) -> ConfigError:
        return ConfigError(message, path=str(self.path), key=printable(".".join(key)) or None,
                           line=line or self.line_of(key))


def _interpolate(value: Any, doc: _Doc, at: tuple[str, ...], env: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _interpolate(v, doc, (*at, k), env) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, doc, (*at, str(i)), env) for i, v in enumerate(value)]
    if isinstance(value, str):
        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise doc.error(f"environment variable {name} is not set", at)
            return env[name]

        return _ENV.sub(sub, value)
    return value


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    """Relative paths in a file are relative to that file's directory."""
    for key in _PATH_FIELDS:
        node: Any = data
        for part in key[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or key[-1] not in node:
            continue
        value = node[key[-1]]
        if isinstance(value, str):
            node[key[-1]] = _relative_to(base, value)
        elif isinstance(value, list):
            node[key[-1]] = [_relative_to(base, v) if isinstance(v, str) else v for v in value]


def _relative_to(base: Path, value: str) -> str:
    """``value`` resolved against ``base`` unless absolute; ``~/...`` is the user's home."""
    path = Path(value).expanduser()
    return str(path) if path.is_absolute() else str(base / value)


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base``, mappings merged key by key (neither is changed)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def _read(path: Path, env: Mapping[str, str], *, required: bool) -> tuple[dict[str, Any], _Doc]:
    """One file's settings; an empty defaults file (``required=False``) is no settings at all."""
    doc = _Doc(path)
    if doc.empty and required:
        raise doc.error("the file is empty; it must be a mapping of settings", ())
    if not isinstance(doc.data, dict):
        raise doc.error("the file must be a mapping of settings", ())
    data = _interpolate(doc.data, doc, (), env)
    if isinstance(data.get("task"), str):
        data["task"] = {"text": data["task"]}
    _resolve_paths(data, path.parent)
    return data, doc


def find_default_config(task_path: Path) -> Path | None:
    for folder in (task_path.parent, task_path.parent.parent):
        candidate = folder / "default.yaml"
        if candidate.is_file() and candidate.resolve() != task_path.resolve():
            return candidate
    return None


def load_settings(task_path: Path, *, config_path: Path | None = None,
                  overrides: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None) -> Settings:
    """Load the defaults file and a task file into ``Settings``.

    ``logs.dir`` stays relative to the working directory (where users look for ``logs/``);
    every other relative path is relative to the file that names it.

    Raises:
        ConfigError: one line naming the file, line and key path of the first problem.
    """
    default_path = config_path or find_default_config(task_path)
    return _load([(default_path, False), (task_path, True)], overrides, env)


def load_base_settings(near: Path, *, config_path: Path | None = None,
                       overrides: Mapping[str, Any] | None = None,
                       env: Mapping[str, str] | None = None) -> Settings:
    """The defaults file alone (``config_path``, else ``default.yaml`` in the folder ``near`` or the
    one above it) with ``overrides``, for commands whose tasks come from elsewhere (``eval``): the
    task text is a placeholder each run replaces.

    Raises:
        ConfigError: as ``load_settings``.
    """
    default_path = config_path or find_default_config(near / "default.yaml")
    return _load([(default_path, False)], {"task": {"text": "-"}, **(overrides or {})}, env)


def _load(paths: list[tuple[Path | None, bool]], overrides: Mapping[str, Any] | None,
          env: Mapping[str, str] | None) -> Settings:
    env = secret_env.environ() if env is None else env  # a secret taken earlier in this process is still read
    docs: list[_Doc] = []
    merged: dict[str, Any] = {}
    for path, required in paths:
        if path is None:
            continue
        data, doc = _read(path, env, required=required)
        docs.append(doc)
        merged = merge(merged, data)
    merged = merge(merged, overrides or {})
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = tuple(str(x) for x in err["loc"])
        owner = next((d for d in reversed(docs)
                      if any(key[:n] in d.lines for n in range(len(key), 0, -1))), docs[-1] if docs else None)
        message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        if owner is None:  # no file at all: the command line's overrides
            raise ConfigError(message, key=".".join(key)) from exc
        raise owner.error(message, key) from exc


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
