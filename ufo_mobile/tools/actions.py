"""The actions a mobile agent can take, registered on a fresh ``ToolRegistry``.

Controls are named by the ``id`` the model saw in the indexed screen text; ``text`` may be given
too (or instead) and is checked against the control's label, which catches a model that read the
wrong line. Text typed on the device goes to the driver verbatim: never through a shell here.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ufo_mobile.device.base import normalize_key
from ufo_mobile.errors import ElementNotFoundError, InvalidActionError
from ufo_mobile.tools.registry import ActionContext, ActionResult, ToolRegistry
from ufo_mobile.ui.state import UIState


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TargetParams(_Params):
    id: int | None = Field(default=None, description="control index from the screen list")
    text: str | None = Field(default=None, description="the control's label, to check or to find it")

    @model_validator(mode="after")
    def _need_target(self) -> TargetParams:
        if self.id is None and not self.text:
            raise ValueError("give 'id' (the control index) or 'text' (its label)")
        return self


class TypeParams(_Params):
    text: str
    id: int | None = None
    clear: bool = True


class ScrollParams(_Params):
    direction: Literal["up", "down", "left", "right"]
    id: int | None = None


class PointParams(_Params):
    x: int = Field(ge=0)
    y: int = Field(ge=0)


class KeyParams(_Params):
    key: str


class AppParams(_Params):
    app: str = Field(min_length=1, description="package name or the label shown under the icon")


class WaitParams(_Params):
    seconds: float = Field(gt=0)


def _label(ui: UIState, index: int) -> str:
    return ui.get_element(index).label


def _find(ui: UIState, text: str) -> int:
    wanted = text.strip().casefold()
    exact = [c.index for c in ui.elements if (c.label or c.description).strip().casefold() == wanted]
    if exact:
        return exact[0]
    partial = [c.index for c in ui.elements if wanted in (c.label or c.description).casefold()]
    if partial:
        return partial[0]
    raise ElementNotFoundError(f"no control labelled {text!r} on this screen")


def resolve_target(params: TargetParams, ctx: ActionContext) -> tuple[int, str]:
    """The control index to act on and its label, checked against the observation."""
    ui = ctx.ui_state
    if params.id is None:
        assert params.text is not None
        index = _find(ui, params.text)
    else:
        ui.resolve(params.id, ctx.observation_id)
        index = params.id
    label = _label(ui, index)
    if params.id is not None and params.text:
        if params.text.strip().casefold() not in label.casefold():
            raise InvalidActionError(
                f"control {params.id} is {label!r}, not {params.text!r}; check the id against the list")
    return index, label


def _describe(index: int, label: str) -> str:
    return f"[{index}] {label!r}" if label else f"[{index}]"


def default_registry() -> ToolRegistry:
    """A registry holding every built-in mobile action."""
    reg = ToolRegistry()

    @reg.register("tap", "Tap a control (by id, optionally checked by its text).",
                  TargetParams, requires={"tap"})
    async def tap(p: TargetParams, ctx: ActionContext) -> ActionResult:
        index, label = resolve_target(p, ctx)
        x, y = ctx.ui_state.get_clear_point(index)
        await ctx.device.tap(x, y)
        return ActionResult(True, f"tapped {_describe(index, label)} at ({x}, {y})")

    @reg.register("long_press", "Press and hold a control.", TargetParams, requires={"swipe"})
    async def long_press(p: TargetParams, ctx: ActionContext) -> ActionResult:
        index, label = resolve_target(p, ctx)
        x, y = ctx.ui_state.get_clear_point(index)
        await ctx.device.long_press(x, y)
        return ActionResult(True, f"long-pressed {_describe(index, label)} at ({x}, {y})")

    @reg.register("tap_point", "Tap raw screen pixel coordinates (only when no control fits).",
                  PointParams, requires={"tap"})
    async def tap_point(p: PointParams, ctx: ActionContext) -> ActionResult:
        ui = ctx.ui_state
        if p.x >= ui.screen_width or p.y >= ui.screen_height:
            raise InvalidActionError(f"({p.x}, {p.y}) is outside the {ui.screen_width}x{ui.screen_height} screen")
        await ctx.device.tap(p.x, p.y)
        return ActionResult(True, f"tapped point ({p.x}, {p.y})")

    @reg.register("type_text", "Type text into a field (tapping control id first); clear=true replaces.",
                  TypeParams, requires={"input_text", "tap"})
    async def type_text(p: TypeParams, ctx: ActionContext) -> ActionResult:
        where = "the focused field"
        if p.id is not None:
            index, label = resolve_target(TargetParams(id=p.id), ctx)
            x, y = ctx.ui_state.get_clear_point(index)
            await ctx.device.tap(x, y)
            where = _describe(index, label)
        await ctx.device.input_text(p.text, clear=p.clear)
        return ActionResult(True, f"typed {len(p.text)} characters into {where}")

    @reg.register("scroll", "Scroll the content (of control id, or the screen) to reveal more in a direction.",
                  ScrollParams, requires={"swipe"})
    async def scroll(p: ScrollParams, ctx: ActionContext) -> ActionResult:
        ui = ctx.ui_state
        if p.id is not None:
            ui.resolve(p.id, ctx.observation_id)
            b = ui.get_element(p.id).bounds
            left, top, right, bottom = b.left, b.top, b.right, b.bottom
        else:
            left, top, right, bottom = 0, 0, ui.screen_width, ui.screen_height
        cx, cy = (left + right) // 2, (top + bottom) // 2
        dy, dx = int((bottom - top) * 0.3), int((right - left) * 0.3)
        # Revealing content below means the finger moves up, and so on.
        moves = {"down": (cx, cy + dy, cx, cy - dy), "up": (cx, cy - dy, cx, cy + dy),
                 "right": (cx + dx, cy, cx - dx, cy), "left": (cx - dx, cy, cx + dx, cy)}
        x1, y1, x2, y2 = moves[p.direction]
        await ctx.device.swipe(x1, y1, x2, y2, ctx.swipe_duration_ms)
        return ActionResult(True, f"scrolled {p.direction}")

    @reg.register("press_key", "Press a key: back, home, enter, del, app_switch, volume_up, ...",
                  KeyParams, requires={"press_key"})
    async def press_key(p: KeyParams, ctx: ActionContext) -> ActionResult:
        try:
            key = normalize_key(p.key)
        except ValueError as exc:
            raise InvalidActionError(str(exc)) from exc
        await ctx.device.press_key(key)
        return ActionResult(True, f"pressed {key}")

    @reg.register("launch_app", "Open an installed app by package name or label.",
                  AppParams, requires={"start_app"})
    async def launch_app(p: AppParams, ctx: ActionContext) -> ActionResult:
        package = _package_for(p.app, ctx)
        await ctx.device.start_app(package)
        return ActionResult(True, f"launched {package}")

    @reg.register("wait", "Wait for the screen to settle (seconds).", WaitParams)
    async def wait(p: WaitParams, ctx: ActionContext) -> ActionResult:
        seconds = min(p.seconds, ctx.max_wait_seconds)
        await asyncio.sleep(seconds)
        return ActionResult(True, f"waited {seconds:g} s")

    return reg


def _package_for(app: str, ctx: ActionContext) -> str:
    wanted = app.strip().casefold()
    for info in ctx.apps:
        if wanted in (info.package.casefold(), info.label.casefold()):
            return info.package
    if "." in app and not ctx.apps:
        return app.strip()
    known = ", ".join(f"{a.label} ({a.package})" for a in ctx.apps[:20])
    raise InvalidActionError(f"no installed app {app!r}; installed: {known}")
