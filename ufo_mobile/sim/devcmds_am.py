"""Package and activity commands: ``am``, ``monkey``, ``pm``, ``cmd``, ``ime`` and ``settings``.

``am broadcast`` implements the ADB Keyboard IME (``com.android.adbkeyboard/.AdbIME``) as if it were
installed: ``ADB_INPUT_TEXT`` (``--es msg``), ``ADB_INPUT_B64`` (base64 of UTF-8), ``ADB_INPUT_CHARS``
(``--eia chars``), ``ADB_INPUT_CODE`` / ``ADB_EDITOR_CODE`` (``--ei code``) and ``ADB_CLEAR_TEXT``. As on
a phone, its receiver only listens while it is the selected input method (``ime set``).
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass, field

from ufo_mobile.sim.devcmds_input import input_, press_keycode, type_text
from ufo_mobile.sim.devstate import ADB_IME, KNOWN_IMES, DeviceState
from ufo_mobile.sim.shio import Command, Ctx

_SYSTEM_PREFIXES = ("com.android.", "com.google.android.", "android")
_EXTRA_ARITY = {"--es": 2, "--esn": 1, "--ei": 2, "--el": 2, "--ef": 2, "--ez": 2, "--eu": 2, "--ecn": 2,
                "--eia": 2, "--ela": 2, "--efa": 2, "--esa": 2, "--user": 1, "-f": 1, "-t": 1, "-d": 1,
                "-a": 1, "-c": 1, "-n": 1, "-p": 1, "--receiver-permission": 1, "-S": 0, "-W": 0, "-R": 1,
                "--activity-clear-task": 0, "--activity-new-task": 0, "--activity-clear-top": 0,
                "--activity-single-top": 0, "--windowingMode": 1, "--display": 1, "-e": 2,
                "--include-stopped-packages": 0}


class IntentError(Exception):
    pass


@dataclass
class Intent:
    action: str | None = None
    categories: list[str] = field(default_factory=list)
    component: str | None = None
    package: str | None = None
    data: str | None = None
    extras: dict[str, str] = field(default_factory=dict)
    wait: bool = False

    def describe(self) -> str:
        parts = [f"act={self.action}"] if self.action else []
        if self.categories:
            parts.append("cat=[" + ",".join(self.categories) + "]")
        if self.data:
            parts.append(f"dat={self.data}")
        if self.package:
            parts.append(f"pkg={self.package}")
        if self.component:
            parts.append(f"cmp={self.component}")
        if self.extras:
            parts.append("(has extras)")
        return "Intent { " + " ".join(parts) + " }"


def parse_intent(args: list[str]) -> Intent:
    intent = Intent()
    rest = list(args)
    while rest:
        option = rest.pop(0)
        if not option.startswith("-"):
            if "/" in option:
                intent.component = option
            else:
                intent.package = option
            continue
        arity = _EXTRA_ARITY.get(option)
        if arity is None:
            raise IntentError(f"Unknown option: {option}")
        if len(rest) < arity:
            raise IntentError(f"Argument expected after \"{option}\"")
        values, rest = rest[:arity], rest[arity:]
        _apply(intent, option, values)
    return intent


def _apply(intent: Intent, option: str, values: list[str]) -> None:
    if option == "-a":
        intent.action = values[0]
    elif option == "-c":
        intent.categories.append(values[0])
    elif option == "-n":
        intent.component = values[0]
    elif option == "-p":
        intent.package = values[0]
    elif option == "-d":
        intent.data = values[0]
    elif option == "-W":
        intent.wait = True
    elif len(values) == 2:
        intent.extras[values[0]] = values[1]


def _without_user(args: list[str]) -> list[str]:
    """``args`` without a ``--user N`` option."""
    rest = list(args)
    if "--user" in rest[:-1]:
        at = rest.index("--user")
        del rest[at:at + 2]
    return rest


def split_component(component: str) -> tuple[str, str]:
    package, _, activity = component.partition("/")
    return package, activity


def short_activity(package: str, activity: str) -> str:
    return activity[len(package):] if activity.startswith(package + ".") else activity


# -- am ------------------------------------------------------------------------------------------


async def _am_start(ctx: Ctx, args: list[str]) -> int:
    intent = parse_intent(args)
    await ctx.out(f"Starting: {intent.describe()}\n")
    phone = ctx.device.phone
    installed = {app.package for app in phone.installed_apps()}
    if intent.component:
        package, activity = split_component(intent.component)
        full = package + activity if activity.startswith(".") else activity
        if package not in installed or phone.app(package).screen_for_activity(activity) is None:
            await ctx.err(f"Error type 3\nError: Activity class {{{package}/{full}}} does not exist.\n")
            return 255
        phone.start_app(package, activity)
    elif intent.package and intent.package in installed:
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
    """The ADB Keyboard's broadcast receiver (only registered while it is the current IME)."""
    action = intent.action or ""
    if device.current_ime() != ADB_IME or not action.startswith(("ADB_INPUT_", "ADB_CLEAR_TEXT", "ADB_EDITOR_")):
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
    intent = parse_intent(args)
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
    installed = {app.package for app in ctx.device.phone.installed_apps()}
    targets = [package for package in packages if package in installed]
    await ctx.out("".join(f"  bash arg: {arg}\n" for arg in args))
    if not targets:
        await ctx.err("** No activities found to run, monkey aborted.\n")
        return 252
    ctx.device.phone.start_app(targets[0])
    await ctx.out("Events injected: 1\n"
                  "## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n")
    return 0


# -- pm / cmd package ----------------------------------------------------------------------------------


def _apk_path(package: str) -> str:
    if package.startswith(_SYSTEM_PREFIXES):
        name = package.rsplit(".", 1)[-1].capitalize()
        return f"/system/priv-app/{name}/{name}.apk"
    return f"/data/app/~~ufo{zlib.crc32(package.encode()) % 10**6:06d}==/{package}-1/base.apk"


async def _pm_list(ctx: Ctx, args: list[str]) -> int:
    args = _without_user(args)
    flags = {arg for arg in args if arg.startswith("-")}
    filters = [arg for arg in args if not arg.startswith("-")]
    for app in sorted(ctx.device.phone.installed_apps(), key=lambda item: item.package):
        system = app.package.startswith(_SYSTEM_PREFIXES)
        if ("-3" in flags and system) or ("-s" in flags and not system):
            continue
        if filters and not any(text in app.package for text in filters):
            continue
        prefix = f"{_apk_path(app.package)}=" if "-f" in flags else ""
        await ctx.out(f"package:{prefix}{app.package}\n")
    return 0


async def pm(ctx: Ctx, args: list[str]) -> int:
    sub, rest = (args[0], args[1:]) if args else ("", [])
    installed = {app.package for app in ctx.device.phone.installed_apps()}
    if sub == "list" and rest[:1] == ["packages"]:
        return await _pm_list(ctx, rest[1:])
    if sub == "path":
        if not rest or rest[-1] not in installed:
            return 1
        await ctx.out(f"package:{_apk_path(rest[-1])}\n")
        return 0
    if sub == "clear" and rest:
        if rest[-1] not in installed:
            await ctx.out("Failed\n")
            return 1
        phone = ctx.device.phone
        phone.install(phone.app(rest[-1]))
        await ctx.out("Success\n")
        return 0
    if sub == "resolve-activity":
        return await _resolve_activity(ctx, rest)
    await ctx.err(f"Unknown command: {sub}\n" if sub else "usage: pm [list|path|clear|resolve-activity] ...\n")
    return 1


async def _resolve_activity(ctx: Ctx, args: list[str]) -> int:
    names = [arg for arg in args if not arg.startswith("-")]
    installed = {app.package for app in ctx.device.phone.installed_apps()}
    if not names or names[-1] not in installed:
        await ctx.out("No activity found\n")
        return 0
    app = ctx.device.phone.app(names[-1])
    activity = short_activity(app.package, app.activity_of(app.start))
    await ctx.out("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
                  f"{app.package}/{activity}\n")
    return 0


async def cmd(ctx: Ctx, args: list[str]) -> int:
    if not args:
        return await ctx.fail("usage: cmd SERVICE [args...]")
    service = {"package": pm, "input": input_, "activity": am, "input_method": ime, "settings": settings}
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
        listed = list(KNOWN_IMES) if "-a" in rest else device.enabled_imes()
        if "-s" in rest:
            await ctx.out("".join(f"{item}\n" for item in listed))
        else:
            await ctx.out("".join(f"{item}:\n  mId={item} mSettingsActivityName=null\n" for item in listed))
        return 0
    ids = [arg for arg in rest if not arg.startswith("-")]
    target = ids[-1] if ids else ""
    if sub in ("enable", "disable", "set") and target not in KNOWN_IMES:
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
        device.settings["secure"]["default_input_method"] = target
        await ctx.out(f"Input method {target} selected for user #0\n")
    elif sub == "reset":
        device.set_enabled_imes([KNOWN_IMES[0]])
        device.settings["secure"]["default_input_method"] = KNOWN_IMES[0]
        await ctx.out(f"Reset current and enabled IMEs for user #0\n  Selected: {KNOWN_IMES[0]}\n")
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
        elif verb == "delete" and len(rest) >= 3:
            await ctx.out(f"Deleted {1 if table.pop(rest[2], None) is not None else 0} rows\n")
        else:
            return await ctx.fail("usage: settings [get|put|delete|list] NAMESPACE [KEY [VALUE]]", 255)
    return 0


COMMANDS: dict[str, Command] = {"am": am, "monkey": monkey, "pm": pm, "cmd": cmd, "ime": ime, "settings": settings}
