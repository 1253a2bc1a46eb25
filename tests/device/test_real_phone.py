"""The driver checks of tests/integration, on a real phone named by ANDROID_SERIAL.

They only read the screen, press HOME/BACK, open Settings, and type into the Settings search field;
nothing is changed on the phone.
"""

from __future__ import annotations

import os

import pytest

from ufo_mobile.core.device.adb import AdbDriver, label_for
from ufo_mobile.core.device.adb_text import NO_INPUT_METHOD
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.u2 import U2Driver
from ufo_mobile.core.ui.screenshot import png_size
from ufo_mobile.core.ui.state import build_ui_state
from ufo_mobile.errors import DeviceCommandError, DumpUnavailableError

pytestmark = pytest.mark.device

SETTINGS = "com.android.settings"


async def make(kind: str) -> DeviceDriver:
    serial = os.environ["ANDROID_SERIAL"]
    driver: DeviceDriver = AdbDriver(serial) if kind == "adb" else U2Driver(serial)
    await driver.connect()
    return driver


@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_observe(kind: str) -> None:
    driver = await make(kind)
    width, height = await driver.screen_size()
    png = await driver.screenshot()
    assert png_size(png) in ((width, height), (height, width))
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="d", screen_size=png_size(png))
    assert ui.elements, ui.formatted_text
    assert (await driver.current_app()).package
    assert await driver.get_date()
    assert SETTINGS in await driver.list_packages()


@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_open_settings_and_go_home(kind: str) -> None:
    driver = await make(kind)
    await driver.start_app(SETTINGS)
    assert (await driver.current_app()).package == SETTINGS
    await driver.press_key("home")
    assert (await driver.current_app()).package != SETTINGS


@pytest.mark.parametrize("kind", ["adb", "u2"])
@pytest.mark.parametrize("text", ["wifi", "a'b\"c;d$(e)`f`", "蓝牙 🙂"])
async def test_typing_into_settings_search(kind: str, text: str) -> None:
    driver = await make(kind)
    await driver.start_app(SETTINGS)
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="s")
    search = next((c for c in ui.elements if "search" in (c.label + c.description + c.node.resource_id).lower()),
                  None)
    if search is None:
        pytest.skip("this Settings app shows no search field on its first screen")
    await driver.tap(*search.center)
    try:
        await driver.input_text(text, clear=True)
    except DeviceCommandError as exc:
        if NO_INPUT_METHOD in str(exc):
            pytest.skip("plain adb types non-ASCII only through an input method this phone lacks")
        raise
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="t")
    assert any(text in c.label for c in ui.elements if c.editable), ui.formatted_text
    keyboard = await driver.keyboard_state()
    if keyboard.shown:
        assert keyboard.frame is not None and keyboard.frame[1] > 0
    await driver.press_key("back")
    await driver.press_key("home")
    await driver.close()


@pytest.mark.parametrize("kind", ["adb", "u2"])
async def test_launchable_apps_carry_their_labels(kind: str) -> None:
    driver = await make(kind)
    apps = await driver.get_apps()
    assert SETTINGS in {app.package for app in apps}
    assert len(apps) < len(await driver.list_packages())  # launchable ones only
    read = [app for app in apps if app.label != label_for(app.package)]
    assert len(read) >= len(apps) // 2, apps  # labels from the APKs, not guessed from package names
    await driver.close()


async def test_closing_u2_leaves_uiautomator_dump_working() -> None:
    u2_driver = await make("u2")
    await u2_driver.get_ui_tree()
    await u2_driver.close()
    adb = await make("adb")
    for _ in range(3):  # a refusal for an animation is fine; a conflict with a server left running is not
        try:
            assert "<hierarchy" in await adb.get_ui_tree()
            break
        except DumpUnavailableError as exc:
            assert exc.kind != "conflict", exc
