"""The drivers' own reading of dumps: window roots in stacking order, the focused field."""

from __future__ import annotations

import re

from ufo_mobile.core.device.uixml import FieldText, focused_field, order_roots, window_count

PROLOG = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n"


def root(package: str, bounds: str, inner: str = "") -> str:
    return (f'\r\n  <node index="0" text="" class="android.widget.FrameLayout" package="{package}" '
            f'bounds="{bounds}">{inner}</node>')


# what the u2 server gave: a HashSet's order (app, keyboard, status bar, an overlay nobody lists)
U2_DUMP = (PROLOG + '<hierarchy rotation="0">'
           + root("com.example.notes", "[0,0][1080,2400]",
                  '<node index="0" text="a &amp; b&#10;c" class="android.widget.EditText" package="com.example.notes"'
                  ' focused="true" password="false" resource-id="com.example.notes:id/title_field" />')
           + root("com.google.android.inputmethod.latin", "[0,1554][1080,2400]")
           + root("com.example.bubble", "[900,900][1000,1000]")
           + root("com.android.systemui", "[0,0][1080,84]")
           + "\r\n</hierarchy>")

WINDOWS = """\
WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #0 Window{1 u0 NavigationBar0}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
  Window #1 Window{2 u0 StatusBar}:
    mOwnerUid=10120 showForAllUsers=true package=com.android.systemui appop=NONE
  Window #2 Window{3 u0 InputMethod}:
    mOwnerUid=10133 showForAllUsers=false package=com.google.android.inputmethod.latin appop=NONE
  Window #3 Window{4 u0 com.example.notes/com.example.notes.EditNoteActivity}:
    mOwnerUid=10190 showForAllUsers=false package=com.example.notes appop=NONE
"""


def packages(xml: str) -> list[str]:
    return re.findall(r'^  <node index="0" [^>]*package="([^"]+)"', xml, re.M)


def test_roots_in_stacking_order_unknown_ones_in_place() -> None:
    ordered = order_roots(U2_DUMP, WINDOWS)
    assert packages(ordered) == ["com.android.systemui", "com.google.android.inputmethod.latin",
                                 "com.example.bubble", "com.example.notes"]
    assert ordered.startswith(PROLOG + '<hierarchy rotation="0">')
    assert focused_field(ordered) == FieldText("a & b\nc", False, "com.example.notes:id/title_field")
    assert order_roots(ordered, WINDOWS) == ordered  # already in order: untouched


def test_nothing_to_order() -> None:
    single = PROLOG + '<hierarchy rotation="0">' + root("com.example.notes", "[0,0][1080,2400]") + "</hierarchy>"
    assert order_roots(single, WINDOWS) == single
    assert order_roots(U2_DUMP, "") == U2_DUMP  # no window list: as the server gave it
    assert order_roots("not xml", WINDOWS) == "not xml"
    assert order_roots(PROLOG + "<hierarchy><node", WINDOWS) == PROLOG + "<hierarchy><node"
    assert (window_count(U2_DUMP), window_count(single), window_count("junk")) == (4, 1, 0)


def test_no_entity_is_expanded() -> None:
    bomb = ('<?xml version="1.0"?><!DOCTYPE h [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;">]>'
            '<hierarchy><node text="&b;" focused="true" class="android.widget.EditText" /></hierarchy>')
    field = focused_field(bomb)
    assert field is None or "aaaaaaaaaa" not in field.text


def test_focused_field_prefers_a_text_field() -> None:
    xml = ('<hierarchy><node index="0" class="android.widget.Button" text="OK" focused="true" />'
           '<node index="1" class="android.view.View" text="secret" editable="true" focused="true" password="true" />'
           "</hierarchy>")
    assert focused_field(xml) == FieldText("secret", True)
    assert focused_field('<hierarchy><node class="android.webkit.WebView" text="q" focused="true" /></hierarchy>') \
        == FieldText("q", False)
    assert focused_field('<hierarchy><node class="android.widget.EditText" text="x" focused="false" /></hierarchy>') \
        is None
