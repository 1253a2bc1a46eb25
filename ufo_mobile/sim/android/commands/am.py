"""Activity commands: ``am``, ``monkey``, ``cmd`` (``pm`` lives in ``devcmds_pm``), ``ime``, ``settings``.

``am broadcast`` reaches the input methods' receivers (``devcmds_ime``: the ADB Keyboard where the
device profile installs it, uiautomator2's AdbKeyboard once its APK is installed). As on a phone, a
receiver only listens while its input method is the selected one (``ime set``).
"""

from __future__ import annotations

from ufo_mobile.sim.android.commands import ime as devcmds_ime
from ufo_mobile.sim.android.commands import pm as devcmds_pm
from ufo_mobile.sim.android.commands.input import input_
from ufo_mobile.sim.android.intents import (
    FLAG_RECEIVER_FROM_SHELL,
    Intent,
    IntentError,
    parse_intent,
    short_activity,
    split_component,
)
from ufo_mobile.sim.android.intents import without_user as _without_user
from ufo_mobile.sim.android.shio import Command, Ctx

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


async def _am_broadcast(ctx: Ctx, args: list[str]) -> int:
    """``am broadcast``: IntentReceiver prints the result code and data the receivers left
    (``devcmds_ime``): ``result=0`` when nobody got it, or nobody set one."""
    intent = parse_intent(args)
    if ctx.device.profile.broadcast_flags:
        intent.flags |= FLAG_RECEIVER_FROM_SHELL
    await ctx.out(f"Broadcasting: {intent.describe()}\n")
    code, data = devcmds_ime.deliver(ctx.device, intent)
    await ctx.out(f"Broadcast completed: result={code}" + (f', data="{data}"' if data is not None else "") + "\n")
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
