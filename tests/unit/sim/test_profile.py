"""Realism profiles in the toy shell: each behaviour switched on alone (``kind.replace(...)``), with
the exact text Android prints, and the presets that bundle them."""

from __future__ import annotations

import asyncio
import dataclasses
import io

import pytest
from PIL import Image

from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.android.commands.dumpsys_wm import task_id
from ufo_mobile.sim.android.commands.system import MULTI_DISPLAY_WARNING
from ufo_mobile.sim.android.devstate import ADB_IME, DISPLAY_ID, SECOND_DISPLAY_ID, DeviceState
from ufo_mobile.sim.android.profile import (
    GBOARD_IME,
    KIND,
    MIUI_INPUT_SWITCH,
    PROFILES,
    RealismProfile,
    get_profile,
    profile_names,
)
from ufo_mobile.sim.android.shell import DeviceShell
from ufo_mobile.sim.android.shio import BufferSink, BytesSource, ShellIO
from ufo_mobile.sim.phone.loader import packaged_app

NOTES = "com.example.notes"
VIDEO = "com.example.video"
BANK = "com.example.bank"


def device_with(profile: RealismProfile | str = "kind", phone: SimPhone | None = None) -> DeviceState:
    return DeviceState(phone or SimPhone(), "sim", profile=get_profile(profile))


async def run(device: DeviceState, script: str) -> tuple[int, str, str]:
    out, err = BufferSink(), BufferSink()
    status = await DeviceShell(device).run(script, ShellIO(out, err, BytesSource()))
    return status, out.data.decode("utf-8", "replace"), err.data.decode("utf-8", "replace")


async def run_bytes(device: DeviceState, script: str) -> tuple[int, bytes, bytes]:
    out, err = BufferSink(), BufferSink()
    status = await DeviceShell(device).run(script, ShellIO(out, err, BytesSource()))
    return status, bytes(out.data), bytes(err.data)


async def server_started(device: DeviceState) -> None:
    """Let the app_process task run until its server is up (loop turns, no time passes)."""
    for _ in range(1000):
        if device.u2_running(9008):
            return
        await asyncio.sleep(0)
    raise AssertionError("the uiautomator2 server did not start")


# -- the API ------------------------------------------------------------------------------------------


def test_presets_by_name_object_or_default() -> None:
    assert profile_names() == ["kind", "pixel-14", "foldable-14", "android-10", "xiaomi-13"]
    pixel = get_profile("pixel-14")
    assert get_profile() is pixel and get_profile("kind") is KIND  # the realistic phone is the default
    assert get_profile(pixel) is pixel
    assert (pixel.release, pixel.sdk, pixel.vendor, pixel.ime) == ("14", 34, "Google", GBOARD_IME)
    with pytest.raises(ValueError, match="unknown device profile 'pixel-99'"):
        get_profile("pixel-99")
    with pytest.raises(dataclasses.FrozenInstanceError):
        pixel.sdk = 33  # type: ignore[misc]
    assert pixel.replace(null_root_dumps=3).null_root_dumps == 3 and pixel.null_root_dumps == 1


def test_presets_switch_the_behaviours_they_should() -> None:
    kind, pixel, fold = PROFILES["kind"], PROFILES["pixel-14"], PROFILES["foldable-14"]
    android10, xiaomi = PROFILES["android-10"], PROFILES["xiaomi-13"]
    switches = [field.name for field in dataclasses.fields(RealismProfile)
                if isinstance(getattr(kind, field.name), bool | int) and field.name not in ("sdk", "seed")]
    assert all(getattr(kind, name) in (False, 0) for name in switches if name not in ("adb_keyboard",
                                                                                      "keycombination"))
    assert kind.adb_keyboard and kind.keycombination and kind.extra_apps == ()
    assert dataclasses.replace(fold, name="pixel-14", second_display=False, seed=14) == pixel
    assert (android10.sdk, android10.keycombination, android10.clipboard_set_denied, android10.focus_hidden) == (
        29, False, False, False)
    assert (xiaomi.vendor, xiaomi.sdk, xiaomi.inject_guard, pixel.inject_guard) == ("Xiaomi", 33, True, False)


def test_props_follow_the_profile_and_kind_keeps_the_simulators() -> None:
    kind = device_with("kind").props
    assert (kind["ro.build.version.sdk"], kind["ro.product.manufacturer"], kind["ro.build.type"]) == (
        "34", "UFO", "userdebug")
    assert kind["ro.build.fingerprint"] == "ufo/ufo_sim/ufo_sim:14/UP1A.231005.007/1:userdebug/release-keys"
    props = device_with("android-10").props
    assert (props["ro.build.version.release"], props["ro.build.version.sdk"], props["ro.debuggable"]) == (
        "10", "29", "0")
    xiaomi = device_with("xiaomi-13").props
    assert (xiaomi["ro.product.brand"], xiaomi["ro.miui.ui.version.name"], xiaomi[MIUI_INPUT_SWITCH]) == (
        "Xiaomi", "V140", "0")
    assert kind["ro.product.model"] == xiaomi["ro.product.model"] == "UFO Sim Phone"


def test_realistic_profiles_prepare_the_phone() -> None:
    phone = SimPhone()
    device_with("pixel-14", phone)
    installed = {app.package for app in phone.installed_apps()}
    assert {VIDEO, BANK} <= installed and phone.soft_keyboard
    kind_phone = SimPhone()
    device_with("kind", kind_phone)
    assert not kind_phone.soft_keyboard and VIDEO not in {app.package for app in kind_phone.installed_apps()}


# -- 1, 2: uiautomator dump ---------------------------------------------------------------------------


async def test_dump_of_an_animated_screen_never_gets_idle() -> None:
    device = device_with(KIND.replace(idle_dump_fails=True))
    device.phone.install(packaged_app(VIDEO))
    device.phone.start_app(VIDEO)
    for _ in range(3):
        assert await run(device, "uiautomator dump /sdcard/v.xml") == (0, "", "ERROR: could not get idle state.\n")
    assert not device.fs.exists("/sdcard/v.xml")
    await run(device, "input tap 965 168")  # "Library": a list, not animated
    assert device.phone.current_screen() == "library"
    assert await run(device, "uiautomator dump /sdcard/v.xml") == (0, "UI hierchary dumped to: /sdcard/v.xml\n", "")


async def test_the_kind_phone_dumps_an_animated_screen() -> None:
    device = device_with("kind")
    device.phone.install(packaged_app(VIDEO))
    device.phone.start_app(VIDEO)
    assert (await run(device, "uiautomator dump /sdcard/v.xml"))[1] == "UI hierchary dumped to: /sdcard/v.xml\n"
    assert device.fs.read("/sdcard/v.xml").decode() == device.phone.dump_hierarchy()


async def test_dumps_right_after_an_activity_change_find_no_root() -> None:
    device = device_with(KIND.replace(null_root_dumps=2))
    ok = (0, "UI hierchary dumped to: /sdcard/window_dump.xml\n", "")
    null = (0, "", "ERROR: null root node returned by UiTestAutomationBridge.\n")
    assert await run(device, "uiautomator dump") == ok  # nothing changed since boot
    await run(device, f"am start -n {NOTES}/.NotesActivity")
    assert [await run(device, "uiautomator dump") for _ in range(3)] == [null, null, ok]
    await run(device, f"am start -n {NOTES}/.EditNoteActivity")  # same app, another activity
    assert (await run(device, "uiautomator dump"))[2] == null[2]


# -- 3, 4: screencap ---------------------------------------------------------------------------------


async def test_a_second_display_makes_screencap_warn_without_d() -> None:
    device = device_with(KIND.replace(second_display=True))
    png = device.phone.screenshot_png()
    status, out, err = await run_bytes(device, "screencap -p")
    assert (status, out, err.decode()) == (0, png, MULTI_DISPLAY_WARNING)
    assert MULTI_DISPLAY_WARNING.startswith(
        "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display"
        " found, however this default is not guaranteed to be consistent across captures. A display id should be"
        " specified.\nA display ID can be specified with the [-d display-id] option.\n")
    assert await run_bytes(device, f"screencap -p -d {DISPLAY_ID}") == (0, png, b"")
    status, cover, err = await run_bytes(device, f"screencap -p -d {SECOND_DISPLAY_ID}")
    with Image.open(io.BytesIO(cover)) as image:
        assert (status, err, image.size, image.getextrema()) == (0, b"", (1080, 2092), ((0, 0), (0, 0), (0, 0)))
    assert (await run(device, "dumpsys SurfaceFlinger --display-id"))[1] == (
        f"Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=UFO displayName=\"UFO Sim Phone\"\n"
        f"Display {SECOND_DISPLAY_ID} (HWC display 1): port=1 pnpId=UFO displayName=\"UFO Sim Phone Cover\"\n")
    assert (await run_bytes(device_with("kind"), "screencap -p"))[2] == b""


async def test_a_secure_screen_is_black_but_still_dumps() -> None:
    device = device_with(KIND.replace(secure_black=True))
    device.phone.install(packaged_app(BANK))
    device.phone.start_app(BANK)
    assert (await run_bytes(device, "screencap -p"))[1] == device.phone.screenshot_png()  # welcome: not secure
    device.phone.start_app(BANK, ".LoginActivity")
    _, png, _ = await run_bytes(device, "screencap -p")
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (1080, 2400) and image.getextrema() == ((0, 0), (0, 0), (0, 0))
    await run(device, "uiautomator dump /sdcard/b.xml")
    assert 'resource-id="com.example.bank:id/pin_field"' in device.fs.read("/sdcard/b.xml").decode()


# -- 6: ADB Keyboard ----------------------------------------------------------------------------------


async def test_adb_keyboard_absent_where_the_profile_has_none() -> None:
    device = device_with("pixel-14")
    assert ADB_IME not in (await run(device, "ime list -s -a"))[1]
    assert await run(device, f"ime enable {ADB_IME}") == (
        255, "", f"Unknown input method {ADB_IME} cannot be enabled for user #0\n")
    device.phone.start_app(NOTES, ".EditNoteActivity")
    device.phone.tap(540, 327)
    assert await run(device, "am broadcast -a ADB_INPUT_TEXT --es msg hi") == (
        0, "Broadcasting: Intent { act=ADB_INPUT_TEXT flg=0x400000 (has extras) }\nBroadcast completed: result=0\n",
        "")
    assert device.phone.state(NOTES)["title"] == ""


async def test_adb_keyboards_late_receiver_misses_the_first_broadcasts() -> None:
    device = device_with(KIND.replace(adb_keyboard_late=2))
    device.phone.start_app(NOTES, ".EditNoteActivity")
    device.phone.tap(540, 327)
    await run(device, f"ime enable {ADB_IME} && ime set {ADB_IME}")
    outputs = [await run(device, f"am broadcast -a ADB_INPUT_TEXT --es msg {word}") for word in ("a", "b", "c")]
    assert outputs == [(0, "Broadcasting: Intent { act=ADB_INPUT_TEXT (has extras) }\n"
                           "Broadcast completed: result=0\n", "")] * 3
    assert device.phone.state(NOTES)["title"] == "c"
    await run(device, f"ime set {ADB_IME}")  # selected again: the receiver binds late again
    await run(device, "am broadcast -a ADB_CLEAR_TEXT")
    assert device.phone.state(NOTES)["title"] == "c"


# -- 7: the current app ---------------------------------------------------------------------------------


async def test_focus_lines_hidden_and_android14_wording() -> None:
    device = device_with(KIND.replace(focus_hidden=True))
    device.phone.start_app("com.android.settings")
    window = (await run(device, "dumpsys window"))[1]
    activities = (await run(device, "dumpsys activity activities"))[1]
    assert "mCurrentFocus" not in window and "mFocusedApp" not in window
    assert "mResumedActivity" not in activities and "mFocusedApp" not in activities
    record = [line for line in activities.splitlines() if "topResumedActivity=" in line]
    assert [line.split("{")[1].split()[1:] for line in record] == [
        ["u0", "com.android.settings/.Settings", f"t{task_id('com.android.settings')}}}"]]
    assert "  ResumedActivity: ActivityRecord{" in activities
    top = (await run(device, "dumpsys activity top"))[1]
    assert [line.split()[1] for line in top.splitlines() if line.startswith("  ACTIVITY")] == [
        "com.android.settings/.Settings", "com.android.launcher3/.uioverride.QuickstepLauncher"]
    kind = device_with("kind")
    kind.phone.start_app("com.android.settings")
    assert "  mCurrentFocus=Window{" in (await run(kind, "dumpsys window windows"))[1]


# -- 11, 12: input ---------------------------------------------------------------------------------------


async def test_keycombination_is_unknown_before_android_11() -> None:
    assert await run(device_with(KIND.replace(keycombination=False)), "input keycombination 113 29") == (
        1, "", "Error: Unknown command: keycombination\n")
    assert (await run(device_with("kind"), "input keycombination 113 29"))[0] == 0


@pytest.mark.parametrize(("command", "name"), [("input tap 540 1200", "tap"), ("input swipe 1 2 3 4", "swipe"),
                                               ("input text hello", "text"), ("input keyevent 3", "keyevent")])
async def test_miui_refuses_injection_until_its_switch_is_on(command: str, name: str) -> None:
    device = device_with(KIND.replace(inject_guard=True))
    status, out, err = await run(device, command)
    assert (status, out) == (255, "")
    assert err.startswith(f"\nException occurred while executing '{name}':\njava.lang.SecurityException: "
                          "Injecting to another application requires INJECT_EVENTS permission\n\tat ")
    await run(device, f"settings put global {MIUI_INPUT_SWITCH} 1")
    assert (await run(device, f"getprop {MIUI_INPUT_SWITCH}"))[1] == "1\n"
    assert (await run(device, command))[0] == 0


# -- 9: ps and pkill ------------------------------------------------------------------------------------


async def test_pkill_stops_the_uiautomator2_server_listed_by_ps() -> None:
    device = device_with("kind")
    device.fs.write("/data/local/tmp/u2.jar", b"jar")
    server = asyncio.create_task(run(device, "CLASSPATH=/data/local/tmp/u2.jar app_process / "
                                             "com.wetest.uia2.Main -p 9008"))
    await server_started(device)
    listing = (await run(device, "ps -ef"))[1]
    assert "shell         30000  4242 0 09:30:00 ?     00:00:00 app_process / com.wetest.uia2.Main -p 9008\n" in listing
    assert [line.split()[-1] for line in (await run(device, "ps -A"))[1].splitlines()][-2:] == [
        "com.android.launcher3", "app_process"]
    assert await run(device, "pkill -f com.wetest.uia2.Main") == (0, "", "")
    assert await server == (143, "[server] INFO: [UiAutomator2Server] Starting Server\n", "")
    assert not device.u2_running(9008)
    assert (await run(device, "pkill -f com.wetest.uia2.Main"))[0] == 1


async def test_a_running_server_blocks_uiautomator_dump_on_real_phones() -> None:
    device = device_with(KIND.replace(u2_blocks_dump=True))
    device.fs.write("/data/local/tmp/u2.jar", b"jar")
    server = asyncio.create_task(run(device, "CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main"))
    await server_started(device)
    status, out, err = await run(device, "uiautomator dump /sdcard/x.xml")
    assert (status, out) == (1, "")
    assert err.startswith("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
                          "IAccessibilityServiceClient$Stub$Proxy@")
    assert err.splitlines()[0].endswith("already registered!") and not device.fs.exists("/sdcard/x.xml")
    await run(device, "pkill -f com.wetest.uia2.Main")
    await server
    assert (await run(device, "uiautomator dump /sdcard/x.xml"))[0] == 0
