"""Realism profiles through the real adb server, adbutils and uiautomator2: each behaviour of a real
phone, on the profiles that have it, with the exact text Android prints (see ufo_mobile/sim/android/profile.py).

Profiles are chosen with ``@pytest.mark.parametrize("sim_device", [...], indirect=True)``, by name or
as a ``RealismProfile`` with one switch changed to isolate a behaviour."""

from __future__ import annotations

import io
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import adbutils
import pytest
import uiautomator2 as u2
from PIL import Image

from ufo_mobile.core.device.adb import AdbDriver
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.errors import DumpUnavailableError
from ufo_mobile.sim.android.commands.system import MULTI_DISPLAY_WARNING
from ufo_mobile.sim.android.devstate import ADB_IME, DISPLAY_ID, SECOND_DISPLAY_ID
from ufo_mobile.sim.android.profile import MIUI_INPUT_SWITCH, get_profile
from ufo_mobile.sim.phone.loader import packaged_app

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

REALISTIC = ["pixel-14", "foldable-14", "android-10", "xiaomi-13"]
PIXEL = get_profile("pixel-14")
QUIET_PIXEL = PIXEL.replace(null_root_dumps=0)  # dumps after a launch work at once: isolates the rest
NOTES, SETTINGS, LAUNCHER, VIDEO, BANK = ("com.example.notes", "com.android.settings", "com.android.launcher3",
                                          "com.example.video", "com.example.bank")
IDLE_ERROR = "ERROR: could not get idle state.\n"
NULL_ROOT = "ERROR: null root node returned by UiTestAutomationBridge.\n"


def black(png: bytes) -> tuple[tuple[int, int], bool]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size, image.convert("RGB").getextrema() == ((0, 0), (0, 0), (0, 0))


# -- 1. an animated screen is never idle ----------------------------------------------------------------


@pytest.mark.parametrize("sim_device", REALISTIC, indirect=True)
def test_dump_of_an_animated_screen_fails_every_time(sim_device: Any) -> None:
    d = sim_device.device
    d.app_start(VIDEO)
    assert sim_device.phone.current_app().package == VIDEO
    for _ in range(3):
        result = d.shell2("rm -f /sdcard/v.xml; uiautomator dump /sdcard/v.xml", v2=True)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", IDLE_ERROR)
        assert not d.sync.exists("/sdcard/v.xml")
    assert d.shell("uiautomator dump /sdcard/v.xml") == IDLE_ERROR.strip()  # v1: stderr merged
    with pytest.raises(adbutils.AdbError):
        d.dump_hierarchy()


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
def test_uiautomator2_dumps_the_animated_screen(sim_device: Any, u2_device: Any) -> None:
    sim_device.device.app_start(VIDEO)
    xml = u2_device.dump_hierarchy()  # the server waits for idle briefly, then dumps anyway
    assert 'text="Big Buck Bunny" resource-id="com.example.video:id/toolbar_title"' in xml


@pytest.mark.parametrize("sim_device", ["kind"], indirect=True)
def test_the_kind_phone_dumps_the_animated_screen(sim_device: Any) -> None:
    sim_device.phone.install(packaged_app(VIDEO))
    sim_device.device.app_start(VIDEO)
    assert sim_device.device.dump_hierarchy() == sim_device.phone.dump_hierarchy()


# -- 2. right after an app or activity change ------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14", PIXEL.replace(null_root_dumps=2)], indirect=True)
def test_dumps_right_after_a_launch_find_no_root(sim_device: Any) -> None:
    d, count = sim_device.device, sim_device.adbd.profile.null_root_dumps
    assert d.shell("uiautomator dump /sdcard/a.xml") == "UI hierchary dumped to: /sdcard/a.xml"
    d.app_start(SETTINGS)
    for _ in range(count):
        result = d.shell2("rm -f /sdcard/a.xml; uiautomator dump /sdcard/a.xml", v2=True)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", NULL_ROOT)
        assert not d.sync.exists("/sdcard/a.xml")
    assert d.shell("uiautomator dump /sdcard/a.xml") == "UI hierchary dumped to: /sdcard/a.xml"
    assert d.sync.read_text("/sdcard/a.xml") == sim_device.phone.dump_hierarchy()
    d.shell(f"am start -n {NOTES}/.EditNoteActivity")
    with pytest.raises(adbutils.AdbError):
        d.dump_hierarchy()  # adbutils sees "ERROR" in the output
    if count == 1:
        assert d.dump_hierarchy() == sim_device.phone.dump_hierarchy()


async def no_pause(seconds: float) -> None:
    """The observation's backoff: the emulated phone counts dumps, not seconds."""


def uiautomator_dumps(sim_device: Any) -> int:
    return sum("uiautomator dump" in command for command in sim_device.adbd.commands)


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_the_adb_driver_dumps_a_null_root_again_at_once(sim_device: Any) -> None:
    """The fast path: the refusal after a launch costs one more dump, no pause, no refusal."""
    driver = AdbDriver(sim_device.serial, client=sim_device.client, timeout=60.0)
    await driver.connect()
    await driver.start_app(SETTINGS)
    sim_device.adbd.commands.clear()
    assert await driver.get_ui_tree() == sim_device.phone.dump_hierarchy()
    assert uiautomator_dumps(sim_device) == 2
    sim_device.adbd.commands.clear()
    assert await driver.get_ui_tree() == sim_device.phone.dump_hierarchy()  # no launch since: one dump
    assert uiautomator_dumps(sim_device) == 1


@pytest.mark.parametrize("sim_device", [PIXEL.replace(null_root_dumps=3)], indirect=True)
async def test_a_null_root_that_lasts_is_left_to_the_callers_backoff(sim_device: Any) -> None:
    """The fallback: two refusals in a row raise the refusal (the observation retries with pauses)."""
    driver = AdbDriver(sim_device.serial, client=sim_device.client, timeout=60.0)
    await driver.connect()
    await driver.start_app(SETTINGS)
    sim_device.adbd.commands.clear()
    with pytest.raises(DumpUnavailableError) as refused:
        await driver.get_ui_tree()
    assert refused.value.kind == "null_root" and uiautomator_dumps(sim_device) == 2
    assert await driver.get_ui_tree() == sim_device.phone.dump_hierarchy()  # the third refuses, the fourth works
    assert uiautomator_dumps(sim_device) == 4


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_an_animated_screen_goes_straight_to_the_fallback_while_it_stays(sim_device: Any) -> None:
    """After an idle refusal the next observations of the same screen run no ``uiautomator dump``
    (a real phone would wait 10 s for the same answer) and dump through the uiautomator2 server,
    started once and kept; a key press ends the prediction, and the next ``uiautomator dump``
    stops the server in its own shell command."""
    driver = AdbDriver(sim_device.serial, client=sim_device.client, timeout=60.0, start_timeout=60.0)
    provider = AndroidStateProvider(driver, sleep=no_pause)
    await driver.connect()
    await driver.start_app(VIDEO)
    sim_device.adbd.commands.clear()
    for name in ("first", "second", "third"):
        read = await provider.read(observation_id=name)
        assert (read.refusals, read.fallback) == (["idle"], "fallback_dump")
        assert "Big Buck Bunny" in read.ui.formatted_text
        assert sim_device.adbd.device.u2_running()  # kept until the next uiautomator dump
        await driver.tap(540, 40)  # the status bar: the video plays on
    assert uiautomator_dumps(sim_device) == 1
    assert sum("app_process" in c for c in sim_device.adbd.commands) == 1  # one server start for the three
    fourth = await provider.read(observation_id="fourth")  # the prediction is over: a plain dump again
    assert (fourth.refusals, fourth.fallback, uiautomator_dumps(sim_device)) == (["idle"], "fallback_dump", 2)
    stopped_first = [c for c in sim_device.adbd.commands if "uiautomator dump" in c][-1]
    assert stopped_first.startswith("pkill -f com.wetest.uia2.Main")  # in the dump's own command
    assert sum("app_process" in c for c in sim_device.adbd.commands) == 2  # the video refused again
    await driver.press_key("home")
    fifth = await provider.read(observation_id="fifth")
    assert (fifth.refusals, fifth.fallback, uiautomator_dumps(sim_device)) == ([], None, 3)
    assert not sim_device.adbd.device.u2_running()


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_the_fallback_servers_jar_is_checked_at_its_first_start_on_a_connection(sim_device: Any) -> None:
    """uiautomator2 checks its u2.jar on the phone (an MD5 each side) before every start; the driver
    lets it do so once per connection, and again when a start without it fails (the jar gone)."""
    driver = AdbDriver(sim_device.serial, client=sim_device.client, timeout=60.0, start_timeout=60.0)
    provider = AndroidStateProvider(driver, sleep=no_pause)
    await driver.connect()

    async def watch_the_video() -> None:
        await driver.start_app(VIDEO)
        assert (await provider.read(observation_id="video")).fallback == "fallback_dump"
        await driver.press_key("home")
        assert (await provider.read(observation_id="home")).fallback is None  # the server stopped

    sim_device.adbd.commands.clear()
    for _ in range(2):
        await watch_the_video()
    checks = [c for c in sim_device.adbd.commands if "md5sum" in c]
    assert len(checks) == 1 and sum("app_process" in c for c in sim_device.adbd.commands) == 2
    sim_device.device.shell("rm /data/local/tmp/u2.jar")
    await watch_the_video()
    assert len([c for c in sim_device.adbd.commands if "md5sum" in c]) == 2  # checked and pushed again
    await driver.close()


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_closing_the_adb_driver_stops_a_kept_fallback_server(sim_device: Any) -> None:
    driver = AdbDriver(sim_device.serial, client=sim_device.client, timeout=60.0, start_timeout=60.0)
    provider = AndroidStateProvider(driver, sleep=no_pause)
    await driver.connect()
    await driver.start_app(VIDEO)
    assert (await provider.read(observation_id="video")).fallback == "fallback_dump"
    assert sim_device.adbd.device.u2_running()
    await driver.close()
    assert not sim_device.adbd.device.u2_running()


# -- 3. two displays -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["foldable-14"], indirect=True)
def test_screencap_warns_on_a_foldable_through_shell_and_exec(sim_device: Any, adb_server: Any) -> None:
    d, png = sim_device.device, sim_device.phone.screenshot_png()
    warning = MULTI_DISPLAY_WARNING.encode()
    assert d.shell("screencap -p", encoding=None) == warning + png
    assert adb_server.run("-s", sim_device.serial, "exec-out", "screencap -p").stdout == warning + png
    v2 = d.shell2("screencap -p", v2=True, encoding=None)
    assert (v2.returncode, v2.stdout, v2.stderr) == (0, png, warning)
    assert d.shell("dumpsys SurfaceFlinger --display-id") == (
        f"Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=UFO displayName=\"UFO Sim Phone\"\n"
        f"Display {SECOND_DISPLAY_ID} (HWC display 1): port=1 pnpId=UFO displayName=\"UFO Sim Phone Cover\"")
    assert d.shell(f"screencap -p -d {DISPLAY_ID}", encoding=None) == png
    assert black(d.shell(f"screencap -p -d {SECOND_DISPLAY_ID}", encoding=None)) == ((1080, 2092), True)
    with pytest.raises(adbutils.AdbError):  # adbutils cannot read past the warning (its message: its words)
        d.screenshot(error_ok=False)
    assert d.screenshot(display_id=0).size == (1080, 2400)  # with the display's id it can


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
def test_one_display_no_warning(sim_device: Any) -> None:
    assert sim_device.device.shell("screencap -p", encoding=None) == sim_device.phone.screenshot_png()


# -- 4. FLAG_SECURE ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL, "xiaomi-13"], indirect=True)
def test_secure_screens_capture_black_and_still_dump(sim_device: Any, u2_device: Any) -> None:
    d = sim_device.device
    d.shell(f"am start -n {BANK}/.LoginActivity")
    assert black(d.shell("screencap -p", encoding=None)) == ((1080, 2400), True)
    assert u2_device.screenshot().convert("RGB").getextrema() == ((0, 0), (0, 0), (0, 0))
    assert "com.example.bank:id/pin_field" in u2_device.dump_hierarchy()
    d.shell(f"am start -n {BANK}/.WelcomeActivity")
    assert black(d.shell("screencap -p", encoding=None)) == ((1080, 2400), False)


# -- 5. the uiautomator2 clipboard -----------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14", "xiaomi-13"], indirect=True)
def test_u2_clipboard_is_denied_on_android_11_to_14(sim_device: Any, u2_device: Any) -> None:
    with pytest.raises(u2.exceptions.RPCUnknownError) as info:
        u2_device.set_clipboard("hello")
    # what our phone answered (the code and Android's exception), inside uiautomator2's words (not asserted)
    assert "-32001" in str(info.value)
    assert "java.lang.SecurityException: Package android does not belong to 2000" in str(info.value)
    assert u2_device.clipboard is None
    d = sim_device.device
    d.shell(f"am start -n {NOTES}/.EditNoteActivity")
    d.shell("input tap 540 327")
    if sim_device.adbd.profile.inject_guard:
        d.shell(f"settings put global {MIUI_INPUT_SWITCH} 1")
        d.shell("input tap 540 327")
    d.shell(["input", "text", "typed%sby%sinput"])  # the shell's path still types
    assert sim_device.phone.state(NOTES)["title"] == "typed by input"


@pytest.mark.parametrize("sim_device", ["android-10"], indirect=True)
def test_u2_clipboard_on_android_10_sets_but_reads_nothing(sim_device: Any, u2_device: Any) -> None:
    u2_device.set_clipboard("hello")
    assert u2_device.clipboard is None and sim_device.adbd.device.clipboard == "hello"


# -- 6. ADB Keyboard ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", REALISTIC, indirect=True)
def test_adb_keyboard_is_not_installed_and_broadcasts_reach_nobody(sim_device: Any) -> None:
    d = sim_device.device
    assert ADB_IME not in d.shell("ime list -s -a").split()
    result = d.shell2(f"ime enable {ADB_IME}", v2=True)
    assert (result.returncode, result.stderr) == (
        255, f"Unknown input method {ADB_IME} cannot be enabled for user #0\n")
    assert d.shell(f"am broadcast -a ADB_INPUT_TEXT --es msg {shlex.quote('hi there')}") == (
        "Broadcasting: Intent { act=ADB_INPUT_TEXT flg=0x400000 (has extras) }\nBroadcast completed: result=0")


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL.replace(adb_keyboard=True, adb_keyboard_late=1)], indirect=True)
def test_an_installed_adb_keyboard_binds_late(sim_device: Any) -> None:
    d = sim_device.device
    d.shell(f"am start -n {NOTES}/.EditNoteActivity && input tap 540 327")
    assert ADB_IME in d.shell("ime list -s -a").split()
    assert d.shell(f"ime enable {ADB_IME} && ime set {ADB_IME}") == (
        f"Input method {ADB_IME}: now enabled for user #0\nInput method {ADB_IME} selected for user #0")
    expected = "Broadcasting: Intent { act=ADB_INPUT_TEXT flg=0x400000 (has extras) }\nBroadcast completed: result=0"
    assert d.shell("am broadcast -a ADB_INPUT_TEXT --es msg first") == expected
    assert sim_device.phone.state(NOTES)["title"] == ""  # the receiver was not registered yet
    assert d.shell("am broadcast -a ADB_INPUT_TEXT --es msg second") == expected
    assert sim_device.phone.state(NOTES)["title"] == "second"


# -- 7. the current app ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14", "foldable-14", "xiaomi-13"], indirect=True)
def test_adbutils_app_current_is_wrong_on_android_13_and_14(sim_device: Any) -> None:
    d = sim_device.device
    d.app_start(SETTINGS)
    assert sim_device.phone.current_app().package == SETTINGS
    window = d.shell("dumpsys window windows") + d.shell("dumpsys window")
    assert "mCurrentFocus" not in window and "mFocusedApp" not in window
    activities = d.shell("dumpsys activity activities")
    assert "mResumedActivity" not in activities
    assert re.search(r"^    topResumedActivity=ActivityRecord\{\w+ u0 com\.android\.settings/\.Settings t\d+\}$",
                     activities, re.M)
    assert re.search(r"^  ResumedActivity: ActivityRecord\{\w+ u0 com\.android\.settings/\.Settings t\d+\}$",
                     activities, re.M)
    assert [line.split()[1] for line in d.shell("dumpsys activity top").splitlines() if "ACTIVITY" in line] == [
        "com.android.settings/.Settings", "com.android.launcher3/.uioverride.QuickstepLauncher"]
    assert d.app_current().package == LAUNCHER  # adbutils keeps the last one: not the app in front


@pytest.mark.parametrize("sim_device", ["kind", "android-10"], indirect=True)
def test_adbutils_app_current_where_focus_is_printed(sim_device: Any) -> None:
    sim_device.device.app_start(SETTINGS)
    assert sim_device.device.app_current().package == SETTINGS


# -- the sim command ---------------------------------------------------------------------------------


def test_sim_command_serves_the_chosen_profile(adb_server: Any) -> None:
    env = {**adb_server.env, "PYTHONPATH": str(ROOT)}
    helped = subprocess.run([sys.executable, "-m", "ufo_mobile", "sim", "--help"], capture_output=True, text=True,
                            timeout=60, env=env)
    assert "kind, pixel-14, foldable-14, android-10, xiaomi-13 (default pixel-14" in " ".join(helped.stdout.split())
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "sim", "--port", "0", "--profile", "android-10"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    client = adb_server.client()
    serial = ""
    try:
        assert proc.stdout is not None
        serial = proc.stdout.readline().split("listening on ")[1].split(";")[0]
        client.connect(serial, timeout=60)
        client.wait_for(serial, state="device", timeout=60)
        device = client.device(serial)
        assert (device.getprop("ro.build.version.sdk"), device.getprop("ro.build.version.release")) == ("29", "10")
        assert device.shell2("input keycombination 113 29").returncode == 1
    finally:
        if serial:
            client.disconnect(serial)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
