"""The action registry: every action the model may call, with a pydantic model of its arguments.

An action is ``async def f(params, ctx) -> ActionResult``. Expected failures (a missing control, a
stale id, bad arguments, a device command that failed) come back as ``ActionResult(success=False)``
so the model sees them next turn; programming errors propagate. Every execution, successful or
not, invalidates the control cache: the screen may have changed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from types import UnionType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ufo_mobile.errors import ActionError, DeviceCommandError

if TYPE_CHECKING:
    from ufo_mobile.device.base import AppInfo, DeviceDriver
    from ufo_mobile.llm.reply import ActionCall
    from ufo_mobile.ui.cache import ControlCache
    from ufo_mobile.ui.state import UIState


@dataclass(frozen=True)
class ActionResult:
    success: bool
    summary: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"success": self.success, "summary": self.summary, **({"data": self.data} if self.data else {})}


@dataclass
class ActionContext:
    """What an action may use: the device, the observation the model saw, and the cache to drop."""

    device: DeviceDriver
    ui_state: UIState
    observation_id: str
    cache: ControlCache | None = None
    apps: list[AppInfo] = field(default_factory=list)
    swipe_duration_ms: int = 300
    max_wait_seconds: float = 10.0


P = TypeVar("P", bound=BaseModel)
ActionFunc = Callable[[P, ActionContext], Awaitable[ActionResult]]


@dataclass(frozen=True)
class ToolSpec(Generic[P]):
    name: str
    description: str
    params: type[P]
    func: ActionFunc[P]
    requires: frozenset[str]

    def signature(self) -> str:
        """``scroll(direction: "up"|"down", id: int | None = None)`` built from the params model."""
        parts = []
        for fname, info in self.params.model_fields.items():
            default = "" if info.is_required() else f" = {json.dumps(info.default)}"
            parts.append(f"{fname}: {type_name(info.annotation)}{default}")
        return f"{self.name}({', '.join(parts)})"


def type_name(annotation: Any) -> str:
    """A short, model-readable name of a parameter type; Literal values are spelled out."""
    origin = get_origin(annotation)
    if origin is Literal:
        return "|".join(json.dumps(v) for v in get_args(annotation))
    if origin in (Union, UnionType):
        return " | ".join("null" if a is type(None) else type_name(a) for a in get_args(annotation))
    return getattr(annotation, "__name__", str(annotation))


class ToolRegistry:
    """Actions by name. Build one per agent (``default_registry()``), never a global."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec[Any]] = {}

    def register(self, name: str, description: str, params: type[P], *,
                 requires: Iterable[str] = ()) -> Callable[[ActionFunc[P]], ActionFunc[P]]:
        def decorate(func: ActionFunc[P]) -> ActionFunc[P]:
            if name in self._tools:
                raise ValueError(f"action {name!r} registered twice")
            self._tools[name] = ToolSpec(name, description, params, func, frozenset(requires))
            return func

        return decorate

    def names(self) -> list[str]:
        return list(self._tools)

    def available(self, device: DeviceDriver) -> list[ToolSpec[Any]]:
        """The actions this device can perform (each one's ``requires`` is in ``device.supported``)."""
        return [t for t in self._tools.values() if t.requires <= device.supported]

    def describe(self, device: DeviceDriver) -> str:
        """One line per available action, for the prompt."""
        return "\n".join(f"- {t.signature()}: {t.description}" for t in self.available(device))

    async def execute(self, call: ActionCall, ctx: ActionContext) -> ActionResult:
        """Run ``call``; expected failures are returned as unsuccessful results."""
        try:
            spec = self._tools.get(call.name)
            if spec is None:
                return ActionResult(False, f"unknown action {call.name!r}; available: "
                                    + ", ".join(t.name for t in self.available(ctx.device)))
            if not spec.requires <= ctx.device.supported:
                return ActionResult(False, f"action {call.name!r} is not supported by this device")
            try:
                params = spec.params.model_validate(call.args)
            except ValidationError as exc:
                detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}"
                                   for e in exc.errors())
                return ActionResult(False, f"bad arguments for {call.name}: {detail}")
            try:
                return await spec.func(params, ctx)
            except (ActionError, DeviceCommandError) as exc:
                return ActionResult(False, f"{call.name} failed: {exc}")
        finally:
            if ctx.cache is not None:
                ctx.cache.invalidate(ctx.device.serial)
