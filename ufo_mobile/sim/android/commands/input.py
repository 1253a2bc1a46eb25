"""``input``: taps, swipes, key events and text, with Android's own rules; shared with the
uiautomator2 server (key codes, typing, touch gestures).

``input text`` follows Android's ``InputShellCommand``: only the first argument is typed, ``%s``
becomes a space, and characters the virtual keyboard map has no key for (anything outside printable
ASCII, such as emoji or Chinese) make the command fail without typing anything.

``input keyevent`` takes every key of Android's ``KeyEvent`` by name, short name or number
(``core.keycodes``, read as ``KeyEvent.keyCodeFromString`` reads them, case aside) and fails on
anything else. Keys do what they do on a phone where the sim has the thing they act on: HOME, BACK,
ENTER, DEL and SPACE; character keys type into the focused field; DPAD_CENTER clicks the focused
field; ESCAPE falls back to BACK. The rest (NOTIFICATION, WAKEUP, media keys, ...) are taken and do
nothing visible: the sim has no shade and no screen to wake.

Device profiles: ``keycombination`` is an InputShellCommand addition (Android 11+), unknown before;
MIUI (``inject_guard``) refuses injected input with a SecurityException until "USB debugging
(Security settings)" is on (openatx/uiautomator2#520, openatx/android-uiautomator-server#2).
"""

from __future__ import annotations

import asyncio
import time

from ufo_mobile.core import keycodes
from ufo_mobile.sim.android.devstate import DeviceState, Touch
from ufo_mobile.sim.android.shio import Command, Ctx
from ufo_mobile.sim.phone import keys
from ufo_mobile.sim.phone.simphone import SimPhone

_CHARS = {55: ",", 56: ".", 68: "`", 69: "-", 70: "=", 71: "[", 72: "]", 73: "\\", 74: ";", 75: "'",
          76: "/", 77: "@", 81: "+", 17: "*", 18: "#"}
_CHARS.update({29 + i: chr(ord("a") + i) for i in range(26)})
_CHARS.update({7 + i: str(i) for i in range(10)})
_SOURCES = {"keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus", "dpad",
            "gesture", "touchscreen", "gamepad", "rotaryencoder"}
META_SHIFT_ON = 1
META_CTRL_ON = 0x1000
KEYCODE_A = keycodes.code("KEYCODE_A")
KEYCODE_V = keycodes.code("KEYCODE_V")
KEYCODE_DEL = keycodes.code("KEYCODE_DEL")
KEYCODE_DPAD_CENTER = keycodes.code("KEYCODE_DPAD_CENTER")
KEYCODE_ESCAPE = keycodes.code("KEYCODE_ESCAPE")
_CTRL_KEYS = (113, 114)  # CTRL_LEFT, CTRL_RIGHT
INJECT_DENIED = "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission"
_INJECTING = {"tap": ("injectMotionEvent", "sendTap"), "swipe": ("injectMotionEvent", "sendSwipe"),
              "draganddrop": ("injectMotionEvent", "sendDragAndDrop"), "press": ("injectMotionEvent", "sendTap"),
              "roll": ("injectMotionEvent", "sendMove"), "scroll": ("injectMotionEvent", "sendScroll"),
              "motionevent": ("injectMotionEvent", "sendMotionEvent"), "text": ("injectKeyEvent", "sendText"),
              "keyevent": ("injectKeyEvent", "sendKeyEvent"),
              "keycombination": ("injectKeyEvent", "sendKeyCombination")}


class InputUsageError(Exception):
    """Bad arguments to ``input``; the message is what Android prints after ``Error: ``."""


def keycode_of(text: str) -> int | None:
    """Any key of Android's ``KeyEvent`` as ``keyCodeFromString`` reads it: ``KEYCODE_DPAD_CENTER``,
    ``DPAD_CENTER`` or ``23`` (``core.keycodes``), its names in capitals only, as Android's label
    lookup compares them exactly (``dpad_center`` is no key); or the simulator's own ``select_all``;
    None if Android has no such key."""
    code = keycodes.code_of(text) if text == text.upper() else None
    if code is None and keys.key_name(text) == "select_all":
        return keys.keycode("select_all")
    return code


def press_keycode(device: DeviceState, code: int, meta: int = 0) -> None:
    """What pressing ``code`` does on the sim: its own keys act, character keys type into the focus;
    with CTRL held (TextView's shortcuts), ``A`` selects all of the focused field, ``V`` pastes the
    clipboard into it, and DEL deletes a selection (other shortcuts do nothing here). Keys go to the
    focused field whatever was tapped last: a tap on a plain label does not take the focus."""
    phone = device.phone
    if meta & META_CTRL_ON:
        if phone.focused_field() is None:
            return
        if code == KEYCODE_A:
            phone.press_key("select_all")
        elif code == KEYCODE_V and device.clipboard:
            phone.input_text(device.clipboard)
        elif code == KEYCODE_DEL and phone.selecting():
            phone.press_key("del")
        return
    press_key_alone(phone, code, shift=bool(meta & META_SHIFT_ON))


def press_key_alone(phone: SimPhone, code: int, *, shift: bool = False) -> None:
    """What pressing key ``code`` (no modifier but SHIFT) does on the simulated phone: DPAD_CENTER
    clicks the focused field, ESCAPE falls back to BACK (Generic.kcm), the phone's own keys act,
    character keys type into the focused field, and any other key does nothing."""
    if code == KEYCODE_DPAD_CENTER:
        _click_focused_field(phone)
        return
    if code == KEYCODE_ESCAPE:
        code = keys.keycode("back")
    if keys.key_name(code) is not None:
        phone.press_key(code)
        return
    char = _CHARS.get(code)
    if char is not None and phone.focused_field() is not None:
        phone.input_text(char.upper() if shift else char)


def _click_focused_field(phone: SimPhone) -> None:
    """DPAD_CENTER, a confirm key, clicks the focused view: on the sim only a text field takes the
    focus, and a click on it shows the keyboard again if it was hidden."""
    focus = phone.focused_field()
    view = None if focus is None else phone.snapshot().find(lambda v: v.kind == "field" and v.bind == focus)
    if view is not None and view.bounds.right > view.bounds.left and view.bounds.bottom > view.bounds.top:
        phone.tap(*view.bounds.center)


def type_text(device: DeviceState, text: str, *, clear: bool = False) -> bool:
    """Commit ``text`` to the focused field exactly (the IME and clipboard paths); False without focus."""
    phone = device.phone
    if phone.focused_field() is None:
        return False
    phone.input_text(text, clear)
    return True


def android_input_text(raw: str) -> str:
    """The text ``input text RAW`` types: each ``%s`` becomes a space (Android's escape rule)."""
    out: list[str] = []
    escape = False
    for char in raw:
        if escape and char == "s":
            out[-1] = " "
            escape = False
            continue
        escape = char == "%"
        out.append(char)
    return "".join(out)


def key_typable(text: str) -> bool:
    """Whether the virtual keyboard map has keys for every character (printable ASCII, tab, newline)."""
    return all(" " <= char <= "~" or char in "\n\t" for char in text)


def touch_down(device: DeviceState, x: int, y: int) -> None:
    device.touch = Touch(x, y, time.monotonic(), x, y)


def touch_move(device: DeviceState, x: int, y: int) -> None:
    if device.touch is not None:
        device.touch.last_x, device.touch.last_y = x, y


def touch_up(device: DeviceState, x: int, y: int) -> None:
    """End the gesture: a tap, a long press or a swipe, from where it went down to here."""
    touch, device.touch = device.touch, None
    if touch is None:
        return
    duration = round((time.monotonic() - touch.started) * 1000)
    device.phone.swipe(touch.x, touch.y, x, y, max(1, duration))


# -- the input command -------------------------------------------------------------------------------


def inject_denied_trace(inject: str, caller: str) -> str:
    """The SecurityException and its system_server frames (frame line numbers are illustrative)."""
    return (f"{INJECT_DENIED}\n"
            "\tat com.android.server.input.InputManagerService.injectInputEventToTarget"
            "(InputManagerService.java:1158)\n"
            "\tat com.android.server.input.InputManagerService.injectInputEvent(InputManagerService.java:1133)\n"
            "\tat android.hardware.input.InputManager.injectInputEvent(InputManager.java:1103)\n"
            f"\tat com.android.server.input.InputShellCommand.{inject}(InputShellCommand.java:144)\n"
            f"\tat com.android.server.input.InputShellCommand.{caller}(InputShellCommand.java:353)\n"
            "\tat com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:252)\n"
            "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n"
            "\tat android.os.ShellCommand.exec(ShellCommand.java:38)\n"
            "\tat com.android.server.input.InputManagerService.onShellCommand(InputManagerService.java:2822)\n"
            "\tat android.os.Binder.shellCommand(Binder.java:1092)\n"
            "\tat android.os.Binder.onTransact(Binder.java:912)\n")


async def _refuse_injection(ctx: Ctx, command: str) -> int:
    """``cmd input`` (what ``input`` runs since Android 11) reports a crashed command the way
    ShellCommand.exec does: a blank line, ``Exception occurred while executing 'X':``, the trace;
    exit status 255."""
    inject, caller = _INJECTING[command]
    await ctx.err(f"\nException occurred while executing '{command}':\n{inject_denied_trace(inject, caller)}")
    return 255


def _ints(args: list[str], count: int) -> list[int]:
    if len(args) < count:
        raise InputUsageError(f"expected {count} arguments, got {len(args)}")
    try:
        return [round(float(value)) for value in args[:count]]
    except ValueError as exc:
        raise InputUsageError(f"Invalid arguments for command: {' '.join(args)}") from exc


async def _keyevent(ctx: Ctx, args: list[str]) -> int:
    names = [arg for arg in args if arg not in ("--longpress", "--doubletap", "--async", "--delay")]
    if not names:
        raise InputUsageError("keyevent requires at least one key code")
    for name in names:
        code = keycode_of(name)
        if code is None:
            return await ctx.fail(f"Error: Unknown keycode {name}")
        press_keycode(ctx.device, code)
    return 0


async def _keycombination(ctx: Ctx, args: list[str]) -> int:
    """The keys pressed together: CTRL (113, 114) is a modifier of the others."""
    codes = [keycode_of(name) for name in args]
    if len(codes) < 2:
        raise InputUsageError("keycombination requires at least two key codes")
    if None in codes:
        return await ctx.fail(f"Error: Unknown keycode {args[codes.index(None)]}")
    meta = META_CTRL_ON if any(code in _CTRL_KEYS for code in codes) else 0
    for code in codes:
        if code is not None and code not in _CTRL_KEYS:
            press_keycode(ctx.device, code, meta)
    return 0


async def _text(ctx: Ctx, args: list[str]) -> int:
    if not args:
        raise InputUsageError("text requires an argument")
    text = android_input_text(args[0])
    if not key_typable(text):
        await ctx.err("Exception occurred while executing 'text':\njava.lang.NullPointerException: "
                      "Attempt to get length of null array\n\tat com.android.server.input.InputShellCommand"
                      ".sendText(InputShellCommand.java:327)\n")
        return 255
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line:
            type_text(ctx.device, line)
        if index < len(lines) - 1:
            ctx.device.phone.press_key("enter")
    return 0


def _gesture(ctx: Ctx, command: str, args: list[str]) -> int:
    phone = ctx.device.phone
    if command == "tap":
        x, y = _ints(args, 2)
        phone.tap(x, y)
    elif command in ("swipe", "draganddrop"):
        x1, y1, x2, y2 = _ints(args, 4)
        duration = _ints(args[4:], 1)[0] if len(args) > 4 else (300 if command == "swipe" else 1000)
        (phone.swipe if command == "swipe" else phone.drag)(x1, y1, x2, y2, max(0, duration))
    elif command == "motionevent":
        if not args:
            raise InputUsageError("motionevent requires an action")
        x, y = _ints(args[1:], 2)
        action = args[0].upper()
        {"DOWN": touch_down, "MOVE": touch_move, "UP": touch_up}.get(action, touch_move)(ctx.device, x, y)
        if action == "CANCEL":
            ctx.device.touch = None
    elif command not in ("press", "roll", "scroll"):
        raise InputUsageError(f"Unknown command: {command}")
    return 0


async def input_(ctx: Ctx, args: list[str]) -> int:
    rest = list(args)
    while rest and (rest[0] in _SOURCES or rest[0] == "-d"):
        del rest[:2 if rest[0] == "-d" else 1]
    if not rest:
        return await ctx.fail("Error: no command given\nUsage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
    command, params = rest[0], rest[1:]
    if command == "keycombination" and not ctx.device.profile.keycombination:
        await ctx.err(f"Error: Unknown command: {command}\n")  # Android 10's Input had no such command
        return 1
    if command in _INJECTING and not ctx.device.inject_allowed():
        return await _refuse_injection(ctx, command)
    try:
        if command == "keyevent":
            return await _keyevent(ctx, params)
        if command == "keycombination":
            return await _keycombination(ctx, [p for p in params if not p.startswith("-")])
        if command == "text":
            return await _text(ctx, params)
        return await asyncio.to_thread(_gesture, ctx, command, params)  # hit-tests: a layout, off the loop
    except InputUsageError as exc:
        await ctx.err(f"Error: {exc}\n")
        return 1


COMMANDS: dict[str, Command] = {"input": input_}
