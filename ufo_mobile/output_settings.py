"""``task.output``: the settings of a structured final answer, checked when the task file loads.

A pydantic model by import path (``package.module:Class`` or ``package.module.Class``) or an inline
JSON schema, checked against its draft's metaschema with every ``$ref`` resolved locally. The
answer itself is extracted and validated by ``ufo_mobile.core.llm.structured``.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import best_match
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from ufo_mobile.safe_text import printable

_BASE_URI = "urn:ufo-mobile:task-output"
_DRAFTS: tuple[Any, ...] = (jsonschema.Draft202012Validator, jsonschema.Draft201909Validator,
                            jsonschema.Draft7Validator, jsonschema.Draft6Validator, jsonschema.Draft4Validator)


def json_path(path: Any) -> str:
    """``items[0].price`` for the path deque of a jsonschema error (or a pydantic ``loc``)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class OutputSettings(BaseModel):
    """``task.output``: exactly one of ``model`` (a pydantic model's import path) and ``schema``
    (an inline JSON schema)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, description="package.module:Class or package.module.Class")
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema", description="an inline JSON schema")

    @field_validator("model")
    @classmethod
    def _import_path(cls, value: str | None) -> str | None:
        if value is not None:
            split_path(value)
        return value

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            check_json_schema(value)
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> OutputSettings:
        if (self.model is None) == (self.json_schema is None):
            raise ValueError("give exactly one of 'model' (a pydantic model, package.module:Class) "
                             "and 'schema' (an inline JSON schema)")
        return self


def split_path(path: str) -> list[tuple[str, list[str]]]:
    """The (module, attributes) readings of ``path``, most specific module first."""
    module, colon, attribute = path.partition(":")
    parts = module.split(".")
    names = attribute.split(".") if colon else []
    if not all(part.isidentifier() for part in (*parts, *names)) or (not colon and len(parts) < 2):
        raise ValueError(f"{printable(path, 120)!r} is not 'package.module:Class' or 'package.module.Class'")
    if colon:
        return [(module, names)]
    return [(".".join(parts[:n]), parts[n:]) for n in range(len(parts) - 1, 0, -1)]


def draft_of(schema: dict[str, Any]) -> Any:
    """The validator class the schema's ``$schema`` names (2020-12 when it names none)."""
    declared = schema.get("$schema")
    if declared is None:
        return jsonschema.Draft202012Validator
    for draft in _DRAFTS:
        meta_id = draft.META_SCHEMA.get("$id") or draft.META_SCHEMA["id"]
        if isinstance(declared, str) and _uri(declared) == _uri(meta_id):
            return draft
    raise ValueError(f"unknown $schema {printable(str(declared), 120)!r}: leave it out (draft 2020-12) "
                     "or name a published draft, e.g. https://json-schema.org/draft/2020-12/schema")


def _uri(uri: str) -> str:
    return uri.removeprefix("https://").removeprefix("http://").rstrip("#")


def _refs(schema: dict[str, Any]) -> tuple[list[str], bool]:
    """Every ``$ref`` string in the schema, and whether a nested schema sets its own ``$id`` (an
    iterative walk: no recursion limit to hit, and shared nodes are visited once)."""
    found: list[str] = []
    nested_id = False
    stack: list[Any] = [schema]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                found.append(node["$ref"])
            nested_id = nested_id or (node is not schema and isinstance(node.get("$id"), str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found, nested_id


def check_json_schema(schema: dict[str, Any]) -> None:
    """Check ``schema`` against its draft's metaschema and resolve its ``$ref`` (local ones only:
    nothing is fetched).

    Raises:
        ValueError: one line, naming the place in the schema that is wrong.
    """
    draft = draft_of(schema)
    error = best_match(draft(draft.META_SCHEMA).iter_errors(schema))
    if error is not None:
        where = json_path(error.absolute_path)
        raise ValueError(f"not a valid JSON schema: {where + ': ' if where else ''}{printable(error.message, 200)}")
    refs, nested_id = _refs(schema)
    if nested_id:
        return  # a $ref relative to a nested $id: left to validation time, where a miss is a ConfigError
    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = Registry().with_resource(_BASE_URI, resource).resolver(_BASE_URI)
    for ref in refs:
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise ValueError(f"$ref {printable(ref, 120)!r} cannot be resolved: point it inside the schema, "
                             "e.g. '#/$defs/Item' (nothing is fetched)") from None
