"""``ToolRegistry``: every tool the model may call, with a pydantic model of its arguments.

The API is DroidRun's (seed 002): ``register``, ``register_from_dict``, ``disable``,
``disable_unsupported``, ``execute``, ``get_tool_descriptions_text``/``_xml``,
``get_param_types``, ``get_signatures``; plus ``json_schema`` for structured output. Build one
registry per agent (``tools.build.build_tool_registry``); there is no global one.

A tool function is ``async def fn(ctx: ActionContext, **args) -> ActionResult`` (a plain ``def``
works too). It may also return a ``str`` (a failure when it starts with "Failed", DroidRun's
convention), a ``(success, summary)`` pair or ``None`` (success).

``execute`` never raises for what the model can get wrong: an unknown tool, arguments that do
not validate, or an expected failure while acting (``ActionError``, ``DeviceCommandError``) all
come back as ``ActionResult(success=False)`` for the model to read next turn. Anything else is a
programming error and propagates. Every execution, successful or not, drops the device's entry
in the control cache: the screen may have changed.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError

from ufo_mobile.core.tools import params as P
from ufo_mobile.core.tools.context import ActionContext, ActionResult, EventStream, ToolExecutionEvent
from ufo_mobile.errors import ActionError, DeviceCommandError

ToolFunction = Callable[..., Any]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Tool:
    """One registered tool. ``deps`` are the capabilities it needs (None: always available)."""

    name: str
    fn: ToolFunction
    args_model: type[BaseModel]
    description: str
    deps: frozenset[str] | None
    takes_ctx: bool

    def signature(self, *, python: bool = False) -> str:
        """``name(param: type, other?: type)``, as the model's prompt lists the tool for a JSON reply;
        ``python``: ``name(param: type, other: type = None)``, for the code the model writes."""
        return self._python_signature if python else self._signature

    # built from the arguments' JSON schema: once per tool, not once per prompt
    @cached_property
    def _signature(self) -> str:
        return f"{self.name}({P.signature_text(self.args_model)})"

    @cached_property
    def _python_signature(self) -> str:
        return f"{self.name}({P.signature_text(self.args_model, python=True)})"


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}

    # -- registration ------------------------------------------------------------------------

    def register(self, name: str, fn: ToolFunction, params: type[BaseModel] | Mapping[str, Any] | None,
                 description: str, deps: Iterable[str] | None = None) -> None:
        """Add (or replace) tool ``name``.

        Args:
            fn: ``fn(ctx, **args)``, async or not; receives ``ctx`` if it has a ``ctx`` parameter.
            params: a pydantic model class, DroidRun's parameter dict, or None to read ``fn``'s
                signature. Unknown arguments are refused either way.
            deps: capabilities the tool needs (driver operations such as ``tap``, or the state
                provider's ``element_index``/``convert_point``); None keeps it always.

        Raises:
            TypeError: ``params`` cannot be turned into a model, or ``fn`` cannot take its fields.
        """
        if not _NAME.fullmatch(name):
            raise TypeError(f"tool name {name!r} must be letters, digits and underscores")
        if not callable(fn):
            raise TypeError(f"tool {name!r}: the function is not callable")
        model = P.args_model(name, fn, params)
        takes_ctx, missing = P.accepts(fn, list(model.model_fields))
        if missing:
            raise TypeError(f"tool {name!r}: {getattr(fn, '__name__', fn)!s} has no parameter for "
                            f"{', '.join(missing)}")
        self.tools[name] = Tool(name, fn, model, description.strip(),
                                None if deps is None else frozenset(deps), takes_ctx)

    def register_from_dict(self, tools_dict: Mapping[str, Mapping[str, Any]]) -> None:
        """Register DroidRun-style ``{name: {"function", "parameters", "description", "deps"}}``.

        A missing ``parameters`` key means: read them from the function's signature.
        """
        for name, spec in tools_dict.items():
            if "function" not in spec:
                raise TypeError(f"tool {name!r}: the spec has no 'function'")
            self.register(name, spec["function"], spec.get("parameters"),
                          str(spec.get("description") or f"Tool: {name}"), spec.get("deps"))

    def disable(self, names: Iterable[str]) -> None:
        """Remove tools by name; names that are not registered are ignored."""
        for name in names:
            self.tools.pop(name, None)

    def disable_unsupported(self, capabilities: Iterable[str]) -> None:
        """Remove every tool whose ``deps`` are not all in ``capabilities`` (``deps=None`` stays)."""
        caps = frozenset(capabilities)
        self.disable([t.name for t in self.tools.values() if t.deps is not None and not t.deps <= caps])

    def names(self) -> list[str]:
        """The names of the tools offered, in registration order."""
        return list(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def _visible(self, exclude: Iterable[str] | None) -> list[Tool]:
        skip = set(exclude or ())
        return [t for t in self.tools.values() if t.name not in skip]

    # -- execution ---------------------------------------------------------------------------

    async def execute(self, name: str, args: Mapping[str, Any] | None, ctx: ActionContext,
                      workflow_ctx: EventStream | None = None) -> ActionResult:
        """Run tool ``name`` with ``args``; see the module docstring for what comes back."""
        args = dict(args or {})
        try:
            result = await self._run(name, args, ctx)
        finally:
            if ctx.cache is not None:
                ctx.cache.invalidate(ctx.driver.serial)
        if workflow_ctx is not None:
            workflow_ctx.write_event_to_stream(ToolExecutionEvent(name, args, result.success, result.summary))
        return result

    def check_call(self, name: str, args: Mapping[str, Any] | None) -> str | None:
        """What is wrong with calling tool ``name`` with ``args`` (one line for the model), or None:
        a reply is checked with it as it is read, so a wrong call is re-asked, never run."""
        bound = self._bind(name, args)
        return bound if isinstance(bound, str) else None

    def _bind(self, name: str, args: Mapping[str, Any] | None) -> tuple[Tool, BaseModel] | str:
        """Tool ``name`` and ``args`` validated by its model, or what is wrong with the call."""
        tool = self.tools.get(name)
        if tool is None:
            return f"unknown tool {name[:80]!r}; available: {', '.join(self.tools) or 'none'}"
        try:
            return tool, tool.args_model.model_validate(dict(args or {}))
        except ValidationError as exc:
            return f"bad arguments for {name}: {describe_validation(exc)}"

    async def _run(self, name: str, args: dict[str, Any], ctx: ActionContext) -> ActionResult:
        bound = self._bind(name, args)
        if isinstance(bound, str):
            return ActionResult.failed(bound)
        tool, parsed = bound
        kwargs = {field: getattr(parsed, field) for field in tool.args_model.model_fields}
        if tool.takes_ctx:
            kwargs[P.CONTEXT_PARAM] = ctx
        try:
            raw = tool.fn(**kwargs)
            if inspect.isawaitable(raw):
                raw = await raw
        except (ActionError, DeviceCommandError) as exc:
            return ActionResult.failed(f"{name} failed: {exc}")
        return normalise_result(name, raw)

    # -- descriptions ------------------------------------------------------------------------

    def get_tool_descriptions_text(self, exclude: Iterable[str] | None = None, *, python: bool = False) -> str:
        """One line per tool: ``- name(param: type = default): description`` (``Tool.signature``)."""
        return "\n".join(f"- {t.signature(python=python)}: {t.description}" for t in self._visible(exclude))

    def get_tool_descriptions_xml(self, exclude: Iterable[str] | None = None) -> str:
        """A ``<functions>`` block, one ``<function>`` of JSON (name, description, parameters) each."""
        lines = ["<functions>"]
        for tool in self._visible(exclude):
            spec = {"name": tool.name, "description": tool.description,
                    "parameters": _prompt_schema(tool.args_model)}
            lines.append(f"<function>{_xml_safe_json(spec)}</function>")
        lines.append("</functions>")
        return "\n".join(lines)

    def get_param_types(self, exclude: Iterable[str] | None = None) -> dict[str, dict[str, str]]:
        """``{tool: {param: json type}}``, per tool (a name two tools share may differ in type)."""
        return {t.name: P.param_types(t.args_model) for t in self._visible(exclude)}

    def get_signatures(self, exclude: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """``{tool: {"parameters": <DroidRun parameter dict>, "description": str}}``."""
        return {t.name: {"parameters": P.droidrun_params(t.args_model), "description": t.description}
                for t in self._visible(exclude)}

    def json_schema(self, exclude: Iterable[str] | None = None) -> dict[str, Any]:
        """A JSON schema of one call: ``anyOf`` of ``{"name": const, "args": <the tool's schema>}``."""
        options: list[dict[str, Any]] = []
        defs: dict[str, Any] = {}
        for tool in self._visible(exclude):
            schema = P.args_schema(tool.args_model, ref_prefix=f"{tool.name}__")
            defs.update(schema.pop("$defs", {}))
            options.append({"type": "object", "title": tool.name,
                            "properties": {"name": {"const": tool.name}, "args": schema},
                            "required": ["name", "args"], "additionalProperties": False})
        out: dict[str, Any] = {"anyOf": options}
        if defs:
            out["$defs"] = defs
        return out


def normalise_result(name: str, raw: Any) -> ActionResult:
    """An ``ActionResult`` from what a tool returned; any other type is a programming error."""
    if isinstance(raw, ActionResult):
        return raw
    if raw is None:
        return ActionResult(True, f"{name} done")
    if isinstance(raw, str):
        return ActionResult(not raw.startswith("Failed"), raw)
    if isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[0], bool):
        return ActionResult(raw[0], str(raw[1]))
    raise TypeError(f"tool {name!r} returned {type(raw).__name__}; return an ActionResult, a str, "
                    "a (bool, str) pair or None")


def describe_validation(error: ValidationError) -> str:
    """``field: message; other: message``: what the model must fix, without echoing the input."""
    parts = []
    for item in error.errors():
        where = ".".join(str(x) for x in item["loc"]) or "args"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def _prompt_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's schema without the titles pydantic adds (noise in a prompt)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(P.args_schema(model))  # type: ignore[no-any-return]


def _xml_safe_json(data: Any) -> str:
    """Compact JSON that cannot close or open an XML element (``<``, ``>``, ``&`` as escapes)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")

