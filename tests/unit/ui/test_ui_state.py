"""UIState: lookups, stale/unknown ids, tap points, coordinates, phone state."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from ufo_mobile.core.ui import build_ui_state
from ufo_mobile.core.ui.state import describe_ids
from ufo_mobile.errors import ElementNotFoundError, InvalidActionError, StaleObservationError, UIParseError

LoadDump = Callable[[str], bytes]

ROW_XML = """<hierarchy rotation="0">
<node class="android.widget.FrameLayout" package="com.example" bounds="[0,0][1000,2000]">
  <node class="android.widget.LinearLayout" package="com.example" clickable="true" bounds="[0,0][1000,200]">
    <node class="android.widget.TextView" package="com.example" text="Title" bounds="[20,20][300,80]"/>
    <node class="android.widget.TextView" package="com.example" text="Subtitle" bounds="[20,100][300,180]"/>
    <node class="android.widget.ImageButton" package="com.example" content-desc="Star" clickable="true"
          bounds="[400,0][600,200]"/>
  </node>
  <node class="android.widget.Button" package="com.example" text="Covered" clickable="true"
        bounds="[0,300][100,400]">
    <node class="android.view.View" package="com.example" clickable="true" bounds="[0,300][100,400]"
          content-desc="Inner"/>
  </node>
  <node class="android.widget.EditText" package="com.example" text="hello" focused="true" focusable="true"
        clickable="true" bounds="[0,500][1000,600]"/>
</node></hierarchy>"""


def test_resolve_checks_the_observation_and_the_id() -> None:
    ui = build_ui_state(ROW_XML, observation_id="obs-1")
    assert ui.resolve(1, "obs-1") is ui.elements[0]
    with pytest.raises(StaleObservationError, match="obs-0"):
        ui.resolve(1, "obs-0")
    with pytest.raises(ElementNotFoundError, match=r"valid ids: 1-\d+") as info:
        ui.resolve(99, "obs-1")
    assert "99" in str(info.value)
    with pytest.raises(ElementNotFoundError):
        ui.get_control(0)
    assert ui.get_element(0) is None  # seed 002's lookup: None, no exception
    assert ui.get_element(1) == ui.get_element_info(1) and ui.get_element(1)["index"] == 1


def test_describe_ids_compresses_ranges() -> None:
    assert describe_ids([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10"
    assert describe_ids([]).startswith("none")
    assert describe_ids(list(range(1, 100, 2)), limit=3) == "1, 3, 5, ..."


def test_clear_point_avoids_a_clickable_child_over_the_centre() -> None:
    ui = build_ui_state(ROW_XML, observation_id="o")
    row = ui.elements[0]
    assert row.label == "" and ui.get_element_coords(row.index) == (500, 100)  # centre is the star
    x, y = ui.get_clear_point(row.index)
    assert row.bounds.contains_point(x, y) and not (400 <= x < 600)
    star = [c for c in ui.elements if c.label == "Star"][0]
    assert ui.get_clear_point(star.index) == ui.get_element_coords(star.index)


def test_clear_point_falls_back_to_the_centre_when_fully_covered() -> None:
    ui = build_ui_state(ROW_XML, observation_id="o")
    covered = [c for c in ui.elements if c.label == "Covered"][0]
    assert ui.get_clear_point(covered.index) == (50, 350)


def test_convert_point_from_normalized() -> None:
    ui = build_ui_state(ROW_XML, observation_id="o", screen_size=(1000, 2000))
    assert ui.convert_point(500, 500) == (500, 1000)
    assert ui.convert_point(0, 0) == (0, 0)
    assert ui.convert_point(1000, 1000) == (999, 1999)
    with pytest.raises(InvalidActionError):
        ui.convert_point(1001, 5)


def test_phone_state_and_focused_text() -> None:
    ui = build_ui_state(ROW_XML, observation_id="o", current_app="com.example")
    assert ui.focused_text == "hello"
    assert ui.phone_state["current_app"] == "com.example"
    assert ui.phone_state["keyboard_shown"] is False
    focused = ui.phone_state["focused_element"]
    assert focused["class"] == "android.widget.EditText" and focused["editable"]
    assert f"focused control {focused['index']}." in ui.formatted_text
    json.dumps(ui.phone_state)


def test_element_info_is_json_ready(load_dump: LoadDump) -> None:
    ui = build_ui_state(load_dump("hksmartcompanion__home_current.xml"), observation_id="o")
    info = ui.get_element_info(3)
    assert json.loads(json.dumps(info)) == info
    assert (info["text"], info["checked"], info["kind"]) == ("Precise", True, "toggle")
    assert info["center"] == [327, 1175]


def test_build_is_pure_and_reports_bad_dumps(load_dump: LoadDump) -> None:
    raw = load_dump("phoneagent__wd2.xml")
    a = build_ui_state(raw, observation_id="o")
    b = build_ui_state(raw, observation_id="o")
    assert a.formatted_text == b.formatted_text and a.phone_state == b.phone_state
    assert [c.bounds for c in a.elements] == [c.bounds for c in b.elements]
    with pytest.raises(UIParseError):
        build_ui_state(raw[:1000], observation_id="o")


def test_screen_without_controls() -> None:
    xml = ('<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" '
           'bounds="[0,0][720,1280]"/></hierarchy>')
    ui = build_ui_state(xml, observation_id="o")
    assert ui.elements == [] and "(no controls on screen)" in ui.formatted_text
    with pytest.raises(ElementNotFoundError, match="none"):
        ui.get_control(1)
    assert ui.get_element(1) is None


KEYBOARD_OVER = """<?xml version="1.0" encoding="UTF-8"?>
<hierarchy rotation="0">
<node index="0" text="" class="android.widget.FrameLayout" package="com.example.app" bounds="[0,0][1080,2400]">
  <node index="0" text="Name" class="android.widget.EditText" package="com.example.app" clickable="true"
        focused="true" bounds="[0,300][1080,400]" />
  <node index="1" text="Send" class="android.widget.Button" package="com.example.app" clickable="true"
        bounds="[0,2200][1080,2300]" />
</node>
<node index="0" text="" class="android.widget.FrameLayout" package="{ime}" bounds="[0,{top}][1080,2400]">
  <node index="0" text="q" class="android.widget.Button" package="{ime}" clickable="true" bounds="[0,1700][100,1800]" />
</node>
</hierarchy>"""


def test_what_a_keyboard_band_covers_is_not_offered() -> None:
    ui = build_ui_state(KEYBOARD_OVER.replace("{ime}", "com.apple.keyboard").replace("{top}", "1600"),
                        observation_id="k", screen_size=(1080, 2400))
    assert ui.phone_state["keyboard_shown"] is True
    assert '"Name"' in ui.formatted_text and '"Send"' not in ui.formatted_text  # a touch there types
    # a keyboard window as tall as most of the screen (some input methods' are) is not taken for a band
    tall = build_ui_state(KEYBOARD_OVER.replace("{ime}", "com.google.android.inputmethod.latin").replace("{top}", "0"),
                          observation_id="k", screen_size=(1080, 2400))
    assert '"Send"' in tall.formatted_text
