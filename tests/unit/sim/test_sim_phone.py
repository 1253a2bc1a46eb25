"""SimPhone flows driven only by coordinates read from the XML, as an agent drives a phone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from ufo_mobile.errors import DeviceCommandError
from ufo_mobile.sim.phone.simphone import SimPhone, fixed_clock

if TYPE_CHECKING:
    from conftest import Screen

SETTINGS = "com.android.settings"
MESSAGES = "com.google.android.apps.messaging"
NOTES = "com.example.notes"

HOSTILE = [
    "'; rm -rf / #",
    "$(reboot)",
    "`id`",
    '"quotes" and \'single\'',
    "line one\nline two",
    "%s %d %n",
    "emoji 😀👍🏽",
    "中文输入测试",
    "<b>&amp;</b> \\ back\\slash",
    "  leading and trailing  ",
    "{draft} {{x}}",
]


def test_wifi_flow_from_the_launcher(phone: SimPhone, ui: Screen) -> None:
    assert phone.current_app().package == "com.android.launcher3"
    ui.tap(text="Settings")
    ui.tap(text="Wi-Fi")
    switch = ui.node(text="Use Wi-Fi")
    assert switch.get("class") == "android.widget.Switch"
    assert switch.get("checked") == "false"
    assert ui.find(text="HomeNet") is None
    ui.tap(text="Use Wi-Fi")
    assert phone.state(SETTINGS)["wifi"] is True
    assert ui.node(text="Use Wi-Fi").get("checked") == "true"
    assert ui.find(text="HomeNet") is not None
    phone.press_key("back")
    assert "On" in ui.texts()


def test_wifi_switch_toggles_back_off(phone: SimPhone, ui: Screen) -> None:
    phone.start_app(SETTINGS, "wifi")
    ui.tap(text="Use Wi-Fi")
    ui.tap(text="Use Wi-Fi")
    assert phone.state(SETTINGS)["wifi"] is False
    assert ui.node(text="Use Wi-Fi").get("checked") == "false"


def test_bluetooth_switch(phone: SimPhone, ui: Screen) -> None:
    ui.tap(text="Settings")
    ui.tap(text="Bluetooth")
    ui.tap(text="Use Bluetooth")
    assert phone.state(SETTINGS)["bluetooth"] is True
    assert ui.node(text="Use Bluetooth").get("checked") == "true"
    assert ui.find(text="Pair new device") is not None


def test_airplane_mode_row_toggles_its_switch(phone: SimPhone, ui: Screen) -> None:
    ui.tap(text="Settings")
    ui.tap(text="Airplane mode")
    assert phone.state(SETTINGS)["airplane_mode"] is True
    switches = [n for n in ui.nodes() if n.get("class") == "android.widget.Switch"]
    assert [n.get("checked") for n in switches] == ["true"]


def test_brightness_follows_the_seekbar_tap_position(phone: SimPhone, ui: Screen) -> None:
    ui.tap(text="Settings")
    ui.tap(text="Display")
    seekbar = ui.node(cls="android.widget.SeekBar")
    left, top, right, bottom = ui.bounds(seekbar)
    inset = 48
    x = left + inset + (right - left - 2 * inset) // 4
    phone.tap(x, (top + bottom) // 2)
    assert phone.state(SETTINGS)["brightness"] == 25
    assert ui.find(text="Brightness 25%") is not None
    phone.swipe(x, (top + bottom) // 2, right - 10, (top + bottom) // 2, 400)
    assert phone.state(SETTINGS)["brightness"] == 100


def test_dark_theme_switch(phone: SimPhone, ui: Screen) -> None:
    phone.start_app(SETTINGS, "display")
    ui.tap(text="Dark theme")
    assert phone.state(SETTINGS)["dark_theme"] is True
    assert phone.snapshot().dark


def test_send_message_through_start_chat(phone: SimPhone, ui: Screen) -> None:
    ui.tap(text="Messages")
    ui.tap(text="Start chat")
    assert phone.focused_field() == "recipient_query"
    phone.input_text("dian")
    assert ui.find(text="Alice Johnson") is None
    ui.tap(text="Diana Prince")
    assert phone.current_screen() == "thread"
    ui.tap(cls="android.widget.EditText")
    phone.input_text("Lunch at noon?")
    ui.tap(desc="Send")
    assert phone.state(MESSAGES)["sent"] == [{"to": "Diana Prince", "text": "Lunch at noon?"}]
    assert ui.find(text="Lunch at noon?") is not None
    assert phone.state(MESSAGES)["draft"] == ""
    phone.press_key("back")
    assert phone.current_screen() == "conversations"
    assert "You: Lunch at noon?" in ui.texts()


def test_send_message_from_contacts(phone: SimPhone, ui: Screen) -> None:
    ui.tap(text="Contacts")
    ui.tap(text="Bob Smith")
    ui.tap(text="Message")
    assert phone.current_app().package == MESSAGES
    assert ui.find(text="Bob Smith") is not None
    ui.tap(text="Text message")
    phone.input_text("On my way")
    phone.press_key("enter")
    assert phone.state(MESSAGES)["sent"] == [{"to": "Bob Smith", "text": "On my way"}]
    phone.press_key("back")
    assert phone.current_app().package == "com.android.contacts"
    assert phone.current_screen() == "detail"


def test_empty_message_is_not_sent(phone: SimPhone, ui: Screen) -> None:
    phone.start_app(MESSAGES)
    ui.tap(text="Mom")
    ui.tap(desc="Send")
    assert phone.state(MESSAGES)["sent"] == []


def test_create_a_note(phone: SimPhone, ui: Screen) -> None:
    ui.tap(text="Notes")
    ui.tap(desc="New note")
    ui.tap(text="Title")
    phone.input_text("Groceries")
    ui.tap(text="Note")
    phone.input_text("Apples")
    phone.press_key("enter")
    phone.input_text("Pears")
    ui.tap(text="Save")
    assert phone.state(NOTES)["notes"][-1] == {"title": "Groceries", "body": "Apples\nPears"}
    assert phone.current_screen() == "list"
    ui.tap(text="Groceries")
    assert phone.current_screen() == "view"


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_stored_exactly(phone: SimPhone, ui: Screen, text: str) -> None:
    phone.start_app(NOTES)
    ui.tap(desc="New note")
    ui.tap(text="Title")
    phone.input_text(text)
    assert ui.node(rid="title_field").get("text") == text
    ui.tap(text="Save")
    assert phone.state(NOTES)["notes"][-1]["title"] == text


def test_scrolling_changes_rows_and_keeps_them_in_the_viewport(phone: SimPhone, ui: Screen) -> None:
    phone.start_app(SETTINGS)
    assert ui.find(text="About phone") is None
    listing = ui.node(rid="recycler_view")
    assert listing.get("scrollable") == "true"
    view_top, view_bottom = ui.bounds(listing)[1], ui.bounds(listing)[3]
    display_before = ui.bounds(ui.node(text="Display"))
    phone.swipe(540, 1800, 540, 1000, 300)
    display_after = ui.bounds(ui.node(text="Display"))
    assert display_after[1] == display_before[1] - 800
    assert ui.find(text="Wi-Fi") is None
    for _ in range(3):
        phone.swipe(540, 1800, 540, 600, 300)
    assert ui.find(text="About phone") is not None
    for row in ui.node(rid="recycler_view"):
        top, bottom = ui.bounds(row)[1], ui.bounds(row)[3]
        assert view_top <= top < bottom <= view_bottom
    at_end = phone.dump_hierarchy()
    phone.swipe(540, 1800, 540, 600, 300)
    assert phone.dump_hierarchy() == at_end
    ui.tap(text="About phone")
    assert phone.current_screen() == "about"


def test_contact_list_scrolls_to_the_last_contact(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.android.contacts")
    assert ui.find(text="Zoe Martin") is None
    for _ in range(4):
        phone.swipe(540, 2000, 540, 700, 300)
    ui.tap(text="Zoe Martin")
    assert phone.state("com.android.contacts")["contact_name"] == "Zoe Martin"


def test_back_and_home(phone: SimPhone, ui: Screen) -> None:
    phone.press_key("back")
    assert phone.current_app().package == "com.android.launcher3"
    ui.tap(text="Settings")
    ui.tap(text="Wi-Fi")
    phone.press_key("home")
    assert phone.current_app().package == "com.android.launcher3"
    ui.tap(text="Settings")
    assert phone.current_screen() == "wifi"
    ui.tap(desc="Navigate up")
    assert phone.current_screen() == "main"
    phone.press_key("KEYCODE_BACK")
    assert phone.current_app().package == "com.android.launcher3"
    phone.start_app(SETTINGS)
    assert phone.current_screen() == "main"


def test_start_app_with_activity_and_errors(phone: SimPhone) -> None:
    phone.start_app(SETTINGS, ".Settings$WifiSettingsActivity")
    assert phone.current_app().activity == "com.android.settings.Settings$WifiSettingsActivity"
    with pytest.raises(DeviceCommandError, match="not installed"):
        phone.start_app("com.example.nothing")
    with pytest.raises(DeviceCommandError, match="does not exist"):
        phone.start_app(SETTINGS, ".NoSuchActivity")


def test_typing_without_focus_fails(phone: SimPhone) -> None:
    phone.start_app(SETTINGS)
    with pytest.raises(DeviceCommandError, match="no text field has focus") as info:
        phone.input_text("hello")
    assert info.value.serial == "sim"


def test_editing_keys(phone: SimPhone, ui: Screen) -> None:
    phone.start_app(NOTES)
    ui.tap(desc="New note")
    ui.tap(text="Title")
    phone.input_text("Hello")
    phone.press_key("del")
    assert phone.state(NOTES)["title"] == "Hell"
    phone.input_text("Bye", clear=True)
    assert phone.state(NOTES)["title"] == "Bye"
    phone.press_key("select_all")
    phone.press_key("del")
    assert phone.state(NOTES)["title"] == ""
    with pytest.raises(DeviceCommandError, match="unknown key"):
        phone.press_key("warp_drive")


def test_enter_submits_the_recipient(phone: SimPhone, ui: Screen) -> None:
    phone.start_app(MESSAGES)
    ui.tap(text="Start chat")
    phone.input_text("+1 555 0199")
    phone.press_key(66)
    assert phone.current_screen() == "thread"
    assert phone.state(MESSAGES)["to"] == "+1 555 0199"
    phone.press_key("back")
    assert phone.current_screen() == "conversations"


def test_tap_on_nothing_does_nothing(phone: SimPhone) -> None:
    phone.start_app(SETTINGS, "wifi")
    before = phone.dump_hierarchy()
    phone.tap(540, 2300)
    phone.tap(540, 10)
    phone.tap(-5, 99999)
    assert phone.dump_hierarchy() == before
    assert phone.state(SETTINGS)["wifi"] is False


def test_long_press_and_zero_length_swipe(playground: SimPhone, ui: Screen) -> None:
    x, y = ui.center(ui.node(text="Press me"))
    playground.long_press(x, y)
    assert playground.state("com.example.playground")["long"] is True
    playground.tap(x, y)
    assert playground.state("com.example.playground")["long"] is False
    playground.swipe(x, y, x, y, 600)
    assert playground.state("com.example.playground")["long"] is True
    playground.swipe(x, y, x, y, 100)
    assert playground.state("com.example.playground")["long"] is False


def test_disabled_views_ignore_taps(playground: SimPhone, ui: Screen) -> None:
    assert ui.node(text="Disabled").get("enabled") == "false"
    ui.tap(text="Disabled")
    assert playground.state("com.example.playground")["long"] is False


def test_launching_a_missing_app_shows_a_toast(playground: SimPhone, ui: Screen) -> None:
    ui.tap(text="Open missing")
    assert playground.current_app().package == "com.example.playground"
    assert playground.snapshot().toast == "App not installed"


def test_state_is_a_copy(phone: SimPhone) -> None:
    phone.state(SETTINGS)["networks"].clear()
    assert len(phone.state(SETTINGS)["networks"]) == 4


def test_clock_is_injectable(ui: Screen, screen_of: Callable[[SimPhone], Screen]) -> None:
    phone = SimPhone(clock=fixed_clock(datetime(2030, 7, 4, 18, 5, 9, tzinfo=UTC)))
    assert phone.date() == "Thu Jul  4 18:05:09 UTC 2030"
    assert screen_of(phone).find(text="18:05") is not None
    assert ui.find(text="09:41") is not None


def test_deterministic_for_the_same_actions(screen_of: Callable[[SimPhone], Screen]) -> None:
    outputs = []
    for _ in range(2):
        phone = SimPhone()
        screen = screen_of(phone)
        screen.tap(text="Settings")
        screen.tap(text="Wi-Fi")
        screen.tap(text="Use Wi-Fi")
        outputs.append((phone.dump_hierarchy(), phone.screenshot_png()))
    assert outputs[0] == outputs[1]


def test_other_screen_sizes(screen_of: Callable[[SimPhone], Screen]) -> None:
    phone = SimPhone(width=720, height=1600)
    screen = screen_of(phone)
    assert screen.bounds(screen.nodes()[0]) == (0, 0, 720, 1600)
    screen.tap(text="Settings")
    screen.tap(text="Wi-Fi")
    screen.tap(text="Use Wi-Fi")
    assert phone.state(SETTINGS)["wifi"] is True
    assert phone.screen_size() == (720, 1600)
