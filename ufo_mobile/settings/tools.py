"""The ``tools:`` and ``credentials:`` sections: which tools the model is offered (the user's own
among them) and where the secrets it may type come from."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from ufo_mobile.safe_text import printable
from ufo_mobile.settings.strict import Strict

_TOOL_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class CustomToolSettings(Strict):
    """A tool of the user's: ``function`` is ``package.module:function``, importable and callable."""

    name: str = Field(pattern=_TOOL_NAME, description="the name the model calls it by")
    function: str = Field(description="package.module:function; its parameters come from its signature")
    description: str = Field(default="", description="what it does, for the model; empty = the first "
                                                     "paragraph of the function's docstring")
    deps: list[str] | None = Field(default=None, description="capabilities it needs; None = always offered")

    @field_validator("function")
    @classmethod
    def _importable(cls, value: str) -> str:
        import_callable(value)
        return value


class ToolSettings(Strict):
    """The ``tools:`` section: which built-in tools the model is offered, and the user's own."""

    disabled: list[str] = Field(default_factory=list, description="tools never offered to the model")
    custom: list[CustomToolSettings] = Field(default_factory=list, description="the user's own tools")

    @model_validator(mode="after")
    def _unique(self) -> ToolSettings:
        names = [tool.name for tool in self.custom]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"custom tool names must be unique: {', '.join(twice)}")
        return self


class CredentialSettings(Strict):
    """The ``credentials:`` section: secrets the model may have typed (``type_secret``) by id, never
    seeing their values."""

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
