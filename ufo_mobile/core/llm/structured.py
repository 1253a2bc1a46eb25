"""Structured final answers: the task asks for data, the agent's answer must carry it.

A task file declares the shape of its answer under ``task.output``, either as a pydantic model
named by its import path or as an inline JSON schema::

    task:
      text: Read the total of the last invoice
      output: {model: "mypkg.models:Invoice"}      # or "mypkg.models.Invoice"

    task:
      text: Read the total of the last invoice
      output:
        schema: {type: object, properties: {total: {type: number}}, required: [total]}

``load_output_spec`` turns the settings into an ``OutputSpec`` once, at start-up: the model is
imported, the schema checked against its metaschema and its ``$ref`` resolved, so a bad file is a
``ConfigError`` before the phone is touched. ``OutputSpec.schema_text()`` goes into the prompt;
``OutputSpec.extract()`` finds the JSON in the model's answer (bare, fenced, or inside prose) and
validates it, raising a ``StructuredOutputError`` (one line naming the failing path) that can be
fed back to the model.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

import jsonschema
from jsonschema.exceptions import best_match
from pydantic import BaseModel, ValidationError
from referencing.exceptions import Unresolvable

from ufo_mobile.errors import ConfigError, LLMOutputParseError
from ufo_mobile.output_settings import OutputSettings, check_json_schema, draft_of, json_path, split_path
from ufo_mobile.safe_text import printable

JSONValue: TypeAlias = dict[str, Any] | list[Any] | str | int | float | bool | None

MAX_CANDIDATES = 64  # openers in prose tried as the start of a JSON value before giving up


class StructuredOutputError(LLMOutputParseError, ValueError):
    """The answer holds no JSON, or JSON of the wrong shape; ``str()`` is one line naming the path."""


@dataclass(frozen=True)
class OutputSpec:
    """The shape of the final answer: a pydantic ``model`` (with its JSON schema) or a JSON schema."""

    source: str  # the model's import path, or "schema"
    json_schema: dict[str, Any]
    model: type[BaseModel] | None = None

    def schema_text(self) -> str:
        """The JSON schema, indented, for the prompt."""
        return json.dumps(self.json_schema, indent=2, ensure_ascii=False)

    def extract(self, answer: str) -> JSONValue:
        """The JSON value in ``answer``, validated (for a model: its JSON dump, defaults filled in).

        Raises:
            StructuredOutputError: no JSON found, or JSON that does not match; the message is one
                line naming the failing path.
        """
        value = find_json(answer, _openers(self.json_schema))
        if self.model is not None:
            try:
                return cast(JSONValue, self.model.model_validate(value).model_dump(mode="json"))
            except ValidationError as exc:
                raise StructuredOutputError(_describe_pydantic(exc), raw=answer) from exc
        validator = draft_of(self.json_schema)(self.json_schema, format_checker=jsonschema.FormatChecker())
        try:
            errors = list(itertools.islice(validator.iter_errors(value), 100))
        except Unresolvable as exc:  # load_output_spec resolved every $ref: only a nested $id gets here
            raise ConfigError(f"$ref cannot be resolved: {printable(str(exc), 200)}", key="task.output.schema") from exc
        error = best_match(errors)
        if error is not None:
            where = json_path(error.absolute_path) or "(top level)"
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise StructuredOutputError(f"{where}: {printable(error.message, 200)}{more}", raw=answer)
        return value


def _describe_pydantic(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = json_path(first["loc"]) or "(top level)"
    got = f" (got {printable(repr(first['input']), 80)})" if first["type"] not in ("missing", "extra_forbidden") else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {printable(first['msg'], 200)}{got}{more}"


def _openers(schema: dict[str, Any]) -> str:
    """Which JSON values to look for in prose: objects, arrays, or both (by the schema's type)."""
    kind = schema.get("type")
    return {"object": "{", "array": "["}.get(kind, "{[") if isinstance(kind, str) else "{["


def _unfenced(text: str) -> str:
    """``text`` without one code fence wrapped around all of it."""
    if text.startswith("```") and text.endswith("```") and "\n" in text:
        return text[text.index("\n") + 1 : -3].strip()
    return text


def find_json(answer: str, openers: str = "{[") -> JSONValue:
    """The JSON value in ``answer``: all of it (maybe fenced), else the first object or array (as
    ``openers`` allows) that parses, starting from at most ``MAX_CANDIDATES`` openers.

    Raises:
        StructuredOutputError: no JSON value found.
    """
    text = _unfenced(answer.strip())
    try:
        return cast(JSONValue, json.loads(text))
    except (ValueError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    starts = re.finditer("[" + re.escape(openers) + "]", text)
    for start in itertools.islice(starts, MAX_CANDIDATES):
        try:
            return cast(JSONValue, decoder.raw_decode(text, start.start())[0])
        except (ValueError, RecursionError):
            continue
    wanted = {"{": "JSON object", "[": "JSON array"}.get(openers, "JSON object or array")
    raise StructuredOutputError(f"the answer contains no {wanted}: put the data in the answer as one {wanted} "
                                "that follows the output schema", raw=answer)


def _import_model(path: str) -> type[BaseModel]:
    """The pydantic model ``path`` names; a ``ValueError`` (one line) when there is none."""
    readings = split_path(path)
    target: Any = None
    for n, (module_name, names) in enumerate(readings, start=1):
        try:
            target = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name and n < len(readings):
                continue  # not a module but a class in the shorter one (package.module.Class)
            raise ValueError(f"cannot import {printable(module_name, 120)}: {printable(str(exc), 200)}") from None
        except Exception as exc:  # an import runs the module's code: any error is the file's problem
            detail = " ".join(str(exc).split())
            raise ValueError(f"cannot import {printable(module_name, 120)}: {type(exc).__name__}: "
                             f"{printable(detail, 200)}") from None
        for name in names:
            if not hasattr(target, name):
                raise ValueError(f"{printable(module_name, 120)} has no {printable('.'.join(names), 120)}")
            target = getattr(target, name)
        break
    if not (isinstance(target, type) and issubclass(target, BaseModel)):
        raise ValueError(f"{printable(path, 120)} is not a pydantic model (a subclass of pydantic.BaseModel)")
    return target


def load_output_spec(settings: OutputSettings, *, source: str | None = None) -> OutputSpec:
    """The ``OutputSpec`` of ``task.output``; ``source`` names the task file in errors.

    Raises:
        ConfigError: one line naming ``task.output.model`` or ``task.output.schema``: the model
            cannot be imported, is not a pydantic model or has no JSON schema; the schema is invalid.
    """
    if settings.model is not None:
        try:
            model = _import_model(settings.model)
        except ValueError as exc:
            raise ConfigError(str(exc), path=source, key="task.output.model") from None
        try:
            schema = model.model_json_schema()
        except Exception as exc:  # the user's types: any failure to describe them is the file's problem
            detail = printable(" ".join(str(exc).split()), 200)
            raise ConfigError(f"{settings.model} has no JSON schema: {type(exc).__name__}: {detail}",
                              path=source, key="task.output.model") from None
        return OutputSpec(source=settings.model, json_schema=schema, model=model)
    schema = settings.json_schema or {}
    try:
        check_json_schema(schema)
    except ValueError as exc:
        raise ConfigError(str(exc), path=source, key="task.output.schema") from None
    return OutputSpec(source="schema", json_schema=schema)
