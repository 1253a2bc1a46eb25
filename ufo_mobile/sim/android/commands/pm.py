"""``pm`` and ``cmd package``: list, path, clear, resolve-activity and query-activities over the
device's ``PackageManager``, printed as Android's PackageManagerShellCommand prints them (install
and uninstall live in ``devcmds_install``).

``query-activities`` (PackageManagerShellCommand.runQueryIntentActivities) prints ``N activities
found:`` then ``  Activity #i:`` blocks: with ``--brief`` the ResolveInfo line and the short
component, without it ResolveInfo.dump (ActivityInfo, then ApplicationInfo); ``--components``
prints only the components. No output ever carries an app's label: Android keeps those in the APK.
"""

from __future__ import annotations

from ufo_mobile.sim.android.commands import install as devcmds_install
from ufo_mobile.sim.android.intents import Intent, IntentError, parse_intent, short_activity, without_user
from ufo_mobile.sim.android.packages import Package
from ufo_mobile.sim.android.shio import Command, Ctx
from ufo_mobile.sim.phone.simphone import LAUNCHER

LAUNCHER_CATEGORY = "android.intent.category.LAUNCHER"
HOME_CATEGORY = "android.intent.category.HOME"
MAIN_ACTION = "android.intent.action.MAIN"
RESOLVE_LINE = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault={default}"
_QUERY_OPTIONS = {"--brief": 0, "--components": 0, "--query-flags": 1, "--user": 1}


def _list_line(package: Package, flags: set[str]) -> str:
    line = f"package:{package.path}={package.name}" if "-f" in flags else f"package:{package.name}"
    if "--show-versioncode" in flags:
        line += f" versionCode:{package.version_code}"
    if "-U" in flags:
        line += f" uid:{package.uid}"
    if "-i" in flags:
        line += f"  installer={'null' if package.system else 'com.android.vending'}"
    return line


async def _pm_list(ctx: Ctx, args: list[str]) -> int:
    args = without_user(args)
    flags = {arg for arg in args if arg.startswith("-")}
    filters = [arg for arg in args if not arg.startswith("-")]
    manager = ctx.device.packages
    packages = manager.packages()
    if not manager.realistic:  # the kind phone has always listed them sorted
        packages.sort(key=lambda item: item.name)
    for package in packages:
        if ("-3" in flags and package.system) or ("-s" in flags and not package.system) or "-d" in flags:
            continue
        if filters and not any(text in package.name for text in filters):
            continue
        await ctx.out(_list_line(package, flags) + "\n")
    return 0


async def pm(ctx: Ctx, args: list[str]) -> int:
    sub, rest = (args[0], args[1:]) if args else ("", [])
    manager = ctx.device.packages
    if sub == "list" and rest[:1] == ["packages"]:
        return await _pm_list(ctx, rest[1:])
    if sub == "path":
        found = manager.get(rest[-1]) if rest else None
        if found is None:
            return 1
        await ctx.out(f"package:{found.path}\n")
        return 0
    if sub == "clear" and rest:
        return await _clear(ctx, rest[-1])
    if sub == "resolve-activity":
        return await _resolve_activity(ctx, rest)
    if sub == "query-activities":
        return await _query_activities(ctx, rest)
    if sub == "install":
        return await devcmds_install.install(ctx, rest)
    if sub == "uninstall":
        return await devcmds_install.uninstall(ctx, rest)
    await ctx.err(f"Unknown command: {sub}\n" if sub else "usage: pm [list|path|clear|resolve-activity] ...\n")
    return 1


async def _clear(ctx: Ctx, name: str) -> int:
    phone = ctx.device.phone
    if name not in ctx.device.packages.names():
        await ctx.out("Failed\n")
        return 1
    if name in {app.package for app in phone.installed_apps()}:
        phone.install(phone.app(name))  # a fresh install: state reset, tasks closed
    await ctx.out("Success\n")
    return 0


async def _resolve_activity(ctx: Ctx, args: list[str]) -> int:
    names = [arg for arg in args if not arg.startswith("-")]
    found = ctx.device.packages.get(names[-1]) if names else None
    if found is None or found.activity is None:
        await ctx.out("No activity found\n")
        return 0
    component = f"{found.name}/{short_activity(found.name, found.activity)}"
    await ctx.out(RESOLVE_LINE.format(default="true") + f"\n{component}\n")
    return 0


def _matches(ctx: Ctx, intent: Intent) -> list[Package]:
    """The activities an intent resolves to: launcher activities for MAIN/LAUNCHER, the home
    screen for HOME; nothing else is modelled."""
    if intent.action not in (None, MAIN_ACTION):
        return []
    launcher = LAUNCHER
    found: list[Package] = []
    for package in ctx.device.packages.packages():
        if package.activity is None or (intent.package and package.name != intent.package):
            continue
        if HOME_CATEGORY in intent.categories:
            if package.name == launcher:
                found.append(package)
        elif not intent.categories or intent.categories == [LAUNCHER_CATEGORY]:
            if package.name != launcher:
                found.append(package)
    return found


def _dump_resolve_info(package: Package, activity: str) -> str:
    """ResolveInfo.dump with ActivityInfo.dump and ApplicationInfo.dump (the fields a phone shows
    for a launcher activity), indented under an ``Activity #i:`` line."""
    data_dir = f"/data/user/0/{package.name}"
    return (f"    {RESOLVE_LINE.format(default='false')}\n    ActivityInfo:\n      name={activity}\n"
            f"      packageName={package.name}\n      enabled=true exported=true directBootAware=false\n"
            f"      taskAffinity={package.name} targetActivity=null persistableMode=PERSIST_ROOT_ONLY\n"
            "      lockTaskLaunchMode=LOCK_TASK_LAUNCH_MODE_DEFAULT\n      resizeMode=RESIZE_MODE_RESIZEABLE\n"
            f"      ApplicationInfo:\n        packageName={package.name}\n        processName={package.name}\n"
            f"        taskAffinity={package.name}\n        uid={package.uid} flags=0x38c8be44 privateFlags=0x0\n"
            f"        sourceDir={package.path}\n        dataDir={data_dir}\n"
            f"        enabled=true minSdkVersion=26 targetSdkVersion=34 versionCode={package.version_code}"
            " targetSandboxVersion=1\n")


async def _query_activities(ctx: Ctx, args: list[str]) -> int:
    try:
        intent = parse_intent(args, _QUERY_OPTIONS)
    except IntentError as exc:
        await ctx.err(f"Error: {exc}\n")
        return 255
    found = _matches(ctx, intent)
    if not found:
        await ctx.out("No activities found\n")
        return 0
    components = [f"{p.name}/{short_activity(p.name, p.activity or '')}" for p in found]
    if "--components" in args:
        await ctx.out("".join(f"{component}\n" for component in components))
        return 0
    out = [f"{len(found)} activities found:\n"]
    for index, (package, component) in enumerate(zip(found, components, strict=True)):
        out.append(f"  Activity #{index}:\n")
        if "--brief" in args:
            out.append(f"    {RESOLVE_LINE.format(default='false')}\n    {component}\n")
        else:
            out.append(_dump_resolve_info(package, package.activity or ""))
    await ctx.out("".join(out))
    return 0


COMMANDS: dict[str, Command] = {"pm": pm}
