"""Loading ``Settings``: the defaults file and the task file merged with the command line's
overrides, or a finished run's settings read back for ``run --resume``. Every error is one
``ConfigError`` line naming the file, line and key path of the first problem."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ufo_mobile import secret_env
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings.document import SettingsDoc, read_settings_file, unset_error
from ufo_mobile.settings.merge import merge
from ufo_mobile.settings.root import Settings


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
    docs: list[SettingsDoc] = []
    merged: dict[str, Any] = {}
    for path, required in paths:
        if path is None:
            continue
        data, doc = read_settings_file(path, env, required=required)
        docs.append(doc)
        merged = merge(merged, data)
    merged = merge(merged, overrides or {})
    if (unset := unset_error(docs, merged, env)) is not None:
        raise unset
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
