"""Activity commands: ``am``, ``monkey``, ``cmd`` (``pm`` lives in ``devcmds_pm``), ``ime``, ``settings``.

``am broadcast`` implements the ADB Keyboard IME (``com.android.adbkeyboard/.AdbIME``) where the device
profile installs it: ``ADB_INPUT_TEXT`` (``--es msg``), ``ADB_INPUT_B64`` (base64 of UTF-8), ``ADB_INPUT_CHARS``
(``--eia chars``), ``ADB_INPUT_CODE`` / ``ADB_EDITOR_CODE`` (``--ei code``) and ``ADB_CLEAR_TEXT``. As on
a phone, its receiver only listens while it is the selected input method (``ime set``).
"""

from __future__ import annotations

import base64
import binascii

from ufo_mobile.sim import devcmds_pm
from ufo_mobile.sim.devcmds_input import input_, press_keycode, type_text
from ufo_mobile.sim.devstate import ADB_IME, DeviceState
from ufo_mobile.sim.intents import (
    FLAG_RECEIVER_FROM_SHELL,
    Intent,
    IntentError,
    parse_intent,
    short_activity,
    split_component,
)
from ufo_mobile.sim.intents import without_user as _without_user
from ufo_mobile.sim.shio import Command, Ctx

__all__ = ["COMMANDS", "Intent", "IntentError", "parse_intent", "short_activity", "split_component"]


# -- am ------------------------------------------------------------------------------------------


async def _am_start(ctx: Ctx, args: list[str]) -> int:
    intent = parse_intent(args)
    await ctx.out(f"Starting: {intent.describe()}\n")
    phone, packages = ctx.device.phone, ctx.device.packages
    if intent.component:
        package, activity = split_component(intent.component)
        full = package + activity if activity.startswith(".") else activity
        if not packages.ensure_on_phone(package) or phone.app(package).screen_for_activity(activity) is None:
            await ctx.err(f"Error type 3\nError: Activity class {{{package}/{full}}} does not exist.\n")
            return 255
        phone.start_app(package, activity)
    elif intent.package and packages.ensure_on_phone(intent.package):
        phone.start_app(intent.package)
    else:
        await ctx.err(f"Error: Activity not started, unable to resolve {intent.describe()}\n")
        return 255
    if intent.wait:
        current = phone.current_app()
        await ctx.out(f"Status: ok\nLaunchState: WARM\nActivity: {current.package}/"
                      f"{short_activity(current.package, current.activity)}\nTotalTime: 120\nWaitTime: 125\nComplete\n")
    return 0


def _adb_keyboard(device: DeviceState, intent: Intent) -> None:
    """The ADB Keyboard's broadcast receiver (only registered while it is the current IME). The
    released APK registers it when its input view is created (senzhk/ADBKeyBoard, before commit
    01a2fde), so the first ``adb_keyboard_late`` broadcasts after ``ime set`` reach nobody."""
    action = intent.action or ""
    if device.current_ime() != ADB_IME or not action.startswith(("ADB_INPUT_", "ADB_CLEAR_TEXT", "ADB_EDITOR_")):
        return
    with device.lock:
        if device.adb_keyboard_deaf > 0:
            device.adb_keyboard_deaf -= 1
            return
    msg = intent.extras.get("msg")
    if action == "ADB_INPUT_TEXT" and msg is not None:
        type_text(device, msg)
    elif action == "ADB_INPUT_B64" and msg is not None:
        try:
            type_text(device, base64.b64decode(msg, validate=False).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):
            return
    elif action == "ADB_INPUT_CHARS" and "chars" in intent.extras:
        codes = [int(code) for code in intent.extras["chars"].split(",") if code.strip().isdigit()]
        type_text(device, "".join(chr(code) for code in codes if code < 0x110000))
    elif action in ("ADB_INPUT_CODE", "ADB_EDITOR_CODE") and intent.extras.get("code", "").isdigit():
        press_keycode(device, 66 if action == "ADB_EDITOR_CODE" else int(intent.extras["code"]))
    elif action == "ADB_CLEAR_TEXT":
        type_text(device, "", clear=True)


async def _am_broadcast(ctx: Ctx, args: list[str]) -> int:
    """``am broadcast``: ``result=0`` whether or not a receiver got it (IntentReceiver prints the
    result code, and nobody sets one)."""
    intent = parse_intent(args)
    if ctx.device.profile.broadcast_flags:
        intent.flags |= FLAG_RECEIVER_FROM_SHELL
    await ctx.out(f"Broadcasting: {intent.describe()}\n")
    _adb_keyboard(ctx.device, intent)
    await ctx.out("Broadcast completed: result=0\n")
    return 0


async def am(ctx: Ctx, args: list[str]) -> int:
    if not args:
        return await ctx.fail("usage: am [start|broadcast|force-stop|kill] ...")
    sub, rest = args[0], args[1:]
    try:
        if sub in ("start", "start-activity"):
            return await _am_start(ctx, rest)
        if sub == "broadcast":
            return await _am_broadcast(ctx, rest)
    except IntentError as exc:
        await ctx.err(f"Exception occurred while executing '{sub}':\njava.lang.IllegalArgumentException: {exc}\n")
        return 255
    if sub in ("force-stop", "kill", "stop-app"):
        packages = [arg for arg in rest if not arg.startswith("-") and not arg.isdigit()]
        installed = {app.package for app in ctx.device.phone.installed_apps()}
        for package in packages:
            if package in installed:
                ctx.device.phone.stop_app(package)
        return 0
    await ctx.err(f"Unknown command: {sub}\n")
    return 255


async def monkey(ctx: Ctx, args: list[str]) -> int:
    packages = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "-p"]
    installed = ctx.device.packages.names()
    targets = [package for package in packages if package in installed]
    await ctx.out("".join(f"  bash arg: {arg}\n" for arg in args))
    if not targets or not ctx.device.packages.ensure_on_phone(targets[0]):
        await ctx.err("** No activities found to run, monkey aborted.\n")
        return 252
    ctx.device.phone.start_app(targets[0])
    await ctx.out("Events injected: 1\n"
                  "## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
    return 0


# -- cmd ---------------------------------------------------------------------------------------------


async def cmd(ctx: Ctx, args: list[str]) -> int:
    if not args:
        return await ctx.fail("usage: cmd SERVICE [args...]")
    service = {"package": devcmds_pm.pm, "input": input_, "activity": am, "input_method": ime, "settings": settings}
    func = service.get(args[0])
    if func is None:
        await ctx.err(f"cmd: Can't find service: {args[0]}\n")
        return 20
    return await func(ctx, args[1:])


# -- ime / settings --------------------------------------------------------------------------------------


async def ime(ctx: Ctx, args: list[str]) -> int:
    device = ctx.device
    sub, rest = (args[0], args[1:]) if args else ("", [])
    if sub == "list":
        listed = list(device.known_imes()) if "-a" in rest else device.enabled_imes()
        if "-s" in rest:
            await ctx.out("".join(f"{item}\n" for item in listed))
        else:
            await ctx.out("".join(f"{item}:\n  mId={item} mSettingsActivityName=null\n" for item in listed))
        return 0
    ids = [arg for arg in rest if not arg.startswith("-")]
    target = ids[-1] if ids else ""
    if sub in ("enable", "disable", "set") and target not in device.known_imes():
        await ctx.err(f"Unknown input method {target} cannot be {'selected' if sub == 'set' else sub + 'd'} "
                      "for user #0\n")
        return 255
    enabled = device.enabled_imes()
    if sub == "enable":
        already = target in enabled
        device.set_enabled_imes(enabled if already else [*enabled, target])
        await ctx.out(f"Input method {target}: {'already enabled' if already else 'now enabled'} for user #0\n")
    elif sub == "disable":
        device.set_enabled_imes([item for item in enabled if item != target])
        await ctx.out(f"Input method {target}: now disabled for user #0\n")
    elif sub == "set":
        if target not in enabled:
            await ctx.err(f"Input method {target} is not enabled for user #0\n")
            return 255
        device.select_ime(target)
        await ctx.out(f"Input method {target} selected for user #0\n")
    elif sub == "reset":
        default = device.profile.ime
        device.set_enabled_imes([default])
        device.select_ime(default)
        await ctx.out(f"Reset current and enabled IMEs for user #0\n  Selected: {default}\n")
    else:
        return await ctx.fail("usage: ime [list|enable|disable|set|reset] ...")
    return 0


async def settings(ctx: Ctx, args: list[str]) -> int:
    rest = _without_user(args)
    if len(rest) < 2 or rest[1] not in ctx.device.settings:
        return await ctx.fail("usage: settings [get|put|delete|list] NAMESPACE [KEY [VALUE]]", 255)
    verb, table = rest[0], ctx.device.settings[rest[1]]
    with ctx.device.lock:
        if verb == "list":
            await ctx.out("".join(f"{key}={value}\n" for key, value in sorted(table.items())))
        elif verb == "get" and len(rest) >= 3:
            await ctx.out(table.get(rest[2], "null") + "\n")
        elif verb == "put" and len(rest) >= 4:
            if rest[1] == "secure" and rest[2] == "default_input_method" and rest[3] not in ctx.device.enabled_imes():
                return 0
            table[rest[2]] = rest[3]
            ctx.device.setting_changed(rest[1], rest[2], rest[3])
        elif verb == "delete" and len(rest) >= 3:
            await ctx.out(f"Deleted {1 if table.pop(rest[2], None) is not None else 0} rows\n")
        else:
            return await ctx.fail("usage: settings [get|put|delete|list] NAMESPACE [KEY [VALUE]]", 255)
    return 0


COMMANDS: dict[str, Command] = {"am": am, "monkey": monkey, "pm": devcmds_pm.pm, "cmd": cmd, "ime": ime,
                                "settings": settings}
