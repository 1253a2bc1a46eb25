"""One settings file read: its YAML as plain data with the line of every key, ``${VAR}`` replaced
from the environment, and relative paths resolved against the file's folder. A ``${VAR}`` that is
not set stays as written, noted in ``SettingsDoc.unset``; ``unset_error`` reports, in one line, those
that still count once every file and option is merged (with an azure model's own variables)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import yaml

from ufo_mobile import yamlio
from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable
from ufo_mobile.settings.model import ModelRole

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

# Paths resolved against the file that names them (logs.dir stays relative to the working directory).
_PATH_FIELDS = {("model", "script"), ("device", "sim", "apps"), ("credentials", "file"),
                ("reasoning", "app_cards_dir"), *(("models", role, "script") for role in get_args(ModelRole))}


class SettingsDoc:
    """A YAML document as plain data plus the line of every key path.

    The file is read through ``yamlio`` (bounded size, alias expansion and depth), so the recursive
    ``_build`` below walks at most ``yamlio.MAX_NODES`` nodes, ``yamlio.MAX_DEPTH`` deep.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: dict[tuple[str, ...], int] = {}
        self.unset: list[tuple[tuple[str, ...], str]] = []  # (key path, variable) of each ${VAR} not set
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
        """The line of ``key`` in the file (a missing key: its nearest present parent's); None if unknown."""
        if not key:
            return self.lines.get(())
        for n in range(len(key), 0, -1):  # a missing key points at its nearest present parent
            if key[:n] in self.lines:
                return self.lines[key[:n]]
        return None

    def error(self, message: str, key: tuple[str, ...], *, line: int | None = None) -> ConfigError:
        """A ``ConfigError`` naming this file, ``key`` and its line (``line`` if given)."""
        return ConfigError(message, path=str(self.path), key=printable(".".join(key)) or None,
                           line=line or self.line_of(key))


def read_settings_file(path: Path, env: Mapping[str, str], *, required: bool) -> tuple[dict[str, Any], SettingsDoc]:
    """One file's settings; an empty defaults file (``required=False``) is no settings at all."""
    doc = SettingsDoc(path)
    if doc.empty and required:
        raise doc.error("the file is empty; it must be a mapping of settings", ())
    if not isinstance(doc.data, dict):
        raise doc.error("the file must be a mapping of settings", ())
    data = _interpolate(doc.data, doc, (), env)
    if isinstance(data.get("task"), str):
        data["task"] = {"text": data["task"]}
    _resolve_paths(data, path.parent)
    return data, doc


def _interpolate(value: Any, doc: SettingsDoc, at: tuple[str, ...], env: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _interpolate(v, doc, (*at, k), env) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, doc, (*at, str(i)), env) for i, v in enumerate(value)]
    if isinstance(value, str):
        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                doc.unset.append((at, name))
                return match.group(0)
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


# What an azure model reads from the environment when its settings leave it out (core/llm/endpoint.py).
_AZURE_ENV = (("api_key", "AZURE_OPENAI_API_KEY"), ("azure_endpoint", "AZURE_OPENAI_ENDPOINT"),
              ("api_version", "OPENAI_API_VERSION"))


def unset_error(docs: list[SettingsDoc], merged: Mapping[str, Any], env: Mapping[str, str]) -> ConfigError | None:
    """One error naming every ``${VAR}`` not set whose value no later file or option replaced, and
    for an azure model the variables it falls back on that are not set either; None when none is."""
    def value_at(at: tuple[str, ...]) -> Any:
        node: Any = merged
        for part in at:
            if isinstance(node, list):
                node = node[int(part)] if int(part) < len(node) else None
            else:
                node = node.get(part) if isinstance(node, dict) else None
        return node

    found = [(doc, at, name) for doc in docs for at, name in doc.unset if f"${{{name}}}" in str(value_at(at))]
    if not found:
        return None
    names = list(dict.fromkeys(name for _, _, name in found))
    model: Mapping[str, Any] = merged.get("model") or {}
    if isinstance(model, dict) and model.get("kind") == "azure":
        given = {key for key, value in model.items() if value} | ({"api_key"} if model.get("api_key_env") else set())
        names += [var for key, var in _AZURE_ENV if key not in given and not env.get(var) and var not in names]
    doc, at, _ = found[0]
    if len(names) == 1:
        return doc.error(f"environment variable {names[0]} is not set", at)
    return doc.error(f"environment variables {', '.join(names)} are not set", at)
