"""The tools of UFO's two mobile MCP servers, under UFO's names, argument names, defaults and result
shapes, backed by our drivers, control ids and caches (``mcp_state.MobileServerState``).

Data collection (UFO's ``MobileDataCollector`` namespace): ``capture_screenshot``, ``get_ui_tree``,
``get_device_info``, ``get_mobile_app_target_info``, ``get_app_window_controls_target_info``.
Actions (``MobileActionExecutor``): ``tap``, ``swipe``, ``type_text``, ``launch_app``, ``press_key``,
``click_control``, ``wait``, ``invalidate_cache``.

Results are what UFO's tools return: a data URI string, lists of ``TargetInfo`` dicts, and for the
rest dicts with ``success`` plus ``action``/``message``, ``output``, ``error`` and, where UFO has
them, ``warning``, ``control_info``, ``package_name``, ``app_info``. Expected failures (the phone
did not answer in time, an unknown control id) are ``success: false`` with a one-line ``error``,
as UFO's are. Where ours deliberately differ:

- ``get_app_window_controls_target_info`` and ``get_mobile_app_target_info`` fail as MCP tool errors
  (``isError``) when the phone fails; UFO returned ``[]`` for the controls, which tells an agent the
  screen is empty when the phone is unreachable. (UFO's agent treats both the same.)
- ``get_ui_tree`` returns the dump the control ids were made from while it is fresh (UFO dumped
  again each time, so its tree and its ids could disagree).
- App names are the labels users see (UFO repeated the package); ``type`` is the package, as in UFO.
  ``include_system_apps=False`` lists the launchable apps (what a home screen shows; UFO listed
  ``pm list packages -3``, which leaves out Settings, Chrome and the other preinstalled apps).
- ``press_key`` takes every key of Android's ``KeyEvent`` (``core.keycodes``) by name, short name in
  any case, or number, and refuses an unknown name before the phone sees it, naming the nearest
  (UFO passed the text to ``input keyevent``, which presses nothing for a name it does not know).
- Typed text goes through the driver's ``input_text`` (quoted, any characters; UFO escaped only
  spaces and ``&``), and ``clear_current_text`` clears the whole field. Text that adb's ``input text``
  cannot type exactly on a phone with no input method for it is refused, naming the piece
  (``'%s'``, or the character and its code point), where it is, and why.
"""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from ufo_mobile.core.device.adb_text import UntypeableTextError
from ufo_mobile.core.device.base import AppInfo, resolve_key
from ufo_mobile.errors import ActionError, DeviceError, InvalidActionError, UIParseError
from ufo_mobile.host.mcp.state import MobileServerState, TargetInfo, control_target
from ufo_mobile.safe_text import printable

EXPECTED = (DeviceError, ActionError, UIParseError)  # failures the caller reads; anything else is a bug
MAX_WAIT_SECONDS = 60.0

Result = dict[str, Any]


def reason(exc: BaseException) -> str:
    """An error as one printable line."""
    return printable(str(exc) or type(exc).__name__, 500)


def fastmcp_compatible(tool: Tool) -> Tool:
    """Mark a wrapped result (``{"result": ...}``, for a string or a list) the way FastMCP does.

    UFO's agent reads results through the FastMCP client, which unwraps ``result`` only when the
    output schema says ``x-fastmcp-wrap-result``; without it UFO would get ``{"result": "data:..."}``
    where it expects the screenshot string. Other MCP clients ignore the extra keyword.
    """
    schema = tool.fn_metadata.output_schema
    if tool.fn_metadata.wrap_output and schema is not None:
        tool.fn_metadata.output_schema = {**schema, "x-fastmcp-wrap-result": True}
    return tool


def typing_error(exc: BaseException) -> str:
    """``reason(exc)``, and when adb's ``input text`` refused a piece of the text, that piece first:
    the caller's own text, which ``action`` repeats anyway (the driver's message names only where)."""
    if isinstance(exc, UntypeableTextError) and exc.piece:
        shown = "'%s'" if exc.piece == "%s" else f"{exc.piece!r} (U+{ord(exc.piece):04X})"
        return printable(f"[{exc.serial}] {shown} cannot be typed: {exc.detail}", 600)
    return reason(exc)


def pressed_key(key_code: str) -> str | int:
    """What the driver is asked to press for ``key_code``: our name of the key (``back`` for
    ``KEYCODE_BACK``, ``back`` or ``4``) or, for every other key of Android's ``KeyEvent``, its code
    (23 for ``KEYCODE_DPAD_CENTER`` or ``dpad_center``); see ``core.device.base.resolve_key``.

    Raises:
        InvalidActionError: no Android key by that name (the message names the nearest) or number.
    """
    try:
        key = resolve_key(key_code)
    except ValueError as exc:
        raise InvalidActionError(str(exc)) from None
    return key.name if key.name is not None else key.code


def data_tools(state: MobileServerState) -> list[Tool]:
    return DataTools(state).tools()


def action_tools(state: MobileServerState) -> list[Tool]:
    return ActionTools(state).tools()


class DataTools:
    """UFO's data collection tools over ``state`` (``tools()``)."""

    def __init__(self, state: MobileServerState) -> None:
        self.state = state

    def tools(self) -> list[Tool]:
        return [fastmcp_compatible(Tool.from_function(fn)) for fn in (
            self.capture_screenshot, self.get_ui_tree, self.get_device_info, self.get_mobile_app_target_info,
            self.get_app_window_controls_target_info)]

    async def capture_screenshot(self) -> Annotated[
            str, Field(description="The screenshot as a data URI: data:image/png;base64,...")]:
        """Take a screenshot of the phone's screen. Returns it as a base64 PNG data URI."""
        try:
            async with self.state.lock:
                png = await self.state.call("screenshot", self.state.driver.screenshot)
        except EXPECTED as exc:
            raise ToolError(f"Error capturing screenshot: {reason(exc)}") from exc
        return "data:image/png;base64," + base64.b64encode(png).decode("ascii")

    async def get_ui_tree(self) -> Annotated[dict[str, Any], Field(
            description="'success' (bool), 'ui_tree' (the uiautomator XML) and 'format' ('xml'), or 'error'")]:
        """The screen's UI hierarchy as uiautomator XML: every view with its class, text, resource-id and
        bounds. The control ids of get_app_window_controls_target_info come from the same dump."""
        try:
            observation = await self.state.observe()
        except EXPECTED as exc:
            return {"success": False, "error": reason(exc)}
        if observation.xml is None:
            return {"success": False, "error": f"Failed to dump UI hierarchy: {observation.reason}"}
        return {"success": True, "ui_tree": observation.xml, "format": "xml"}

    async def get_device_info(self) -> Annotated[dict[str, Any], Field(
            description="'success', 'device_info' (model, android_version, sdk_version, screen_size, "
                        "screen_density, battery_level, battery_status) and 'from_cache', or 'error'")]:
        """The phone's model, Android version, screen size and density, and battery (cached for 60 s)."""
        try:
            info, cached = await self.state.device_info()
        except EXPECTED as exc:
            return {"success": False, "error": reason(exc)}
        return {"success": True, "device_info": info, "from_cache": cached}

    async def get_mobile_app_target_info(
        self,
        filter: Annotated[str, Field(
            description="Only apps whose package or name contains this text (e.g. 'com.android')")] = "",
        include_system_apps: Annotated[bool, Field(
            description="Every installed package, not only the apps a home screen shows (default false)")] = False,
        force_refresh: Annotated[bool, Field(description="Ask the phone again instead of the 5-minute cache")] = False,
    ) -> Annotated[list[TargetInfo], Field(
            description="The apps: id (for launch_app), name (the label), type (the package name)")]:
        """The installed apps, numbered: use an id and its package with launch_app."""
        try:
            apps = await self.state.apps(include_system=include_system_apps, force=force_refresh)
        except EXPECTED as exc:
            raise ToolError(f"Failed to get mobile app target info: {reason(exc)}") from exc
        wanted = filter.casefold()
        return self.state.list_apps([a for a in apps if wanted in a.package.casefold() or wanted in a.label.casefold()])

    async def get_app_window_controls_target_info(
        self,
        force_refresh: Annotated[bool, Field(
            description="Dump the screen again even if the last dump is under 5 s old")] = False,
    ) -> Annotated[list[TargetInfo], Field(
            description="The controls on screen: id, name, type and rect [left, top, right, bottom]")]:
        """The controls on the current screen, numbered. Use an id with click_control or type_text;
        the ids stay valid until the screen is observed again."""
        try:
            observation = await self.state.observe(force=force_refresh)
        except EXPECTED as exc:
            raise ToolError(f"Failed to get the screen's controls: {reason(exc)}") from exc
        return [control_target(control) for control in observation.ui.elements]


class ActionTools:
    """UFO's action tools over ``state`` (``tools()``). Every one that acts on the phone drops the
    cached screen (``drops_screen``); ``invalidate_cache`` drops what it is asked to."""

    def __init__(self, state: MobileServerState) -> None:
        self.state = state

    def tools(self) -> list[Tool]:
        acting = [drops_screen(self.state, fn) for fn in (
            self.tap, self.swipe, self.type_text, self.launch_app, self.press_key, self.click_control, self.wait)]
        return [fastmcp_compatible(Tool.from_function(fn)) for fn in (*acting, self.invalidate_cache)]

    async def tap(self, x: Annotated[int, Field(description="X in pixels from the left edge")],
                  y: Annotated[int, Field(description="Y in pixels from the top edge")]) -> dict[str, Any]:
        """Tap the screen at (x, y) pixels; (0, 0) is the top-left corner."""
        action = f"tap({x}, {y})"
        try:
            async with self.state.acting():
                await self.state.call("tap", lambda: self.state.driver.tap(x, y))
        except EXPECTED as exc:
            return {"success": False, "action": action, "output": "", "error": reason(exc)}
        return {"success": True, "action": action, "output": "", "error": ""}

    async def swipe(self, start_x: Annotated[int, Field(description="Start X in pixels")],
                    start_y: Annotated[int, Field(description="Start Y in pixels")],
                    end_x: Annotated[int, Field(description="End X in pixels")],
                    end_y: Annotated[int, Field(description="End Y in pixels")],
                    duration: Annotated[int, Field(description="How long the swipe takes, in ms (default 300)")] = 300,
                    ) -> dict[str, Any]:
        """Swipe from the start point to the end point: scroll (swipe up to see what is below), drag,
        or navigate with gestures."""
        action = f"swipe({start_x},{start_y})->({end_x},{end_y}) in {duration}ms"
        if duration <= 0:
            return {"success": False, "action": action, "output": "",
                    "error": f"duration must be positive (milliseconds), not {duration}"}
        try:
            async with self.state.acting():
                await self.state.call("swipe", lambda: self.state.driver.swipe(start_x, start_y, end_x, end_y,
                                                                               duration))
        except EXPECTED as exc:
            return {"success": False, "action": action, "output": "", "error": reason(exc)}
        return {"success": True, "action": action, "output": "", "error": ""}

    async def launch_app(
        self,
        package_name: Annotated[str, Field(
            description="The app's package name (e.g. 'com.android.settings'), or its name (e.g. 'Settings')")],
        id: Annotated[str | None, Field(description="Optional: the app's id from get_mobile_app_target_info")] = None,
    ) -> dict[str, Any]:
        """Open an app by package name, by its id from get_mobile_app_target_info, or by its name."""
        try:
            app, warning, app_info = await _resolve_app(self.state, package_name, id)
        except EXPECTED as exc:
            return {"success": False, "package_name": package_name, "error": reason(exc)}
        try:
            async with self.state.acting():
                await self.state.call("launch app", lambda: self.state.driver.start_app(app.package))
        except EXPECTED as exc:
            return {"success": False, "message": f"Could not launch {app.package}", "package_name": app.package,
                    "output": "", "error": reason(exc)}
        result: Result = {"success": True, "message": f"Launched {app.package}", "package_name": app.package,
                          "output": "", "error": ""}
        if warning:
            result["warning"] = warning
        if app_info:
            result["app_info"] = app_info
        return result

    async def press_key(self, key_code: Annotated[str, Field(
            description="Any key of Android's KeyEvent: its KEYCODE_* name (KEYCODE_BACK, KEYCODE_HOME, "
                        "KEYCODE_ENTER, KEYCODE_DEL, KEYCODE_DPAD_CENTER, KEYCODE_A, ...), the name without "
                        "KEYCODE_ in any case (BACK, dpad_center), or its number (4 is KEYCODE_BACK)")],
                        ) -> Annotated[dict[str, Any], Field(
            description="'success' (bool), 'action' (str), 'output' (str) and 'error' (str)")]:
        """Press a key, as `adb shell input keyevent` does: KEYCODE_BACK to go back, KEYCODE_HOME for
        the home screen, KEYCODE_DPAD_CENTER to press the focused control, KEYCODE_A to type 'a'."""
        action = f"press_key({key_code})"
        try:
            key = pressed_key(key_code)
            async with self.state.acting():
                await self.state.call("press key", lambda: self.state.driver.press_key(key))
        except EXPECTED as exc:
            return {"success": False, "action": action, "output": "", "error": reason(exc)}
        return {"success": True, "action": action, "output": "", "error": ""}

    async def wait(self, seconds: Annotated[float, Field(
            description="How long to wait, in seconds (0-60; 0.5 is half a second)")] = 1.0) -> dict[str, Any]:
        """Wait for the screen to settle: an app loading, an animation, a page arriving."""
        if not 0 <= seconds <= MAX_WAIT_SECONDS:
            return {"success": False,
                    "error": f"Wait time must be between 0 and {MAX_WAIT_SECONDS:g} seconds, not {seconds:g}"}
        await asyncio.sleep(seconds)  # the screen may change meanwhile: the cached one is dropped after it
        return {"success": True, "action": f"wait({seconds}s)", "message": f"Waited for {seconds} seconds"}

    async def invalidate_cache(self, cache_type: Annotated[str, Field(
            description="What to forget: 'controls', 'apps', 'ui_tree', 'device_info', or 'all'")] = "all",
            ) -> dict[str, Any]:
        """Forget cached data so that the next query asks the phone again."""
        try:
            return {"success": True, "message": self.state.invalidate(cache_type)}
        except ValueError as exc:
            return {"success": False, "error": str(exc)}

    async def click_control(
        self,
        control_id: Annotated[str, Field(
            description="The id of the control to click, from get_app_window_controls_target_info")],
        control_name: Annotated[str, Field(description="The name of that control, as listed with its id")],
    ) -> dict[str, Any]:
        """Click a control of the last observed screen by its id and name (call
        get_app_window_controls_target_info first)."""
        action = f"click_control(id={control_id}, name={control_name})"
        try:
            async with self.state.acting():
                control, (x, y) = self.state.control(control_id)
                await self.state.call("tap", lambda: self.state.driver.tap(x, y))
        except EXPECTED as exc:
            return {"success": False, "action": action, "error": reason(exc)}
        target = control_target(control)
        result: Result = {"success": True, "action": action,
                          "message": f"Clicked control '{target.name}' at ({x}, {y})",
                          "control_info": {"id": target.id, "name": target.name, "type": target.type,
                                           "rect": target.rect}}
        if target.name != control_name:
            result["warning"] = (f"Warning: Control ID {control_id} has name '{target.name}', but provided name "
                                 f"is '{control_name}'. Clicking control {control_id}.")
        return result

    async def type_text(
        self,
        text: Annotated[str, Field(description="The text to type; any characters")],
        control_id: Annotated[str, Field(
            description="The id of the input field, from get_app_window_controls_target_info; it is tapped "
                        "first so that it has the focus")],
        control_name: Annotated[str, Field(description="The name of that field, as listed with its id")],
        clear_current_text: Annotated[bool, Field(
            description="Replace the field's text instead of adding to it (default false)")] = False,
    ) -> dict[str, Any]:
        """Type text into an input field of the last observed screen: the field is tapped, then the
        text typed (call get_app_window_controls_target_info first)."""
        action = f"type_text(text={text!r}, control_id={control_id!r}, control_name={control_name!r})"
        messages: list[str] = []
        try:
            async with self.state.acting():
                control, (x, y) = self.state.control(control_id)
                target = control_target(control)
                if target.name != control_name:
                    messages.append(f"Warning: Control ID {control_id} has name '{target.name}', but provided "
                                    f"name is '{control_name}'. Using ID {control_id}.")
                await self.state.call("tap", lambda: self.state.driver.tap(x, y))
                messages.append(f"Clicked control '{target.name}' at ({x}, {y})")
                await self.state.call("type text", lambda: self.state.driver.input_text(text, clear=clear_current_text))
        except EXPECTED as exc:
            return {"success": False, "action": action, "message": " | ".join(messages), "error": typing_error(exc)}
        if clear_current_text:
            messages.append("Cleared existing text")
        messages.append(f"Typed text: {text!r}")
        return {"success": True, "action": action, "message": " | ".join(messages),
                "control_info": {"id": target.id, "name": target.name, "type": target.type}}


def drops_screen(state: MobileServerState, tool: Callable[..., Awaitable[Result]]) -> Callable[..., Awaitable[Result]]:
    """``tool``, after which the cached screen is stale, whatever happened: the next observation dumps
    again. (The SDK reads the arguments from ``tool``'s own signature, which ``wraps`` keeps.)"""

    @functools.wraps(tool)
    async def action(**arguments: Any) -> Result:
        try:
            return await tool(**arguments)
        finally:
            state.invalidate("controls")

    return action


async def _resolve_app(state: MobileServerState, package_name: str,
                       app_id: str | None) -> tuple[AppInfo, str, dict[str, str] | None]:
    """The app ``launch_app`` means, a warning when it is not what the caller wrote, and UFO's app_info."""
    if app_id:
        app = state.listed_app(app_id)
        if app is None:
            raise InvalidActionError(f"App with ID '{app_id}' not found in the last app list. "
                                     "Please call get_mobile_app_target_info first.")
        warning = "" if package_name in ("", app.package) else (
            f"Warning: Provided package_name '{package_name}' differs from the package of app {app_id} "
            f"'{app.package}'. Using app {app_id}.")
        return app, warning, {"id": str(app_id), "name": app.label or app.package, "package": app.package}
    if "." in package_name:
        return AppInfo(package_name.strip(), ""), "", None
    found = await state.find_app(package_name)
    if found is None:
        raise InvalidActionError(f"No app found with name containing '{package_name}'. "
                                 "Try using full package name.")
    return found, f"Resolved '{package_name}' to package '{found.package}'", None
