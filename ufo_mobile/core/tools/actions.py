"""The built-in actions (seed 002's names). Each is ``async def action(ctx, **args) -> ActionResult``.

Controls are addressed by the index the model saw in the screen text, for the observation in
``ctx``; an optional ``text`` is checked against the control (and the controls inside it), which
catches a model that read the wrong line. Coordinates are screen pixels, like the places in the screen list;
a point off the screen is a failed action. Text goes to the driver verbatim, never through a shell.
Actions never change the shared state: ``remember`` and ``complete`` return what should change.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from ufo_mobile.core.device.base import AppInfo, DeviceDriver
from ufo_mobile.core.device.recording import RecordingDriver
from ufo_mobile.core.device.wrappers import DriverWrapper
from ufo_mobile.core.tools.context import ActionContext, ActionResult, TaskCompletion
from ufo_mobile.core.ui.controls import Control, short_class_name
from ufo_mobile.core.ui.state import UIState
from ufo_mobile.errors import DeviceCommandError, InvalidActionError

SCROLL_FRACTION = 0.3
"""How far ``scroll`` moves the finger from the centre, as a fraction of the scrolled area."""


# --- finding what to act on ------------------------------------------------------------------------


def inner_texts(ui: UIState, control: Control) -> list[str]:
    """The texts of ``control`` and of every control inside it, in screen order."""
    inside = {control.index}
    texts = [t for t in (control.label, control.description, control.hint) if t]
    for other in ui.elements:
        if other.parent in inside:
            inside.add(other.index)
            texts.extend(t for t in (other.label, other.description, other.hint) if t)
    return texts


def name_of(ui: UIState, control: Control) -> str:
    """``[3] 'Wi-Fi'``, or ``[3] LinearLayout`` for a control with no text of its own or inside."""
    texts = inner_texts(ui, control)
    return f"[{control.index}] {texts[0]!r}" if texts else f"[{control.index}] {control.short_class}"


def same_label(a: str, b: str) -> bool:
    """Whether two labels are the same once case, spacing and Unicode forms are set aside."""
    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return norm(a) == norm(b)


def target(ctx: ActionContext, index: int, expected: str | None) -> Control:
    """The control ``index`` of the observation in ``ctx``, checked against ``expected`` if given: a
    whole label of the control (its text, description or hint) or of a control inside it (a row's
    title), compared without regard to case and spacing.

    Raises:
        StaleObservationError, ElementNotFoundError: no such control on that screen.
        InvalidActionError: no label of the control is ``expected``; the message names its labels.
    """
    control = ctx.ui.resolve(index, ctx.observation_id)
    if expected is not None and expected.strip():
        texts = inner_texts(ctx.ui, control)
        if not any(same_label(expected, text) for text in texts):
            shown = ", ".join(repr(t) for t in texts[:4]) if texts else "no label"
            raise InvalidActionError(f"control {index} is labelled {shown}, not {expected!r}: nothing was done; "
                                     "check the number against the screen list")
    return control


def on_screen(ui: UIState, x: int, y: int, what: str = "point") -> None:
    """Raise ``InvalidActionError`` unless (x, y) is a pixel of the screen."""
    if not (0 <= x < ui.screen_width and 0 <= y < ui.screen_height):
        raise InvalidActionError(f"{what} ({x}, {y}) is outside the {ui.screen_width}x{ui.screen_height} screen "
                                 f"(x 0-{ui.screen_width - 1}, y 0-{ui.screen_height - 1})")


def control_at(ui: UIState, x: int, y: int) -> Control | None:
    """The smallest control whose bounds hold (x, y)."""
    hits = [c for c in ui.elements if c.bounds.contains_point(x, y)]
    return min(hits, key=lambda c: (c.bounds.area, -c.index)) if hits else None


def _at(ui: UIState, x: int, y: int) -> str:
    control = control_at(ui, x, y)
    return f"({x}, {y})" + (f" on {name_of(ui, control)}" if control is not None else "")


def find_app(apps: list[AppInfo], text: str) -> AppInfo:
    """The installed app whose package or label is ``text`` (case-insensitive), or whose label
    alone contains it.

    Raises:
        InvalidActionError: no app matches, or several labels contain ``text``.
    """
    wanted = " ".join(text.split()).casefold()
    for app in apps:
        if wanted in (app.package.casefold(), app.label.casefold()):
            return app
    partial = [app for app in apps if wanted in app.label.casefold()]
    if len(partial) == 1:
        return partial[0]
    listed = ", ".join(f"{a.label} ({a.package})" for a in (partial or apps)[:30])
    if partial:
        raise InvalidActionError(f"{text!r} matches several apps: {listed}; give the exact label or package")
    if not apps and "." in wanted and " " not in wanted:  # the installed apps are unknown: trust a package
        return AppInfo(text.strip(), text.strip())
    raise InvalidActionError(f"no installed app {text!r}; installed: {listed or 'unknown'}")


@contextmanager
def secret_typing(driver: DeviceDriver) -> Iterator[None]:
    """Within this block, every action recorder in the driver stack withholds typed text."""
    with ExitStack() as stack:
        layer: DeviceDriver | None = driver
        while layer is not None:
            if isinstance(layer, RecordingDriver):
                stack.enter_context(layer.secret_text())
            layer = layer.inner if isinstance(layer, DriverWrapper) else None
        yield


async def tap_control(ctx: ActionContext, control: Control) -> str:
    """Tap ``control`` where a tap reaches it; say where (``at (x, y)``, or ``inside [l,t,r,b]``).

    On a stealth screen (``UIState.stealth``) a control nothing covers is tapped through the
    driver's ``tap_in``, at a point the driver picks inside it; otherwise at its clear point.
    """
    if ctx.ui.stealth:
        box = ctx.ui.open_bounds(control.index)
        if box is not None:
            await ctx.driver.tap_in(box)
            return f"inside {box.as_list()}"
    x, y = ctx.ui.get_clear_point(control.index)
    await ctx.driver.tap(x, y)
    return f"at ({x}, {y})"


# --- the actions ---------------------------------------------------------------------------------


async def click(ctx: ActionContext, index: int, text: str | None = None) -> ActionResult:
    control = target(ctx, index, text)
    where = await tap_control(ctx, control)
    return ActionResult(True, f"clicked {name_of(ctx.ui, control)} {where}")


async def click_at(ctx: ActionContext, x: int, y: int) -> ActionResult:
    on_screen(ctx.ui, x, y)
    await ctx.driver.tap(x, y)
    return ActionResult(True, f"clicked at {_at(ctx.ui, x, y)}")


async def click_area(ctx: ActionContext, x1: int, y1: int, x2: int, y2: int) -> ActionResult:
    ui = ctx.ui
    for x, y in ((x1, y1), (x2, y2)):  # a corner may sit on the far edge: bounds are end-exclusive
        if not (0 <= x <= ui.screen_width and 0 <= y <= ui.screen_height):
            raise InvalidActionError(f"corner ({x}, {y}) is outside the {ui.screen_width}x{ui.screen_height} screen")
    cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
    on_screen(ui, cx, cy, "centre")
    await ctx.driver.tap(cx, cy)
    return ActionResult(True, f"clicked the centre of [{x1},{y1},{x2},{y2}] at {_at(ui, cx, cy)}")


async def long_press(ctx: ActionContext, index: int, text: str | None = None) -> ActionResult:
    control = target(ctx, index, text)
    x, y = ctx.ui.get_clear_point(index)
    await ctx.driver.long_press(x, y)
    return ActionResult(True, f"long-pressed {name_of(ctx.ui, control)} at ({x}, {y})")


async def long_press_at(ctx: ActionContext, x: int, y: int) -> ActionResult:
    on_screen(ctx.ui, x, y)
    await ctx.driver.long_press(x, y)
    return ActionResult(True, f"long-pressed at {_at(ctx.ui, x, y)}")


def _fields(ui: UIState, controls: list[Control]) -> str:
    return ", ".join(name_of(ui, c) for c in controls[:6]) + (", ..." if len(controls) > 6 else "")


def field_for(ui: UIState, control: Control) -> Control:
    """The text field that typing "into" ``control`` means: the control itself when it is one; the
    field it is part of (a placeholder inside it); the one field inside it (a row or a search bar);
    or, for a plain label, the one field that shares its parent view (a TextInputLayout's label, a
    form row's caption). A dump has no ``labelFor``, so the layout is all there is to go by.

    Raises:
        InvalidActionError: none of these is a single text field; the message says which controls are.
    """
    if control.editable:
        return control
    node = control.node
    fields = [c for c in ui.elements if c.editable]
    around = [c for c in fields if c.node.contains_node(node)]
    if around:
        return max(around, key=lambda c: c.node.order)  # the innermost
    inside = [c for c in fields if node.contains_node(c.node)]
    if len(inside) == 1:
        return inside[0]
    what = f"{name_of(ui, control)} ({short_class_name(node.class_name, control.kind)}) is not a text field"
    if len(inside) > 1:
        raise InvalidActionError(f"{what}; it holds several ({_fields(ui, inside)}): nothing was typed; "
                                 "give the number of one of them")
    parent = ui.tree.nodes[node.parent] if ui.tree is not None and node.parent >= 0 else None
    if parent is not None and not control.actionable:
        beside = [c for c in fields if parent.contains_node(c.node)]
        if len(beside) == 1:
            return beside[0]
    where = (f"the text fields on this screen are {_fields(ui, fields)}" if fields
             else "this screen has no text field: open or tap one first")
    raise InvalidActionError(f"{what}: nothing was typed; {where}")


async def _focus(ctx: ActionContext, index: int | None) -> tuple[str, bool]:
    """Tap the text field ``index`` means (if given; see ``field_for``): where the text goes, and
    whether that is a password field. Nothing is tapped when there is no such field."""
    if index is None:
        focused = ctx.ui.phone_state.get("focused_element") or {}
        if focused.get("editable") and focused.get("index") is not None:
            field = ctx.ui.get_control(int(focused["index"]))
            return f"{name_of(ctx.ui, field)} (the focused field)", field.node.password
        return "the focused field", bool(focused.get("password"))
    control = target(ctx, index, None)
    field = field_for(ctx.ui, control)
    await tap_control(ctx, field)
    where = name_of(ctx.ui, field)
    if field is not control:
        where += f" (the text field of {name_of(ctx.ui, control)})"
    return where, field.node.password


async def type_text(ctx: ActionContext, text: str, index: int | None = None, clear: bool = False) -> ActionResult:
    where, password = await _focus(ctx, index)
    if password:  # the recording keeps its length only, as for a secret
        with secret_typing(ctx.driver):
            await ctx.driver.input_text(text, clear=clear)
    else:
        await ctx.driver.input_text(text, clear=clear)
    how = "replacing its text" if clear else "appended"
    return ActionResult(True, f"typed {len(text)} characters into {where} ({how})")


async def type_secret(ctx: ActionContext, secret_id: str, index: int | None = None) -> ActionResult:
    if ctx.credential_manager is None or not len(ctx.credential_manager):
        raise InvalidActionError("no secrets are configured for this run")
    value = ctx.credential_manager.resolve(secret_id)
    where, _ = await _focus(ctx, index)
    try:
        with secret_typing(ctx.driver):
            await ctx.driver.input_text(value, clear=True)
    except DeviceCommandError as exc:  # the driver may quote what it failed to type
        message = str(exc).removeprefix(f"[{exc.serial}] ").replace(value, "[secret]")
        raise DeviceCommandError(message, serial=exc.serial) from None
    return ActionResult(True, f"typed the secret {secret_id!r} into {where} (replacing its text)")


async def swipe(ctx: ActionContext, coordinate: list[int], coordinate2: list[int],
                duration: float = 1.0) -> ActionResult:
    (x1, y1), (x2, y2) = coordinate, coordinate2
    on_screen(ctx.ui, x1, y1, "start")
    on_screen(ctx.ui, x2, y2, "end")
    await ctx.driver.swipe(x1, y1, x2, y2, max(1, round(duration * 1000)))
    return ActionResult(True, f"swiped from ({x1}, {y1}) to ({x2}, {y2}) in {duration:g} s")


async def scroll(ctx: ActionContext, direction: str, index: int | None = None) -> ActionResult:
    ui = ctx.ui
    if index is not None:
        b = ui.resolve(index, ctx.observation_id).bounds
        left, top, right, bottom = b.left, b.top, b.right, b.bottom
    else:
        left, top, right, bottom = 0, 0, ui.screen_width, ui.screen_height
    cx, cy = (left + right) // 2, (top + bottom) // 2
    dy, dx = int((bottom - top) * SCROLL_FRACTION), int((right - left) * SCROLL_FRACTION)
    # Revealing the content below means the finger moves up, and so on.
    moves = {"down": (cx, cy + dy, cx, cy - dy), "up": (cx, cy - dy, cx, cy + dy),
             "right": (cx + dx, cy, cx - dx, cy), "left": (cx - dx, cy, cx + dx, cy)}
    x1, y1, x2, y2 = moves[direction]
    await ctx.driver.swipe(x1, y1, x2, y2, ctx.swipe_duration_ms)
    return ActionResult(True, f"scrolled {direction}" + (f" in [{index}]" if index is not None else ""))


async def system_button(ctx: ActionContext, button: str) -> ActionResult:
    await ctx.driver.press_key(button)
    return ActionResult(True, f"pressed {button}")


async def open_app(ctx: ActionContext, text: str) -> ActionResult:
    app = find_app(ctx.apps, text)
    await ctx.driver.start_app(app.package)
    return ActionResult(True, f"opened {app.label} ({app.package})")


async def wait(ctx: ActionContext, duration: float) -> ActionResult:
    seconds = min(duration, ctx.max_wait_seconds)
    await ctx.sleep(seconds)
    capped = f" (capped at {ctx.max_wait_seconds:g} s)" if seconds < duration else ""
    return ActionResult(True, f"waited {seconds:g} s{capped}")


async def remember(ctx: ActionContext, information: str) -> ActionResult:
    return ActionResult(True, f"remembered: {information}", state_update={"memory": information})


async def complete(ctx: ActionContext, success: bool, message: str) -> ActionResult:
    outcome = "done" if success else "failed"
    return ActionResult(True, f"task {outcome}: {message}", completion=TaskCompletion(success, message))
