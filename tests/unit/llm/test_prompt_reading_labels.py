"""A reply written for one phone's numbering, read on another's: each numbered control named by its
label (the first text on it or inside it, and which of the controls showing it), and a label found as
the first part of an iPhone's joined row label."""

from __future__ import annotations

import pytest

from ufo_mobile.core.llm.prompt_reading import LabelError, by_label, label_of, number_for, parse_screen, shows

ANDROID = """1 TextView "Settings"
2 RecyclerView scroll [0,300,1080,2400]
  3 LinearLayout click @540,400
    4 TextView "Wi-Fi"
    5 TextView "Off"
  6 LinearLayout click @540,600
    7 TextView "Bluetooth"
  8 Switch "Wi-Fi" click check=off @900,800
9 EditText hint="Search settings" edit @540,1000
10 ImageButton click @100,100
"""
IPHONE = """1 StaticText "Settings"
2 Table scroll [0,273,1179,2484]
  3 Cell "Wi-Fi" desc="Off" click @589,376
  4 Cell "Bluetooth, Off" click @589,579
  5 Switch "Wi-Fi" click check=off @1000,700
6 SearchField hint="Search settings" edit @589,900
"""


def test_a_number_becomes_the_label_that_gives_it_back() -> None:
    controls = parse_screen(ANDROID)
    assert label_of(controls, 3) == {"label": "Wi-Fi"}  # a row: the first text inside it
    assert label_of(controls, 8) == {"label": "Wi-Fi", "nth": 2}  # the second control showing it
    assert label_of(controls, 9) == {"label": "Search settings"}  # a field: its hint
    assert label_of(controls, 10) is None and label_of(controls, 99) is None  # nothing names it
    for index in (3, 6, 8, 9):
        marker = label_of(controls, index)
        assert marker is not None and number_for(controls, marker["label"], marker.get("nth", 1)) == index


def test_a_reply_by_label_finds_the_same_controls_on_an_iphone() -> None:
    reply = {"status": "CONTINUE", "actions": [
        {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}},
        {"name": "click", "args": {"index": 6, "text": "Bluetooth"}},
        {"name": "type", "args": {"index": 9, "text": "dark"}},
        {"name": "click", "args": {"index": 10}}]}
    named = by_label(reply, parse_screen(ANDROID))
    assert [a["args"]["index"] for a in named["actions"]] == [
        {"label": "Wi-Fi"}, {"label": "Bluetooth"}, {"label": "Search settings"}, 10]  # 10: nothing to name it by
    iphone = parse_screen(IPHONE)
    assert [number_for(iphone, a["args"]["index"]["label"]) for a in named["actions"][:3]] == [3, 4, 6]
    assert reply["actions"][0]["args"]["index"] == 3  # the script's own reply is left as it was


def test_a_label_as_the_first_part_of_a_joined_one_and_exact_first() -> None:
    iphone = parse_screen(IPHONE)
    assert number_for(iphone, "Bluetooth") == 4  # "Bluetooth, Off": the row iOS labels with both texts
    assert number_for(iphone, "Wi-Fi") == 3  # an exact label wins over a first part
    shows(iphone, "Bluetooth")
    with pytest.raises(LabelError):
        number_for(iphone, "Blue")  # a first part ends at a comma, not anywhere
