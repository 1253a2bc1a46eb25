"""The uiautomator XML export: format, attribute order, escaping, Android's text conventions."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from lxml import etree

from ufo_mobile.sim.phone.hierarchy import PROLOG, escape, to_xml
from ufo_mobile.sim.phone.simphone import SimPhone

if TYPE_CHECKING:
    from conftest import Screen

REAL_DUMPS = Path(__file__).resolve().parents[4] / "shared" / "data" / "ui_dumps"
ORDER = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked",
         "clickable", "enabled", "focusable", "focused", "scrollable", "long-clickable", "password",
         "selected", "bounds", "drawing-order", "hint"]


def test_document_shape(phone: SimPhone) -> None:
    xml = phone.dump_hierarchy()
    assert xml.startswith(PROLOG + '<hierarchy rotation="0"><node index="0" ')
    assert xml.endswith("</hierarchy>") and "\n" not in xml
    root = etree.fromstring(xml.encode("utf-8"))
    first = root[0]
    assert first.get("class") == "android.widget.FrameLayout"
    assert first.get("bounds") == "[0,0][1080,2400]"
    assert {node.get("package") for node in root.iter("node")} == {"com.android.launcher3"}
    assert ElementTree.fromstring(xml).tag == "hierarchy"


def test_attribute_order_is_androids(phone: SimPhone) -> None:
    for node in etree.fromstring(phone.dump_hierarchy().encode("utf-8")).iter("node"):
        assert list(node.attrib) == ORDER
    legacy = etree.fromstring(to_xml(phone.snapshot(), modern=False).encode("utf-8"))
    assert list(legacy[0].attrib) == ORDER[:17]


def test_attribute_order_matches_a_real_dump(phone: SimPhone) -> None:
    dump = REAL_DUMPS / "hksmartcompanion__home_current.xml"
    if not dump.exists():
        pytest.skip("shared real dumps not available")
    real = etree.fromstring(dump.read_bytes())[0]
    ours = etree.fromstring(phone.dump_hierarchy().encode("utf-8"))[0]
    assert list(ours.attrib) == list(real.attrib)


def test_indexes_count_siblings(phone: SimPhone) -> None:
    phone.start_app("com.android.settings")
    for parent in etree.fromstring(phone.dump_hierarchy().encode("utf-8")).iter("node"):
        assert [child.get("index") for child in parent] == [str(i) for i in range(len(parent))]


def test_escaping_round_trips(phone: SimPhone, ui: Screen) -> None:
    text = 'a "quote" <tag> & \'apos\'\nnext line\ttab 😀 中文'
    phone.start_app("com.example.notes")
    ui.tap(desc="New note")
    ui.tap(text="Title")
    phone.input_text(text)
    raw = phone.dump_hierarchy()
    assert "&quot;quote&quot; &lt;tag&gt; &amp;" in raw and "&#10;next line&#9;tab" in raw
    assert ui.node(rid="title_field").get("text") == text
    parsed = ElementTree.fromstring(raw)
    assert any(node.get("text") == text for node in parsed.iter("node"))


def test_characters_xml_cannot_carry_become_question_marks() -> None:
    assert escape("a\x00b\x1bc\ud800") == "a?b?c?"
    assert escape("ok\r") == "ok&#13;"


def test_edit_text_reports_hint_focus_and_password(playground: SimPhone, ui: Screen) -> None:
    name = ui.node(rid="id/name")
    assert name.get("class") == "android.widget.EditText"
    assert (name.get("text"), name.get("hint"), name.get("focused")) == ("Your name", "Your name", "false")
    ui.tap(rid="id/secret")
    playground.input_text("hunter2")
    secret = ui.node(rid="id/secret")
    assert secret.get("password") == "true" and secret.get("focused") == "true"
    assert secret.get("text") == "\u2022" * 7
    assert playground.state("com.example.playground")["secret"] == "hunter2"


def test_scrollable_only_when_content_overflows(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.android.settings")
    assert ui.node(rid="recycler_view").get("scrollable") == "true"
    phone.start_app("com.android.settings", "about")
    assert ui.node(rid="recycler_view").get("scrollable") == "false"


def test_bounds_are_inside_parents_on_a_scrolled_list(phone: SimPhone) -> None:
    phone.start_app("com.android.contacts")
    phone.swipe(540, 1500, 540, 1163, 200)
    pattern = re.compile(r"\[(\d+),(\d+)\]\[(\d+),(\d+)\]")

    def box(node: etree._Element) -> tuple[int, ...]:
        found = pattern.fullmatch(node.get("bounds", ""))
        assert found is not None
        return tuple(int(v) for v in found.groups())

    for parent in etree.fromstring(phone.dump_hierarchy().encode("utf-8")).iter("node"):
        left, top, right, bottom = box(parent)
        for child in parent:
            c_left, c_top, c_right, c_bottom = box(child)
            assert left <= c_left < c_right <= right and top <= c_top < c_bottom <= bottom


def test_control_characters_are_kept_in_state_and_sanitised_in_xml(phone: SimPhone, ui: Screen) -> None:
    typed = "a\x00b\x1bc\ud800d"
    phone.start_app("com.example.notes", "edit")
    ui.tap(rid="title_field")
    phone.input_text(typed)
    assert phone.state("com.example.notes")["title"] == typed
    assert ui.node(rid="title_field").get("text") == "a?b?c?d"
    assert phone.screenshot_png().startswith(b"\x89PNG")
