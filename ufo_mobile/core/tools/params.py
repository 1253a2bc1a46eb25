"""A tool's arguments as a pydantic model, whichever way they were declared, and back.

Three ways in (``args_model``): a pydantic model class (used as is, with unknown arguments
forbidden), DroidRun's parameter dict ``{name: {"type", "required", "default", "description"}}``,
or nothing, in which case the tool function's own signature is read (its ``ctx`` parameter left
out). Three ways out: the JSON schema of the model (``args_schema``), the JSON type of each
parameter (``param_types``) and DroidRun's parameter dict again (``droidrun_params``).
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import types
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

#: DroidRun's parameter type names (and the aliases its tools use) -> Python types.
DICT_TYPES: dict[str, Any] = {
    "string": str, "str": str,
    "number": float, "float": float,
    "integer": int, "int": int,
    "boolean": bool, "bool": bool,
    "array": list[Any], "list": list[Any],
    "object": dict[str, Any], "dict": dict[str, Any],
    "any": Any,
}

CONTEXT_PARAM = "ctx"
"""The parameter through which a tool function receives its ``ActionContext``."""

_FORBID = ConfigDict(extra="forbid")


def args_model(name: str, fn: Callable[..., Any], params: type[BaseModel] | Mapping[str, Any] | None
               ) -> type[BaseModel]:
    """The pydantic model that validates the arguments of tool ``name``.

    Raises:
        TypeError: ``params`` is of no known form, a DroidRun type is unknown, or a signature
            annotation cannot be resolved.
    """
    if params is None:
        return model_from_signature(name, fn)
    if isinstance(params, type) and issubclass(params, BaseModel):
        return forbid_extra(params)
    if isinstance(params, Mapping):
        return model_from_dict(name, params)
    raise TypeError(f"tool {name!r}: params must be a pydantic model class, a parameter dict or None, "
                    f"not {type(params).__name__}")


def forbid_extra(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` itself if it already forbids unknown fields, else a subclass that does."""
    if model.model_config.get("extra") == "forbid":
        return model
    return type(model.__name__, (model,), {"model_config": _FORBID, "__module__": model.__module__})


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_")) + "Args"


def model_from_dict(name: str, params: Mapping[str, Any]) -> type[BaseModel]:
    """A model from DroidRun's ``{param: {"type", "required", "default", "description"}}``."""
    fields: dict[str, Any] = {}
    for pname, spec in params.items():
        spec = spec if isinstance(spec, Mapping) else {"type": spec}
        type_name = str(spec.get("type", "string")).lower()
        if type_name not in DICT_TYPES:
            raise TypeError(f"tool {name!r}: parameter {pname!r} has unknown type {type_name!r} "
                            f"(known: {', '.join(sorted(DICT_TYPES))})")
        annotation = DICT_TYPES[type_name]
        description = spec.get("description")
        if spec.get("required", True) and "default" not in spec:
            fields[pname] = (annotation, Field(description=description))
        else:
            default = spec.get("default")
            if default is None:
                annotation = annotation | None
            fields[pname] = (annotation, Field(default=default, description=description))
    model: type[BaseModel] = create_model(_class_name(name), __config__=_FORBID, **fields)
    return model


def model_from_signature(name: str, fn: Callable[..., Any]) -> type[BaseModel]:
    """A model from ``fn``'s parameters and annotations (``ctx``, ``*args``, ``**kwargs`` left out)."""
    signature = inspect.signature(fn)
    wanted = {p.name: p for p in signature.parameters.values()
              if p.name != CONTEXT_PARAM and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    hints = _hints(name, fn, [p for p in wanted if wanted[p].annotation is not inspect.Parameter.empty])
    fields: dict[str, Any] = {}
    for pname, param in wanted.items():
        annotation = hints.get(pname, Any)
        if param.default is inspect.Parameter.empty:
            fields[pname] = (annotation, ...)
        else:
            fields[pname] = (annotation, param.default)
    model: type[BaseModel] = create_model(_class_name(name), __config__=_FORBID, **fields)
    return model


def _hints(name: str, fn: Callable[..., Any], params: list[str]) -> dict[str, Any]:
    """Resolved annotations of ``params`` only: the ``ctx`` annotation may name a type that exists
    only for type checkers, and must not stop the others from resolving."""
    target = inspect.unwrap(fn)
    raw = getattr(target, "__annotations__", {}) or {}
    holder = types.SimpleNamespace(__annotations__={p: raw[p] for p in params if p in raw})
    try:
        return get_type_hints(holder, globalns=getattr(target, "__globals__", {}), include_extras=True)
    except Exception as exc:  # NameError, SyntaxError, TypeError from evaluating annotation strings
        raise TypeError(f"tool {name!r}: cannot resolve the parameter annotations of {fn!r}: {exc}") from exc


def accepts(fn: Callable[..., Any], names: list[str]) -> tuple[bool, list[str]]:
    """Whether ``fn`` takes ``ctx``, and which of ``names`` it cannot take as keywords."""
    params = inspect.signature(fn).parameters
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    keyword = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    missing = [] if var_kw else [n for n in names if n not in keyword]
    return CONTEXT_PARAM in keyword or var_kw, missing


# --- describing a model ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _cached_schema(model: type[BaseModel], ref_template: str) -> dict[str, Any]:
    return model.model_json_schema(ref_template=ref_template)


def json_schema(model: type[BaseModel], ref_template: str = "#/$defs/{model}") -> dict[str, Any]:
    """``model.model_json_schema()``, made once per model class (every run describes the same tools;
    pydantic builds a schema afresh each time): a copy the caller may change."""
    return copy.deepcopy(_cached_schema(model, ref_template))


def args_schema(model: type[BaseModel], *, ref_prefix: str = "") -> dict[str, Any]:
    """The model's JSON schema; nested definitions are referenced as ``#/$defs/<ref_prefix><Name>``."""
    schema = json_schema(model, f"#/$defs/{ref_prefix}{{model}}")
    defs = schema.pop("$defs", {})
    if defs:
        schema["$defs"] = {f"{ref_prefix}{key}": value for key, value in defs.items()}
    return schema


def _property_type(prop: Mapping[str, Any]) -> str:
    """The JSON type of one schema property; ``a | null`` gives ``a``; ``any`` when unconstrained."""
    if "type" in prop and isinstance(prop["type"], str):
        return str(prop["type"])
    if "enum" in prop or "const" in prop:
        values = prop.get("enum", [prop.get("const")])
        kinds = {type(v) for v in values}
        return "string" if kinds == {str} else "integer" if kinds == {int} else "any"
    options = [p for p in prop.get("anyOf", []) if p.get("type") != "null"]
    if len(options) == 1:
        return _property_type(options[0])
    if "$ref" in prop or "allOf" in prop:
        return "object"
    return "any"


def param_types(model: type[BaseModel]) -> dict[str, str]:
    """``{param: json type}`` of one tool (for coercing arguments that arrive as text)."""
    props = json_schema(model).get("properties", {})
    return {name: _property_type(prop) for name, prop in props.items()}


def droidrun_params(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """DroidRun's parameter dict for the model; ``model_from_dict`` of it accepts the same names."""
    types_ = param_types(model)
    out: dict[str, dict[str, Any]] = {}
    for name, info in model.model_fields.items():
        spec: dict[str, Any] = {"type": types_.get(name, "any"), "required": info.is_required()}
        if not info.is_required():
            spec["default"] = info.get_default(call_default_factory=True)
        if info.description:
            spec["description"] = info.description
        out[name] = spec
    return out


_SHORT_TYPES = {"integer": "int", "string": "str", "boolean": "bool"}


def _display_type(prop: Mapping[str, Any], *, python: bool = False) -> str:
    values = prop.get("enum")
    if values is not None and all(isinstance(v, str) for v in values):
        return "|".join(json.dumps(v) for v in values) if python else "|".join(values)
    options = [p for p in prop.get("anyOf", []) if p.get("type") != "null"]
    if len(options) == 1 and "anyOf" in prop:
        return _display_type(options[0], python=python)
    if prop.get("type") == "array" and isinstance(prop.get("items"), Mapping) and "type" in prop["items"]:
        item = _display_type(prop["items"], python=python)
        size = prop.get("minItems") if prop.get("minItems") == prop.get("maxItems") else None
        return f"[{', '.join([item] * size)}]" if size else f"list of {item}"
    kind = _property_type(prop)
    return _SHORT_TYPES.get(kind, kind)


def signature_text(model: type[BaseModel], *, python: bool = False) -> str:
    """The parameters as the model reads them. For a JSON reply: ``index: int, text?: str, clear: bool
    = false`` (``?``: optional, none by default; an enum as its values, ``up|down``). For code the
    model writes (``python``): ``index: int, text: str = None, clear: bool = False``, enums quoted."""
    props = json_schema(model).get("properties", {})
    parts = []
    for name, info in model.model_fields.items():
        shown = _display_type(props.get(name, {}), python=python)
        if info.is_required():
            parts.append(f"{name}: {shown}")
            continue
        default = info.get_default(call_default_factory=True)
        if python:
            parts.append(f"{name}: {shown} = {default!r}")
        else:
            parts.append(f"{name}?: {shown}" if default is None else
                         f"{name}: {shown} = {json.dumps(default, default=str)}")
    return ", ".join(parts)
