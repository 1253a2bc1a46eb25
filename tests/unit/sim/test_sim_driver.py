"""SimDriver: the async device port over SimPhone."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError
from ufo_mobile.sim.phone.simphone import SimPhone

OPERATIONS = {"connect", "ensure_connected", "close", "tap", "long_press", "swipe", "drag", "input_text",
              "press_key", "start_app", "install_app", "list_packages", "get_apps", "screenshot",
              "get_ui_tree", "get_date", "current_app", "screen_size"}


def test_supported_operations_are_implemented() -> None:
    assert SimDriver.supported == OPERATIONS
    for name in OPERATIONS:
        method = getattr(SimDriver, name)
        assert inspect.iscoroutinefunction(method)
        assert method is not getattr(DeviceDriver, name) or name == "close"


async def test_wifi_through_the_driver() -> None:
    driver = SimDriver()
    await driver.connect()
    assert driver.serial == "sim"
    assert await driver.screen_size() == (1080, 2400)
    assert AppInfo("com.android.settings", "Settings") in await driver.get_apps()
    assert "com.example.notes" in await driver.list_packages()
    await driver.start_app("com.android.settings", "wifi")
    assert await driver.current_app() == CurrentApp("com.android.settings",
                                                    "com.android.settings.Settings$WifiSettingsActivity")
    xml, png = await asyncio.gather(driver.get_ui_tree(), driver.screenshot())
    assert 'text="Use Wi-Fi"' in xml and png.startswith(b"\x89PNG")
    await driver.tap(540, 352)
    assert driver.phone.state("com.android.settings")["wifi"] is True
    await driver.press_key("KEYCODE_HOME")
    assert (await driver.current_app()).package == "com.android.launcher3"
    assert await driver.get_date() == "Wed Jan 15 09:41:00 UTC 2025"
    await driver.close()


async def test_typing_and_keys() -> None:
    driver = SimDriver(SimPhone())
    await driver.start_app("com.google.android.apps.messaging")
    await driver.swipe(800, 2200, 800, 2200, 50)  # the "Start chat" button, a tap
    await driver.input_text("Mom")
    await driver.press_key("enter")
    await driver.long_press(100, 100)
    await driver.drag(540, 1500, 540, 1400)
    assert driver.phone.state("com.google.android.apps.messaging")["to"] == "Mom"
    with pytest.raises(DeviceCommandError, match="unknown key"):
        await driver.press_key("hyperspace")
    with pytest.raises(DeviceCommandError, match="not installed"):
        await driver.start_app("com.example.absent")
    await driver.start_app("com.android.settings")
    with pytest.raises(DeviceCommandError):
        await driver.input_text("x")


async def test_install_app(tmp_path: Path) -> None:
    path = tmp_path / "mini.yaml"
    path.write_text("package: com.example.mini\nlabel: Mini\nstart: main\n"
                    "screens: {main: {title: Mini}}\n", encoding="utf-8")
    driver = SimDriver()
    await driver.install_app(str(path))
    assert AppInfo("com.example.mini", "Mini") in await driver.get_apps()


async def test_latency_makes_calls_slow_enough_to_time_out() -> None:
    driver = SimDriver(latency=3600)  # far longer than any run: only the caller's timeout can end the call
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await driver.tap(1, 1)
    fast = SimDriver(latency=0.0)
    async with asyncio.timeout(60):  # a hang guard only (the tap runs on a worker thread, so it suspends)
        await fast.tap(1, 1)


async def test_closed_driver_refuses_until_reconnected() -> None:
    driver = SimDriver()
    await driver.close()
    await driver.close()
    with pytest.raises(DeviceDisconnectedError):
        await driver.get_ui_tree()
    await driver.ensure_connected()
    assert (await driver.get_ui_tree()).startswith("<?xml")


def test_negative_latency_is_rejected() -> None:
    with pytest.raises(ValueError):
        SimDriver(latency=-1)


async def test_driver_long_press_is_long_whatever_the_duration(tmp_path: Path) -> None:
    path = tmp_path / "press.yaml"
    path.write_text("package: com.example.press\nlabel: Press\nstart: main\nstate: {held: false}\n"
                    "screens:\n  main:\n    body:\n      - {class: android.widget.Button, text: Hold,\n"
                    "         on_long_press: {set: {var: held, value: true}}}\n", encoding="utf-8")
    driver = SimDriver()
    await driver.install_app(str(path))
    await driver.start_app("com.example.press")
    await driver.long_press(540, 84 + 168 + 66, duration_ms=100)
    assert driver.phone.state("com.example.press")["held"] is True
