"""System commands answered from the ``SimPhone``: ``dumpsys``, ``wm``, ``screencap``, ``uiautomator``
and ``app_process`` (which "starts" the uiautomator2 server until its stream closes)."""

from __future__ import annotations

import asyncio
import io
import zlib

from PIL import Image

from ufo_mobile.sim.devcmds_am import short_activity
from ufo_mobile.sim.devstate import DISPLAY_ID, DeviceState
from ufo_mobile.sim.shio import Command, Ctx

U2_MAIN = "com.wetest.uia2.Main"
DUMP_DEFAULT = "/sdcard/window_dump.xml"


def _hex(text: str) -> str:
    return f"{zlib.crc32(text.encode()) & 0xFFFFFFF:07x}"


def _task_id(package: str) -> int:
    return 10 + zlib.crc32(package.encode()) % 90


def pid_of(package: str) -> int:
    return 2000 + zlib.crc32(package.encode()) % 20000


def _focus(device: DeviceState) -> tuple[str, str, str]:
    """(package, full activity, short activity) of the focused app."""
    current = device.phone.current_app()
    return current.package, current.activity, short_activity(current.package, current.activity)


def _window_dump(device: DeviceState) -> str:
    package, activity, short = _focus(device)
    width, height = device.phone.screen_size()
    window = f"Window{{{_hex(activity)} u0 {package}/{activity}}}"
    record = f"ActivityRecord{{{_hex(short)} u0 {package}/{short} t{_task_id(package)}}}"
    return (
        "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
        f"  Window #0 Window{{{_hex('nav')} u0 NavigationBar0}}:\n"
        "    mDisplayId=0 rootTaskId=1 package=com.android.systemui\n"
        f"  Window #1 Window{{{_hex('status')} u0 StatusBar}}:\n"
        "    mDisplayId=0 rootTaskId=1 package=com.android.systemui\n"
        f"  Window #2 {window}:\n    mDisplayId=0 rootTaskId={_task_id(package)} package={package}\n"
        f"    Requested w={width} h={height} mLayoutSeq=42\n    mHasSurface=true isReadyForDisplay()=true\n\n"
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n"
        f"  Display: mDisplayId=0 rootTasks=3\n    init={width}x{height} {device.density()}dpi "
        f"cur={width}x{height} app={width}x{height} rng={width}x{width}-{height}x{height}\n"
        f"  mGlobalConfiguration={{1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h914dp {device.density()}dpi port}}\n"
        "  mHasPermanentDpad=false\n  mTopFocusedDisplayId=0\n"
        f"  mCurrentFocus={window}\n  mFocusedApp={record}\n"
    )


def _activities_dump(device: DeviceState) -> str:
    package, _, short = _focus(device)
    record = f"ActivityRecord{{{_hex(short)} u0 {package}/{short} t{_task_id(package)}}}"
    return (
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
        "Display #0 (activities from top to bottom):\n"
        f"  * Task{{{_hex(package)} #{_task_id(package)} type=standard A=10123:{package} U=0 visible=true "
        "mode=fullscreen translucent=false sz=1}\n"
        f"    topResumedActivity={record}\n"
        f"    * Hist  #0: {record}\n      packageName={package} processName={package}\n"
        f"      app=ProcessRecord{{{_hex('p' + package)} {pid_of(package)}:{package}/u0a123}}\n\n"
        f"  ResumedActivity: {record}\n  mResumedActivity: {record}\n  mFocusedApp={record}\n"
    )


def _top_dump(device: DeviceState) -> str:
    package, _, short = _focus(device)
    return (f"TASK 10123:{package} id={_task_id(package)} userId=0\n"
            f"  ACTIVITY {package}/{short} {_hex(short)} pid={pid_of(package)}\n"
            "    Local Activity {0} State:\n      mResumed=true mStopped=false mFinished=false\n")


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


def _battery_dump(device: DeviceState) -> str:
    level = device.phone.battery
    return ("Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Wireless powered: false\n"
            "  Dock powered: false\n  Max charging current: 500000\n  Max charging voltage: 5000000\n"
            f"  Charge counter: {level * 40000}\n  status: 2\n  health: 2\n  present: true\n  level: {level}\n"
            "  scale: 100\n  voltage: 4200\n  temperature: 250\n  technology: Li-ion\n")


def _package_dump(device: DeviceState, package: str) -> str:
    installed = {app.package for app in device.phone.installed_apps()}
    if package not in installed:
        return f"Unable to find package: {package}\n"
    return (f"Packages:\n  Package [{package}] ({_hex(package)}):\n    userId=10123\n    pkg=Package{{{_hex(package)} "
            f"{package}}}\n    versionCode=1 minSdk=26 targetSdk=34\n    versionName=1.0\n"
            "    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n    timeStamp=2025-01-01 00:00:00\n"
            "    firstInstallTime=2025-01-01 00:00:00\n    lastUpdateTime=2025-01-01 00:00:00\n")


def _dumpsys_text(device: DeviceState, args: list[str]) -> str | None:
    service, rest = args[0], args[1:]
    if service == "window":
        return _window_dump(device)
    if service == "activity":
        return _top_dump(device) if rest[:1] == ["top"] else _activities_dump(device)
    if service == "display":
        return _display_dump(device)
    if service == "SurfaceFlinger":
        return (f"Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=UFO displayName=\"UFO Sim Phone\"\n"
                if "--display-id" in rest else f"Display {DISPLAY_ID} (HWC display 0)\n  powerMode=On\n")
    if service == "battery":
        return _battery_dump(device)
    if service == "power":
        return ("POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n  mHoldingDisplaySuspendBlocker=true\n"
                "  mHoldingWakeLockSuspendBlocker=false\nDisplay Power: state=ON\n")
    if service == "package" and rest:
        return _package_dump(device, rest[-1])
    if service == "input_method":
        return (f"  mCurMethodId={device.current_ime()}\n  mCurFocusedWindowSoftInputMode=0\n"
                f"  mInputShown={'true' if device.phone.focused_field() else 'false'}\n")
    return None


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


async def wm(ctx: Ctx, args: list[str]) -> int:
    width, height = ctx.device.phone.screen_size()
    if args == ["size"]:
        await ctx.out(f"Physical size: {width}x{height}\n")
    elif args == ["density"]:
        await ctx.out(f"Physical density: {ctx.device.density()}\n")
    elif args[:1] in (["size"], ["density"]):
        return await ctx.fail(f"Error: changing the display {args[0]} is not supported by this device", 255)
    else:
        return await ctx.fail("usage: wm [size|density]", 255)
    return 0


def _raw_frame(png: bytes) -> bytes:
    """screencap's raw format: width, height, format (1 = RGBA_8888), dataspace, then the pixels."""
    with Image.open(io.BytesIO(png)) as image:
        rgba = image.convert("RGBA")
        header = b"".join(value.to_bytes(4, "little") for value in (rgba.width, rgba.height, 1, 0))
        return header + rgba.tobytes()


async def screencap(ctx: Ctx, args: list[str]) -> int:
    rest, png_flag = list(args), False
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "-d" and rest:
            display = rest.pop(0)
            if display not in ("0", DISPLAY_ID):
                return await ctx.fail(f"Display Id '{display}' is not valid.")
        elif option in ("-p", "-hp"):
            png_flag = True
        elif option not in ("-a", "-j"):
            return await ctx.fail(f"unknown option {option}")
    png = await asyncio.to_thread(ctx.device.phone.screenshot_png)
    if rest:
        as_png = png_flag or rest[0].endswith(".png")
        ctx.device.fs.write(rest[0], png if as_png else await asyncio.to_thread(_raw_frame, png))
        return 0
    await ctx.out(png if png_flag else await asyncio.to_thread(_raw_frame, png))
    return 0


async def uiautomator(ctx: Ctx, args: list[str]) -> int:
    if not args or args[0] != "dump":
        await ctx.err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                      "help: displays help message\n\ndump: creates an XML dump of current UI hierarchy\n")
        return 1
    paths = [arg for arg in args[1:] if not arg.startswith("--")]
    path = paths[0] if paths else DUMP_DEFAULT
    xml = ctx.device.dump_xml()
    if path == "/dev/tty":
        await ctx.out(xml)
    elif path != "/dev/null":
        ctx.device.fs.write(path, xml.encode())
    await ctx.out(f"UI hierchary dumped to: {path}\n")
    return 0


def _app_process_target(args: list[str]) -> tuple[str, list[str]]:
    rest = list(args)
    while rest and rest[0].startswith("-"):  # VM options
        rest.pop(0)
    rest = rest[1:]  # the command directory
    return (rest[0], rest[1:]) if rest else ("", [])


async def app_process(ctx: Ctx, args: list[str]) -> int:
    main, options = _app_process_target(args)
    classpath = ctx.env.get("CLASSPATH", "")
    if main != U2_MAIN or not classpath or not ctx.device.fs.exists(classpath.split(":")[0]):
        await ctx.err(f"Exception in thread \"main\" java.lang.ClassNotFoundException: {main}\n")
        return 1
    if ctx.device.u2_blocked:
        await ctx.err("java.lang.RuntimeException: Error while connecting UiAutomation\n")
        return 1
    port = 9008
    if "-p" in options[:-1] and options[options.index("-p") + 1].isdigit():
        port = int(options[options.index("-p") + 1])
    if not ctx.device.u2_start(port):
        await ctx.err("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
                      f"IAccessibilityServiceClient$Stub$Proxy@{_hex('u2')}already registered!\n")
        return 1
    try:
        await ctx.out("[server] INFO: [UiAutomator2Server] Starting Server\n")
        await asyncio.sleep(ctx.device.limits.server_timeout)  # until the shell stream closes
    finally:
        ctx.device.u2_stop(port)
    return 0


COMMANDS: dict[str, Command] = {"dumpsys": dumpsys, "wm": wm, "screencap": screencap, "uiautomator": uiautomator,
                                "app_process": app_process}
