"""``dumpsys``: window and activity (``dumpsys_wm``), display, SurfaceFlinger, battery, power,
package and input_method, answered from the ``SimPhone`` and the device's profile.

Realistic profiles print what Android 14 prints where a driver reads it: ``dumpsys package`` as
PackageManagerService's dumpPackage (``versionCode=... minSdk=... targetSdk=...``, ``versionName=``,
``flags=[ ... ]``, the install times, ``signatures=PackageSignatures{...}``); ``dumpsys
input_method`` with ``mInputShown=`` (ImeVisibilityStateComputer.dump on Android 14, the
``mShowRequested=... mInputShown=`` line before); ``dumpsys SurfaceFlinger --display-id`` with
every display of a foldable.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from datetime import timedelta

from ufo_mobile.sim.android.commands.dumpsys_wm import activities_dump, hex_id, top_dump, window_dump
from ufo_mobile.sim.android.devstate import DISPLAY_ID, SECOND_DISPLAY_ID, DeviceState
from ufo_mobile.sim.android.intents import short_activity
from ufo_mobile.sim.android.packages import Package
from ufo_mobile.sim.android.shio import Command, Ctx


def _display_dump(device: DeviceState) -> str:
    width, height = device.phone.screen_size()
    density = device.density()
    frame = f"Rect(0, 0 - {width}, {height})"
    return (
        "DISPLAY MANAGER (dumpsys display)\n  mOnlyCode=false\n  mSafeMode=false\n"
        "  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, displayId=0, "
        f"uniqueId='local:{DISPLAY_ID}', physicalPort=0, orientation=0, logicalFrame={frame}, "
        f"physicalFrame={frame}, deviceWidth={width}, deviceHeight={height}}}]\n\n"
        "Display Devices: size=1\n"
        f"  DisplayDeviceInfo{{\"Built-in Screen\": uniqueId=\"local:{DISPLAY_ID}\", {width} x {height}, "
        f"modeId 1, renderFrameRate 60.0, density {density}, {density}.0 x {density}.0 dpi, state ON}}\n\n"
        "Logical Displays: size=1\n  Display 0:\n    mDisplayId=0\n"
        f"    mBaseDisplayInfo=DisplayInfo{{\"Built-in Screen\", displayId 0, real {width} x {height}, "
        f"rotation 0, density {density}, state ON}}\n    mCurrentOrientation=0\n"
    )


def _surface_flinger(device: DeviceState, rest: list[str]) -> str:
    if "--display-id" not in rest:
        return f"Display {DISPLAY_ID} (HWC display 0)\n  powerMode=On\n"
    text = f"Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=UFO displayName=\"UFO Sim Phone\"\n"
    if SECOND_DISPLAY_ID in device.display_ids():
        text += f"Display {SECOND_DISPLAY_ID} (HWC display 1): port=1 pnpId=UFO displayName=\"UFO Sim Phone Cover\"\n"
    return text


def _battery_dump(device: DeviceState) -> str:
    level = device.phone.battery
    return ("Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Wireless powered: false\n"
            "  Dock powered: false\n  Max charging current: 500000\n  Max charging voltage: 5000000\n"
            f"  Charge counter: {level * 40000}\n  status: 2\n  health: 2\n  present: true\n  level: {level}\n"
            "  scale: 100\n  voltage: 4200\n  temperature: 250\n  technology: Li-ion\n")


def _package_dump(device: DeviceState, name: str) -> str:
    package = device.packages.get(name)
    if package is None:
        return f"Unable to find package: {name}\n"
    if device.packages.realistic:
        return _package_dump_android14(device, package)
    return (f"Packages:\n  Package [{name}] ({hex_id(name)}):\n    userId=10123\n    pkg=Package{{{hex_id(name)} "
            f"{name}}}\n    versionCode=1 minSdk=26 targetSdk=34\n    versionName=1.0\n"
            "    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n    timeStamp=2025-01-01 00:00:00\n"
            "    firstInstallTime=2025-01-01 00:00:00\n    lastUpdateTime=2025-01-01 00:00:00\n")


def _package_dump_android14(device: DeviceState, package: Package) -> str:
    name, days = package.name, zlib.crc32(package.name.encode()) % 400
    installed = device.phone.now().replace(tzinfo=None, microsecond=0) - timedelta(days=days + 30, hours=days % 24)
    updated = installed + timedelta(days=days % 30, minutes=17)
    flags = "SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA" if package.system else "HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP"
    resolver = ""
    if package.activity is not None:
        resolver = ("Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n"
                    f"        {hex_id(package.activity)} {name}/{short_activity(name, package.activity)} filter "
                    f"{hex_id('f' + name)}\n"
                    "          Action: \"android.intent.action.MAIN\"\n"
                    "          Category: \"android.intent.category.LAUNCHER\"\n\n")
    return (
        f"{resolver}Packages:\n  Package [{name}] ({hex_id(name)}):\n    appId={package.uid}\n"
        f"    pkg=Package{{{hex_id('pkg' + name)} {name}}}\n    codePath={package.code_dir}\n"
        f"    resourcePath={package.code_dir}\n    primaryCpuAbi=arm64-v8a\n    secondaryCpuAbi=null\n"
        f"    versionCode={package.version_code} minSdk=28 targetSdk={device.profile.sdk}\n"
        f"    minExtensionVersions=[]\n    versionName={package.version_name}\n    usesNonSdkApi=false\n"
        f"    splits=[base]\n    apkSigningVersion=3\n    flags=[ {flags} ]\n"
        f"    dataDir=/data/user/0/{name}\n    timeStamp={installed:%Y-%m-%d %H:%M:%S}\n"
        f"    lastUpdateTime={updated:%Y-%m-%d %H:%M:%S}\n"
        f"    installerPackageName={'null' if package.system else 'com.android.vending'}\n"
        f"    signatures=PackageSignatures{{{hex_id('s' + name)} version:3, signatures:[{hex_id('k' + name)}], "
        "past signatures:[]}\n"
        "    User 0: ceDataInode=0 installed=true hidden=false suspended=false distractionFlags=0 stopped=false "
        "notLaunched=false enabled=0 instant=false virtual=false\n"
        f"      firstInstallTime={installed:%Y-%m-%d %H:%M:%S}\n"
    )


def _input_method_dump(device: DeviceState) -> str:
    shown = "true" if device.phone.focused_field() else "false"
    if not device.profile.soft_keyboard:
        return (f"  mCurMethodId={device.current_ime()}\n  mCurFocusedWindowSoftInputMode=0\n"
                f"  mInputShown={shown}\n")
    shown = "true" if device.phone.keyboard_shown() else "false"
    ime = device.current_ime()
    package = ime.partition("/")[0]
    current = device.phone.current_app()
    if device.profile.sdk >= 34:  # ImeVisibilityStateComputer.dump
        visibility = (f" mRequestedShowExplicitly=false mShowForced=false\n  mImeHiddenByDisplayPolicy=false\n"
                      f"  mInputShown={shown}\n")
    else:  # InputMethodManagerService.dumpAsStringNoCheck before Android 14
        visibility = f"  mShowRequested={shown} mShowExplicitlyRequested=false mShowForced=false mInputShown={shown}\n"
    methods = "".join(f"  InputMethod #{index}:\n    mId={item} mSettingsActivityName=null mIsVrOnly=false "
                      "mSupportsSwitchingToNextInputMethod=false\n" for index, item in enumerate(device.known_imes()))
    return (
        "Current Input Method Manager state:\n  Input Methods: mMethodMapUpdateCount=3 "
        f"mBindInstantServiceAllowed=false\n{methods}"
        f"  mCurMethodId={ime}\n  mCurSeq=12 mCurClient=ClientState{{{hex_id('client')} mUid=10123 mPid=4321 "
        "mSelfReportedDisplayId=0}\n"
        f"  mCurFocusedWindow=Window{{{hex_id(current.activity)} u0 {current.package}/{current.activity}}} "
        "softInputMode=STATE_UNSPECIFIED|ADJUST_RESIZE|IS_FORWARD_NAVIGATION\n"
        f"  mCurId={ime} mHaveConnection=true mBoundToMethod=true mVisibleBound=true\n"
        f"  mCurIntent=Intent {{ act=android.view.InputMethod cmp={package}/{ime.partition('/')[2]} }}\n"
        f"  mInFullscreenMode=false\n  mSystemReady=true mInteractive=true\n{visibility}"
    )


def _dumpsys_text(device: DeviceState, args: list[str]) -> str | None:
    service, rest = args[0], args[1:]
    texts: dict[str, Callable[[], str]] = {
        "window": lambda: window_dump(device),
        "activity": lambda: top_dump(device) if rest[:1] == ["top"] else activities_dump(device),
        "display": lambda: _display_dump(device),
        "SurfaceFlinger": lambda: _surface_flinger(device, rest),
        "battery": lambda: _battery_dump(device),
        "power": lambda: ("POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n  mHoldingDisplaySuspendBlocker=true\n"
                          "  mHoldingWakeLockSuspendBlocker=false\nDisplay Power: state=ON\n"),
        "input_method": lambda: _input_method_dump(device),
    }
    if service == "package":
        return _package_dump(device, rest[-1]) if rest else None
    text = texts.get(service)
    return None if text is None else text()


async def dumpsys(ctx: Ctx, args: list[str]) -> int:
    if not args or args[0] == "-l":
        names = ("activity", "battery", "display", "input_method", "package", "power", "SurfaceFlinger", "window")
        await ctx.out("Currently running services:\n" + "".join(f"  {name}\n" for name in names))
        return 0
    text = _dumpsys_text(ctx.device, args)
    if text is None:
        await ctx.err(f"Can't find service: {args[0]}\n")
        return 0
    await ctx.out(text)
    return 0


COMMANDS: dict[str, Command] = {"dumpsys": dumpsys}
