"""System commands answered from the ``SimPhone``: ``wm``, ``screencap``, ``uiautomator`` and
``app_process`` (which "starts" the uiautomator2 server until its stream closes or it is killed).

Realistic profiles (``RealismProfile``):

* ``uiautomator dump`` follows AOSP's DumpCommand (frameworks/testing, uiautomator cmds): it
  connects a UiAutomation (failing with IllegalStateException "...already registered!" while the
  uiautomator2 server holds the only one: openatx/uiautomator2 #298, #1013), waits for idle
  (``ERROR: could not get idle state.`` on an ``animated`` screen) and takes the active window's
  root (``ERROR: null root node returned by UiTestAutomationBridge.`` right after the activity
  changed); both errors go to stderr, exit 0, and no file is written.
* ``screencap`` (frameworks/base cmds/screencap/screencap.cpp) warns on stderr when the phone has
  several displays and no ``-d`` was given, and a FLAG_SECURE screen (``secure``) comes out black.
"""

from __future__ import annotations

import asyncio
import functools
import io

from PIL import Image

from ufo_mobile.sim.android.commands.dumpsys_wm import hex_id
from ufo_mobile.sim.android.devstate import SECOND_DISPLAY_ID, DeviceState
from ufo_mobile.sim.android.shio import Command, Ctx

U2_MAIN = "com.wetest.uia2.Main"
DUMP_DEFAULT = "/sdcard/window_dump.xml"
KILLED = 143  # 128 + SIGTERM, as the shell reports a process pkill stopped
MULTI_DISPLAY_WARNING = (
    "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display "
    "found, however this default is not guaranteed to be consistent across captures. A display id should be "
    "specified.\nA display ID can be specified with the [-d display-id] option.\n"
    "See \"dumpsys SurfaceFlinger --display-id\" for valid display IDs.\n"
)
IDLE_ERROR = "ERROR: could not get idle state.\n"
NULL_ROOT_ERROR = "ERROR: null root node returned by UiTestAutomationBridge.\n"


def already_registered(proxy: str) -> str:
    """UiAutomationConnection refusing a second UiAutomation (uiautomator dump's trace)."""
    return (
        "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
        f"IAccessibilityServiceClient$Stub$Proxy@{proxy}already registered!\n"
        "\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3011)\n"
        "\tat android.os.Parcel.createException(Parcel.java:2995)\n"
        "\tat android.os.Parcel.readException(Parcel.java:2978)\n"
        "\tat android.os.Parcel.readException(Parcel.java:2920)\n"
        "\tat android.app.IUiAutomationConnection$Stub$Proxy.connect(IUiAutomationConnection.java:326)\n"
        "\tat android.app.UiAutomation.connectWithTimeout(UiAutomation.java:361)\n"
        "\tat android.app.UiAutomation.connect(UiAutomation.java:327)\n"
        "\tat com.android.uiautomator.core.UiAutomationShellWrapper.connect(UiAutomationShellWrapper.java:29)\n"
        "\tat com.android.commands.uiautomator.DumpCommand.run(DumpCommand.java:96)\n"
        "\tat com.android.commands.uiautomator.Launcher.main(Launcher.java:83)\n"
        "\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n"
        "\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:355)\n"
        "Caused by: android.os.RemoteException: Remote stack trace:\n"
        "\tat com.android.server.accessibility.UiAutomationManager.registerUiTestAutomationServiceLocked"
        "(UiAutomationManager.java:103)\n"
        "\tat com.android.server.accessibility.AccessibilityManagerService.registerUiTestAutomationService"
        "(AccessibilityManagerService.java:1304)\n"
        "\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked"
        "(UiAutomationConnection.java:497)\n"
        "\tat android.app.UiAutomationConnection.connect(UiAutomationConnection.java:108)\n"
        "\tat android.app.IUiAutomationConnection$Stub.onTransact(IUiAutomationConnection.java:235)\n\n"
    )


@functools.lru_cache(maxsize=8)
def black_png(width: int, height: int) -> bytes:
    """What a capture of a FLAG_SECURE screen (or a panel that is off) gives: all black."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (0, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


def cover_size(device: DeviceState) -> tuple[int, int]:
    """The second display of a foldable (its cover screen; off while the phone is open)."""
    width, height = device.phone.screen_size()
    return width, round(height * 2092 / 2400)


def capture_png(device: DeviceState, display: str | None = None) -> bytes:
    """A screenshot of ``display`` (the main one by default) as the profile lets the shell see it."""
    if display == SECOND_DISPLAY_ID:
        return black_png(*cover_size(device))
    if device.profile.secure_black and device.phone.screen_spec().secure:
        return black_png(*device.phone.screen_size())
    return device.phone.screenshot_png()


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
    rest, png_flag, display = list(args), False, None
    displays = ctx.device.display_ids()
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "-d" and rest:
            display = rest.pop(0)
            if display not in ("0", *displays):
                return await ctx.fail(f"Display Id '{display}' is not valid.")
        elif option in ("-p", "-hp"):
            png_flag = True
        elif option not in ("-a", "-j"):
            return await ctx.fail(f"unknown option {option}")
    if display is None and len(displays) > 1:
        await ctx.err(MULTI_DISPLAY_WARNING)
    png = await asyncio.to_thread(capture_png, ctx.device, display)
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
    device, profile = ctx.device, ctx.device.profile
    servers = device.u2_servers()
    if profile.u2_blocks_dump and servers:
        await ctx.err(already_registered(hex_id(f"uiautomation:{servers[0].pid}")))
        return 1
    if profile.idle_dump_fails and device.phone.screen_spec().animated:
        await ctx.err(IDLE_ERROR)
        return 0
    if device.null_root_now():
        await ctx.err(NULL_ROOT_ERROR)
        return 0
    xml = await asyncio.to_thread(device.dump_xml)  # layout off the loop: other streams go on
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
    server = ctx.device.u2_start(port, " ".join(["app_process", *args]))
    if server is None:
        await ctx.err("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
                      f"IAccessibilityServiceClient$Stub$Proxy@{hex_id('u2')}already registered!\n")
        return 1
    try:
        await ctx.out("[server] INFO: [UiAutomator2Server] Starting Server\n")
        try:  # until the shell stream closes (cancelled) or pkill stops it
            await asyncio.wait_for(server.stopped.wait(), ctx.device.limits.server_timeout)
        except TimeoutError:
            return 0
        return KILLED
    finally:
        ctx.device.u2_stop(port, server)


COMMANDS: dict[str, Command] = {"wm": wm, "screencap": screencap, "uiautomator": uiautomator,
                                "app_process": app_process}
