"""The driver checks of tests/integration, on a real phone named by ANDROID_SERIAL.

They only read the screen, press HOME/BACK, open Settings, and type into the Settings search field;
nothing is changed on the phone.
"""

from __future__ import annotations

import os

import pytest

from ufo_mobile.device.adb import AdbDriver, typeable_with_input_text
from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.device.u2 import U2Driver
from ufo_mobile.processors.data_collection import png_size
from ufo_mobile.ui.state import build_ui_state

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
    if kind == "adb" and not typeable_with_input_text(text):
        pytest.skip("plain adb types non-ASCII only through the ADB Keyboard IME")
    await driver.start_app(SETTINGS)
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="s")
    search = next((c for c in ui.elements if "search" in (c.label + c.description + c.node.resource_id).lower()),
                  None)
    if search is None:
        pytest.skip("this Settings app shows no search field on its first screen")
    await driver.tap(*search.center)
    await driver.input_text(text, clear=True)
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="t")
    assert any(text in c.label for c in ui.elements if c.editable), ui.formatted_text
    await driver.press_key("back")
    await driver.press_key("home")
