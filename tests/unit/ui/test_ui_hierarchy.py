"""Parsing uiautomator dumps into UITree / UINode."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from lxml import etree

from ufo_mobile.core.ui import Bounds, parse_hierarchy
from ufo_mobile.errors import UIParseError

LoadDump = Callable[[str], bytes]

SMALL = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="3">
  <node index="0" text="" class="android.widget.FrameLayout" package="com.example" bounds="[0,0][1080,1920]">
    <node index="0" text="Tom &amp; Jerry&#10;line 2" resource-id="com.example:id/title"
          class="android.widget.TextView" package="com.example" content-desc="" hint="Name"
          checkable="true" checked="true" clickable="false" long-clickable="true" enabled="false"
          focusable="true" focused="true" scrollable="true" password="true" selected="true"
          NAF="true" drawing-order="2" display-id="0" bounds="[10,20][110,220]" />
    <node index="1" text="" class="android.view.View" package="com.example" drawing-order="1"
          bounds="[0,0][5,5]" />
  </node>
</hierarchy>"""


def test_every_corpus_dump_parses(dump_name: str, load_dump: LoadDump) -> None:
    raw = load_dump(dump_name)
    tree = parse_hierarchy(raw)
    assert len(tree.nodes) == raw.count(b"<node ")
    assert [n.order for n in tree.nodes] == list(range(len(tree.nodes)))
    assert tree.roots and all(root.parent == -1 and root.depth == 0 for root in tree.roots)
    assert tree.rotation in (0, 1, 2, 3)
    for node in tree.nodes:
        for child in node.children:
            assert tree.parent(child) is node and child.depth == node.depth + 1
            assert node.contains_node(child) and child.z > node.z


def test_str_and_bytes_give_the_same_tree(load_dump: LoadDump) -> None:
    raw = load_dump("avito__first_screen.xml")
    a, b = parse_hierarchy(raw), parse_hierarchy(raw.decode("utf-8"))
    assert [(n.text, n.bounds, n.z) for n in a.nodes] == [(n.text, n.bounds, n.z) for n in b.nodes]


def test_pretty_and_one_line_dumps_are_equivalent(load_dump: LoadDump) -> None:
    raw = load_dump("futu-graber__87112bc_window_dump.xml")  # one line as dumped
    pretty = etree.tostring(etree.fromstring(raw), pretty_print=True, encoding="utf-8")
    assert pretty.count(b"\n") > 50
    a, b = parse_hierarchy(raw), parse_hierarchy(pretty)
    assert [(n.class_name, n.text, n.bounds) for n in a.nodes] == [
        (n.class_name, n.text, n.bounds) for n in b.nodes]


def test_bom_and_dumped_to_trailer_are_tolerated(load_dump: LoadDump) -> None:
    raw = load_dump("ask-amo__models_ui-dump.xml")
    assert raw.startswith(b"\xef\xbb\xbf") and raw.rstrip().endswith(b"/dev/tty")
    assert len(parse_hierarchy(raw).nodes) == 216


def test_multi_window_dump_has_one_root_per_window(load_dump: LoadDump) -> None:
    tree = parse_hierarchy(load_dump("avito__first_screen.xml"))
    assert [(r.package, r.window) for r in tree.roots] == [
        ("com.android.systemui", 0), ("com.avito.android", 1)]
    status_bar, app = tree.roots
    # the first window is the top one: everything in it paints after the app window
    assert min(n.z for n in status_bar.iter()) > max(n.z for n in app.iter())
    assert all(n.window == 1 for n in app.iter())


def test_attributes_flags_and_entities() -> None:
    tree = parse_hierarchy(SMALL)
    assert tree.rotation == 3
    node = tree.nodes[1]
    assert node.text == "Tom & Jerry\nline 2"
    assert (node.resource_id, node.resource_name, node.short_class) == (
        "com.example:id/title", "title", "TextView")
    assert node.hint == "Name" and node.naf and node.drawing_order == 2 and node.display_id == 0
    assert all([node.checkable, node.checked, node.long_clickable, node.focusable, node.focused,
                node.scrollable, node.password, node.selected])
    assert not node.clickable and not node.enabled
    assert node.bounds == Bounds(10, 20, 110, 220)
    # drawing-order 1 paints before drawing-order 2 although it comes later in the document
    assert tree.nodes[2].z < tree.nodes[1].z


def test_display_wrappers_and_display_ids() -> None:
    xml = ('<hierarchy rotation="0"><display id="2"><node class="a.B" bounds="[0,0][10,10]">'
           '<node class="a.C" bounds="[0,0][5,5]"/></node></display>'
           '<node class="a.D" display-id="1" bounds="[0,0][10,10]"/></hierarchy>')
    tree = parse_hierarchy(xml)
    assert [n.display_id for n in tree.nodes] == [2, 2, 1]
    assert [r.class_name for r in tree.roots] == ["a.B", "a.D"]


def test_bounds_helpers() -> None:
    a, b = Bounds(0, 0, 100, 50), Bounds(50, 25, 150, 75)
    assert (a.width, a.height, a.area, a.center) == (100, 50, 5000, (50, 25))
    assert a.intersect(b) == Bounds(50, 25, 100, 50)
    assert a.intersect(Bounds(100, 0, 200, 50)) is None  # edges touch, no overlap
    assert a.contains(Bounds(10, 10, 20, 20)) and not a.contains(b)
    assert a.contains_point(0, 0) and not a.contains_point(100, 10)
    assert a.union(b) == Bounds(0, 0, 150, 75)
    assert Bounds.parse("[1,2][3,4]") == Bounds(1, 2, 3, 4)
    assert Bounds.parse("garbage").is_empty


MALFORMED: dict[str, str | bytes] = {
    "empty": "",
    "whitespace": "  \n ",
    "no nodes": "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"/>",
    "no nodes with trailer": '<hierarchy rotation="0"/>UI hierchary dumped to: /dev/tty',
    "null root": "ERROR: null root node returned by UiTestAutomationBridge.",
    "idle error": "ERROR: could not get idle state.",
    "null": "null",
    "binary": bytes(range(256)) * 4,
    "png": b"\x89PNG\r\n\x1a\n" + bytes(100),
    "not a dump": "<html><body>hello</body></html>",
    "wrong root": '<hierarchy rotation="0"><node class="a" bounds="[0,0][1,1]"></hierarchy>',
    "doctype entity": ('<?xml version="1.0"?><!DOCTYPE h [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                       '<hierarchy><node text="&x;" bounds="[0,0][1,1]"/></hierarchy>'),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_raises_uiparseerror(case: str) -> None:
    with pytest.raises(UIParseError) as info:
        parse_hierarchy(MALFORMED[case])
    assert str(info.value)  # says what was wrong


def test_truncated_real_dump_raises(load_dump: LoadDump) -> None:
    raw = load_dump("phoneagent__wd.xml")
    with pytest.raises(UIParseError, match="truncated"):
        parse_hierarchy(raw[: len(raw) // 2])


def test_error_messages_are_specific() -> None:
    with pytest.raises(UIParseError, match="empty hierarchy"):
        parse_hierarchy('<hierarchy rotation="0"/>')
    with pytest.raises(UIParseError, match="uiautomator reported an error"):
        parse_hierarchy(MALFORMED["null root"])
    with pytest.raises(UIParseError, match="no <hierarchy>"):
        parse_hierarchy(MALFORMED["binary"])


def test_a_failed_parse_leaves_nothing_behind_and_threads_parse_apart() -> None:
    with pytest.raises(UIParseError, match="malformed"):
        parse_hierarchy('<hierarchy rotation="1"><node class="a.B" bounds="[0,0][9,9]"><node></hierarchy>')
    assert [n.class_name for n in parse_hierarchy(SMALL).nodes] == [
        "android.widget.FrameLayout", "android.widget.TextView", "android.view.View"]
    found: list[int] = []
    thread = threading.Thread(target=lambda: found.append(len(parse_hierarchy(SMALL).nodes)))
    thread.start()
    thread.join()
    assert found == [3]


def test_bytes_xml_forbids_are_dropped_and_declarations_refused_anywhere() -> None:
    dump = SMALL.encode("utf-8").replace(b"Tom &amp;", b"Tom\x01\x1f &amp;")
    assert parse_hierarchy(dump).nodes[1].text == "Tom & Jerry\nline 2"
    assert parse_hierarchy(b'  \n<hierarchy><node text="Hi! &lt;3" bounds="[0,0][1,1]"/></hierarchy>').nodes[0].text \
        == "Hi! <3"
    for declaration in (b"<!DOCTYPE h>", b"<!-- <!ENTITY x 'y'> -->"):
        with pytest.raises(UIParseError, match="DOCTYPE/ENTITY"):
            parse_hierarchy(b'<hierarchy><node bounds="[0,0][1,1]"/>' + declaration + b"</hierarchy>")
    with pytest.raises(UIParseError, match="malformed"):  # dropping the bytes does not mend it
        parse_hierarchy(b'<hierarchy><node bounds="[0,0][1,1]"\x02></hierarchy>')
