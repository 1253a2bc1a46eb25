"""The emulated phone's ``input keyevent`` takes every key of Android's ``KeyEvent`` by name, short
name or number (``core.keycodes``), and does what a phone does for the keys that show: a character
key types into the focused field, DPAD_CENTER clicks the focused view, ESCAPE falls back to BACK."""

from __future__ import annotations

import pytest

from tests.unit.sim.test_ime_install import focused_notes
from tests.unit.sim.test_profile import NOTES, device_with, run
from ufo_mobile.core import keycodes
from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.phone.simphone import LAUNCHER


def title(device: DeviceState) -> str:
    return str(device.phone.state(NOTES)["title"] or "")


async def test_every_key_name_and_number_is_accepted() -> None:
    device = device_with()
    names = " ".join(keycodes.NAMES[1:])
    assert (await run(device, f"input keyevent {names}"))[0] == 0
    numbers = " ".join(str(code) for code in range(keycodes.LAST_KEYCODE + 1))
    assert (await run(device, f"input keyevent {numbers}"))[0] == 0
    short = "NOTIFICATION PAGE_DOWN DPAD_CENTER ESCAPE WAKEUP A F24"
    assert (await run(device, f"input keyevent {short}"))[0] == 0


@pytest.mark.parametrize("key", ["KEYCODE_DPAD_CENTRE", "KEYCODE_F25", "338", "NOPE", "dpad_center", "keycode_a"])
async def test_what_is_no_key_fails(key: str) -> None:
    """Android looks names up exactly: lower case is no key there."""
    status, _, err = await run(device_with(), f"input keyevent {key}")
    assert status != 0 and f"Unknown keycode {key}" in err


async def test_letter_keys_type_into_the_focused_field() -> None:
    device = focused_notes(device_with())
    assert (await run(device, "input keyevent KEYCODE_A B 31 KEYCODE_SPACE KEYCODE_1"))[0] == 0
    assert title(device) == "abc 1"


async def test_dpad_center_clicks_the_focused_field_and_shows_the_hidden_keyboard() -> None:
    device = focused_notes(device_with("pixel-14"))
    assert device.phone.keyboard_shown()
    device.phone.hide_keyboard()
    assert not device.phone.keyboard_shown()
    assert (await run(device, "input keyevent KEYCODE_DPAD_CENTER"))[0] == 0
    assert device.phone.keyboard_shown() and device.phone.focused_field() == "title"


async def test_dpad_center_without_a_focused_field_does_nothing() -> None:
    device = device_with()
    before = device.phone.current_app()
    assert (await run(device, "input keyevent 23"))[0] == 0
    assert device.phone.current_app() == before


async def test_escape_goes_back_as_its_fallback_does() -> None:
    device = device_with()
    device.phone.start_app(NOTES)
    assert device.phone.current_app().package == NOTES
    assert (await run(device, "input keyevent KEYCODE_ESCAPE"))[0] == 0
    assert device.phone.current_app().package == LAUNCHER
