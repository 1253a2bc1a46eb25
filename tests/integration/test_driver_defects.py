"""The drivers on the phones the realism profiles make, one test per defect they exposed (the issue's
numbers), each on the profile that shows it and asserting what a user cares about: the run goes on,
the text is typed exactly, the label is the real one, the keyboard is seen, the screenshot is a PNG,
the server is stopped, the right app is current. Backoff sleeps are injected (no real waiting)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import uiautomator2 as u2
from lxml import etree

from tests.adb_server import server_answers
from tests.flows import focus_new_note_title
from tests.integration.test_drivers import COMMAND_TIMEOUT, demo_settings, device_settings
from ufo_mobile.core.device.adb import AdbDriver
from ufo_mobile.core.device.base import CurrentApp, KeyboardState
from ufo_mobile.core.device.u2 import U2Driver
from ufo_mobile.core.session import Session
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DumpUnavailableError
from ufo_mobile.sim.android.devstate import SECOND_DISPLAY_ID
from ufo_mobile.sim.android.profile import get_profile
from ufo_mobile.sim.phone import keyboard
from ufo_mobile.sim.phone.simphone import LAUNCHER

pytestmark = pytest.mark.integration

PIXEL = get_profile("pixel-14")
QUIET_PIXEL = PIXEL.replace(null_root_dumps=0)  # dumps work right after a launch: isolates the rest
NOTES, SETTINGS, VIDEO = "com.example.notes", "com.android.settings", "com.example.video"
SYSTEMUI, GBOARD = "com.android.systemui", "com.google.android.inputmethod.latin"


async def no_wait(seconds: float) -> None:
    """The drivers' backoff sleeps: the emulated phone's quirks count calls, not seconds."""


def adb_driver(sim_device: Any, **options: Any) -> AdbDriver:
    return AdbDriver(sim_device.serial, client=sim_device.client, timeout=COMMAND_TIMEOUT, sleep=no_wait, **options)


def u2_driver(sim_device: Any, **options: Any) -> U2Driver:
    return U2Driver(sim_device.serial, client=sim_device.client, timeout=COMMAND_TIMEOUT, start_timeout=COMMAND_TIMEOUT,
                    fallback=False, sleep=no_wait, **options)


def title(sim_device: Any) -> str:
    return str(sim_device.phone.state(NOTES)["title"])


def window_roots(xml: str) -> list[str]:
    """The package of each window root, in the order of the dump."""
    hierarchy = etree.fromstring(xml[xml.index("<hierarchy"):].encode())
    return [str(node.get("package")) for node in hierarchy]


# -- 1. a dump the phone refuses ends the run ---------------------------------------------------------------


# pixel-14 finds no root in the first dump after Settings opens (its few packages keep the label
# lookup out of it: that is defect 4's test)
@pytest.mark.parametrize("sim_device", [PIXEL.replace(many_packages=False)], indirect=True)
async def test_1_a_dump_the_phone_refuses_does_not_end_the_run(sim_device: Any, adb_server: Any,
                                                                tmp_path: Path) -> None:
    result = await Session(demo_settings(tmp_path, device_settings(sim_device, adb_server, "adb"))).run()
    assert (result.status, result.reason) == ("FINISH", "Wi-Fi is on.")
    assert sim_device.phone.state(SETTINGS)["wifi"] is True


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_1_an_animated_screen_is_refused_once_then_dumped_through_u2(sim_device: Any) -> None:
    driver = adb_driver(sim_device)
    await driver.connect()
    await driver.start_app(VIDEO)
    sim_device.adbd.commands.clear()
    with pytest.raises(DumpUnavailableError) as refused:
        await driver.get_ui_tree()
    assert refused.value.kind == "idle"
    assert len([c for c in sim_device.adbd.commands if c.startswith("uiautomator dump")]) == 1  # the caller retries
    assert driver.supports("fallback_ui_tree")
    xml = await driver.fallback_ui_tree()
    assert 'text="Big Buck Bunny" resource-id="com.example.video:id/toolbar_title"' in xml
    assert sim_device.adbd.device.u2_running()  # kept while the screen is predicted to refuse (adb_dump.py)
    await driver.press_key("home")
    assert "<hierarchy" in await driver.get_ui_tree()  # stopped first: ``uiautomator dump`` works again
    assert not sim_device.adbd.device.u2_running()


# -- 2. u2 typing through a clipboard Android denies ----------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14", "android-10"], indirect=True)
async def test_2_u2_types_exactly_and_leaves_the_users_clipboard_alone(sim_device: Any) -> None:
    """Android 11-14 deny setClipboard, Android 10+ read it as null: the text still arrives, exactly."""
    sim_device.adbd.device.clipboard = "the user's clipboard"
    driver = u2_driver(sim_device)
    await driver.connect()
    await focus_new_note_title(driver)
    text = "Grüße, 世界 🙂 — 100%s sûr"
    await driver.input_text(text, clear=True)
    assert title(sim_device) == text
    assert sim_device.adbd.device.clipboard == "the user's clipboard"
    assert sim_device.adbd.device.current_ime() == sim_device.adbd.profile.ime  # the user's keyboard is back
    await driver.close()


# -- 3. the ADB Keyboard loses text silently -----------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [PIXEL.replace(adb_keyboard=True, adb_keyboard_late=2)], indirect=True)
async def test_3_adb_keyboard_text_arrives_even_when_its_receiver_binds_late(sim_device: Any) -> None:
    driver = adb_driver(sim_device)
    await driver.connect()
    await focus_new_note_title(driver)
    await driver.input_text("old title")
    sim_device.adbd.commands.clear()
    await driver.input_text("naïve café 中文", clear=True)
    assert title(sim_device) == "naïve café 中文"
    assert not any("ADB_CLEAR_TEXT" in command for command in sim_device.adbd.commands)  # cleared by keys
    assert sim_device.adbd.device.current_ime() == sim_device.adbd.profile.ime


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_3_without_an_input_method_typing_fails_clearly_and_types_nothing(sim_device: Any) -> None:
    driver = adb_driver(sim_device)
    await driver.connect()
    await focus_new_note_title(driver)
    with pytest.raises(DeviceCommandError, match=r"install the ADB Keyboard .* or use device.kind: u2"):
        await driver.input_text("中文")
    assert title(sim_device) == ""


# -- 4. launching by label guesses labels ------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_4_apps_are_the_launchable_ones_with_their_apks_labels(sim_device: Any, tmp_path: Path) -> None:
    driver = adb_driver(sim_device, label_cache_dir=tmp_path)
    await driver.connect()
    apps = await driver.get_apps()
    packages = sim_device.adbd.device.packages.packages()
    launchable = {p.name: p.label for p in packages if p.activity is not None and p.name != LAUNCHER}
    assert {app.package: app.label for app in apps} == launchable and len(launchable) < len(packages) / 3
    assert launchable["com.ss.android.ugc.trill"] == "TikTok"  # no guess from the package name gets that
    sim_device.adbd.commands.clear()
    again = adb_driver(sim_device, label_cache_dir=tmp_path)  # the next run
    await again.connect()
    assert await again.get_apps() == apps
    assert not [c for c in sim_device.adbd.commands if c.startswith(("dd ", "stat ", "pm path"))]  # no APK read


# -- 5. the adb driver never sees the keyboard ----------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
async def test_5_the_adb_driver_sees_the_keyboard_and_where_it_is(sim_device: Any) -> None:
    driver = adb_driver(sim_device)
    await driver.connect()
    assert driver.supports("keyboard_state")
    await driver.start_app(NOTES, ".EditNoteActivity")
    assert await driver.keyboard_state() == KeyboardState(False, None)
    await driver.tap(540, 327)  # the title field
    frame = keyboard.window_rect(1080, 2400)
    assert await driver.keyboard_state() == KeyboardState(True, (frame.left, frame.top, frame.right, frame.bottom))
    assert "inputmethod" not in await driver.get_ui_tree()  # the dump itself cannot show it


# -- 6. u2's windows in no particular order --------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
async def test_6_u2_dumps_list_windows_top_most_first(sim_device: Any) -> None:
    driver = u2_driver(sim_device)
    await driver.connect()
    await driver.start_app(NOTES, ".EditNoteActivity")
    await driver.tap(540, 327)  # the keyboard comes up over the app
    orders = [window_roots(await driver.get_ui_tree()) for _ in range(6)]
    assert orders == [[SYSTEMUI, SYSTEMUI, GBOARD, NOTES]] * 6
    await driver.close()


# -- 7. screenshots on phones with two displays ----------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["foldable-14"], indirect=True)
async def test_7_a_foldables_screenshot_is_a_png(sim_device: Any) -> None:
    driver = adb_driver(sim_device)
    await driver.connect()
    assert await driver.screenshot() == sim_device.phone.screenshot_png()
    cover = adb_driver(sim_device, display_id=SECOND_DISPLAY_ID)
    await cover.connect()
    png = await cover.screenshot()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png != sim_device.phone.screenshot_png()


# -- 8. a uiautomator2 server left running ---------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
async def test_8_closing_the_u2_driver_stops_its_server(sim_device: Any) -> None:
    driver = u2_driver(sim_device)
    await driver.connect()
    assert driver.using_u2 and sim_device.adbd.device.u2_running()
    await driver.close()
    assert not sim_device.adbd.device.u2_running()
    out = sim_device.device.shell("uiautomator dump /sdcard/after.xml")
    assert out == "UI hierchary dumped to: /sdcard/after.xml"


class FailingStart(U2Driver):
    """A U2Driver whose first call to the server fails, as if the server it found were broken."""

    async def _rpc(self, what: str, fn: Any) -> Any:
        if what == "ping":
            raise DeviceCommandError("ping: the uiautomator2 server does not answer", serial=self.serial)
        return await super()._rpc(what, fn)


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
async def test_8_falling_back_to_adb_stops_a_leftover_server(sim_device: Any) -> None:
    leftover = u2.connect(sim_device.device)  # another tool's server, still running
    assert leftover.info["sdkInt"] == 34
    driver = FailingStart(sim_device.serial, client=sim_device.client, timeout=COMMAND_TIMEOUT,
                          start_timeout=COMMAND_TIMEOUT, fallback=True, sleep=no_wait)
    await driver.connect()
    assert not driver.using_u2
    assert not sim_device.adbd.device.u2_running()
    assert 'package="com.android.launcher3"' in await driver.get_ui_tree()


# -- 9. the current app on Android 13-15 ----------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
async def test_9_the_app_in_front_is_the_current_app(sim_device: Any) -> None:
    for driver in (adb_driver(sim_device), u2_driver(sim_device)):
        await driver.connect()
        await driver.start_app(NOTES)
        await driver.start_app(SETTINGS)
        assert sim_device.phone.current_app().package == SETTINGS
        assert await driver.current_app() == CurrentApp(SETTINGS, ".Settings")
        await driver.close()


# -- 11. select-all before Android 11 -------------------------------------------------------------------------------


async def clear_with_select_all(sim_device: Any, driver: AdbDriver | U2Driver) -> None:
    await driver.connect()
    await focus_new_note_title(driver)
    await driver.input_text("to be replaced")
    await driver.press_key("select_all")
    await driver.press_key("del")
    assert title(sim_device) == ""


@pytest.mark.parametrize("sim_device", [get_profile("android-10").replace(adb_keyboard=True)], indirect=True)
async def test_11_select_all_on_android_10_through_the_adb_keyboard(sim_device: Any) -> None:
    await clear_with_select_all(sim_device, adb_driver(sim_device))


@pytest.mark.parametrize("sim_device", ["android-10"], indirect=True)
async def test_11_select_all_on_android_10_through_u2_or_a_clear_error(sim_device: Any) -> None:
    driver = u2_driver(sim_device)
    await clear_with_select_all(sim_device, driver)
    await driver.close()
    plain = adb_driver(sim_device)
    await plain.connect()
    with pytest.raises(DeviceCommandError, match="no `input keycombination` .* and no ADB Keyboard"):
        await plain.press_key("select_all")


@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_11_press_key_takes_an_android_key_code(kind: str, sim_device: Any) -> None:
    """Seed 002's ``press_key(keycode: int)``: 4 is BACK and 3 HOME; a code we have no name for goes
    to the phone as it is."""
    driver = adb_driver(sim_device) if kind == "adb" else u2_driver(sim_device)
    await driver.connect()
    sim_device.phone.start_app(SETTINGS)
    ui = await AndroidStateProvider(driver).get_state()
    await driver.tap(*next(c for c in ui.elements if c.label == "Wi-Fi").bounds.center)
    assert sim_device.phone.current_screen() == "wifi"
    await driver.press_key(4)
    assert (sim_device.phone.current_app().package, sim_device.phone.current_screen()) == (SETTINGS, "main")
    await driver.press_key(285)  # KEYCODE_REFRESH: the emulated phone has nothing to refresh
    await driver.press_key(3)
    assert sim_device.phone.current_app().package == LAUNCHER
    await driver.close()


# -- 11. Xiaomi refuses injected input until "USB debugging (Security settings)" is on ------------------------------


@pytest.mark.parametrize("sim_device", ["xiaomi-13"], indirect=True)
@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_11_xiaomi_refusing_input_says_which_switch_to_turn_on(sim_device: Any, kind: str) -> None:
    driver = adb_driver(sim_device) if kind == "adb" else u2_driver(sim_device)
    await driver.connect()
    try:
        with pytest.raises(DeviceCommandError, match=r"tap: .*turn on 'USB debugging \(Security settings\)'"):
            await driver.tap(540, 1200)
    finally:
        await driver.close()


# -- uiautomator2 and the global adb client ---------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
async def test_u2_reconnects_through_our_adb_server_and_starts_none_on_5037(sim_device: Any) -> None:
    if server_answers(5037):
        pytest.skip("an adb server already listens on 5037: this test cannot tell one started by uiautomator2")
    driver = u2_driver(sim_device)
    await driver.connect()
    device = await asyncio.to_thread(driver._u2._wait_for_device, 5)  # uiautomator2's reconnect path
    assert device.serial == sim_device.serial and device.shell("echo ok") == "ok"
    assert not server_answers(5037)
    await driver.close()


# -- a phone gone in the middle of a command is a lost phone -------------------------------------------------


@pytest.mark.parametrize(("make", "hung"), [(adb_driver, "screencap"), (u2_driver, "takeScreenshot")])
async def test_a_phone_gone_mid_screenshot_is_a_lost_phone_not_a_failed_command(
        sim_device: Any, make: Any, hung: str) -> None:
    """adbd dies while the screenshot is on its way (a killed adbd, a pulled cable): the adb server
    only ends the stream, so the screenshot comes back empty or cut off. That is a phone lost."""
    driver = make(sim_device)
    await driver.connect()
    try:
        sim_device.adbd.hang(hung)
        shot = asyncio.create_task(driver.screenshot())
        assert await asyncio.to_thread(sim_device.adbd.device.faults.wait_hung, hung, 60.0)  # 60 s: a hang guard
        sim_device.adbd.disconnect(refuse_seconds=3600)  # gone, and it does not come back
        with pytest.raises(DeviceDisconnectedError):
            await shot
    finally:
        await driver.close()

