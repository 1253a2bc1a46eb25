"""The parser's fast paths give what the plain reading gives: a node with every standard attribute
(read in one call) against the same node missing some, a node with only those (its optional ones not
looked up) against the same node with others, numbers that are not plain, bounds that are
not uiautomator's, siblings painted by drawing order (counted when they are in document order,
sorted otherwise), and the same text either way."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ufo_mobile.core.ui import Bounds, build_ui_state, parse_hierarchy
from ufo_mobile.core.ui.hierarchy import _paint_ranks, _prepare, _read

LoadDump = Callable[[str], bytes]

FULL = ('<node index="{index}" text="Tom &amp; Jerry" resource-id="com.x:id/t" class="android.widget.Button" '
        'package="com.x" content-desc="d" checkable="true" checked="true" clickable="true" enabled="false" '
        'focusable="true" focused="true" scrollable="true" long-clickable="true" password="true" selected="true" '
        'bounds="{bounds}" {extra}/>')


def _dump(*nodes: str) -> str:
    return f'<hierarchy rotation="1"><node class="a.Root" package="com.x" bounds="[0,0][1080,2400]">{"".join(nodes)}' \
           "</node></hierarchy>"


def _fields(xml: str) -> list[tuple[object, ...]]:
    tree = parse_hierarchy(xml)
    return [(n.class_name, n.text, n.resource_id, n.package, n.content_desc, n.hint, n.bounds, n.checkable,
             n.checked, n.clickable, n.long_clickable, n.enabled, n.focusable, n.focused, n.scrollable,
             n.password, n.selected, n.visible_to_user, n.naf, n.index, n.depth, n.drawing_order, n.order, n.end,
             n.parent, n.z) for n in tree.nodes]


def test_a_node_missing_standard_attributes_reads_as_their_defaults() -> None:
    full = _fields(_dump(FULL.format(index=3, bounds="[1,2][3,4]", extra='hint="h" NAF="true"')))[1]
    assert full[:20] == ("android.widget.Button", "Tom & Jerry", "com.x:id/t", "com.x", "d", "h", Bounds(1, 2, 3, 4),
                         True, True, True, True, False, True, True, True, True, True, True, True, 3)
    sparse = _fields(_dump('<node class="android.widget.TextView" bounds="[1,2][3,4]"/>'))[1]
    assert sparse[:20] == ("android.widget.TextView", "", "", "", "", "", Bounds(1, 2, 3, 4), False, False, False,
                           False, True, False, False, False, False, False, True, False, 0)


def test_a_node_with_only_the_standard_attributes_reads_as_one_with_others() -> None:
    plain = _fields(_dump(FULL.format(index=3, bounds="[1,2][3,4]", extra="")))
    # an attribute no reader knows makes the node take the path that looks the optional ones up
    other = _fields(_dump(FULL.format(index=3, bounds="[1,2][3,4]", extra='vendor-extra="1"')))
    assert plain == other
    stated = _fields(_dump(FULL.format(index=3, bounds="[1,2][3,4]",
                                       extra='hint="" visible-to-user="true" NAF="false"')))
    assert plain == stated


@pytest.mark.parametrize(("index", "expected"), [("7", 7), ("-2", -2), ("x", 0), ("", 0), ("٣", 3)])
def test_indexes_that_are_not_plain_numbers(index: str, expected: int) -> None:
    assert _fields(_dump(FULL.format(index=index, bounds="[0,0][1,1]", extra="")))[1][19] == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("[0,210][1080,2274]", Bounds(0, 210, 1080, 2274)), (" [-5,0][1,2] ", Bounds(-5, 0, 1, 2)),
    ("[1,2,3][4]", Bounds(0, 0, 0, 0)), ("[1][2][3][4]", Bounds(0, 0, 0, 0)), ("", Bounds(0, 0, 0, 0)),
    ("[1,2][3,4]x", Bounds(0, 0, 0, 0)), ("[1,2][3,4][5,6]", Bounds(0, 0, 0, 0)), ("[+1,2][3,4]", Bounds(0, 0, 0, 0)),
    ("[1_0,2][3,4]", Bounds(0, 0, 0, 0)), ("[--1,2][3,4]", Bounds(0, 0, 0, 0)), ("[1, 2][3,4]", Bounds(0, 0, 0, 0)),
    ("[٣,-0][3,4]", Bounds(3, 0, 3, 4)), ("[]", Bounds(0, 0, 0, 0)), ("[1,2]x[3,4]", Bounds(0, 0, 0, 0)),
])
def test_bounds_texts(text: str, expected: Bounds) -> None:
    assert Bounds.parse(text) == expected


def test_siblings_paint_by_drawing_order_and_else_in_document_order() -> None:
    ordered = _dump(*(FULL.format(index=i, bounds="[0,0][10,10]", extra=f'drawing-order="{d}"')
                      for i, d in enumerate([3, 1, 2])))
    z = [f[25] for f in _fields(ordered)[1:]]
    assert z[1] < z[2] < z[0]  # drawing order 1, 2, 3
    plain = _dump(*(FULL.format(index=i, bounds="[0,0][10,10]", extra="") for i in range(3)))
    z = [f[25] for f in _fields(plain)[1:]]
    assert z[0] < z[1] < z[2]
    mixed = _dump(FULL.format(index=0, bounds="[0,0][1,1]", extra='drawing-order="x"'),
                  FULL.format(index=1, bounds="[0,0][1,1]", extra='drawing-order="0"'))
    z = [f[25] for f in _fields(mixed)[1:]]
    assert z[0] < z[1]  # "x" counts as its position (0); "0" ties with it, and the first in the document goes first


def test_the_screen_text_escapes_only_what_needs_it() -> None:
    xml = _dump('<node class="android.widget.TextView" package="com.x" text="plain words" bounds="[0,0][500,100]"/>',
                '<node class="android.widget.TextView" package="com.x" text="say &quot;hi&quot;&#10;now\\\\" '
                'bounds="[0,100][500,200]"/>',
                '<node class="android.widget.TextView" package="com.x" text="non\u00a0breaking\u2028line" '
                'bounds="[0,200][500,300]"/>')
    text = build_ui_state(xml, observation_id="o").formatted_text
    assert '"plain words"' in text
    assert '"say \\"hi\\"\\nnow\\\\\\\\"' in text
    assert '"non breaking line"' in text


def test_paint_ranks_counted_in_document_order_are_the_sorted_ones(dump_name: str, load_dump: LoadDump) -> None:
    raw = load_dump(dump_name)
    read = _read(_prepare(raw))
    roots = tuple(node for node in read.nodes if node.parent < 0)
    _paint_ranks(roots, read)
    counted = [node.z for node in read.nodes]
    read.ordered = False  # the sort, for every dump
    _paint_ranks(roots, read)
    assert counted == [node.z for node in read.nodes]


def test_siblings_out_of_drawing_order_are_sorted() -> None:
    xml = _dump(*(FULL.format(index=i, bounds="[0,0][10,10]", extra=f'drawing-order="{d}"')
                  for i, d in enumerate([1, 1, 2])))
    assert _read(_prepare(xml)).ordered
    xml = _dump(*(FULL.format(index=i, bounds="[0,0][10,10]", extra=f'drawing-order="{d}"')
                  for i, d in enumerate([2, 1])))
    assert not _read(_prepare(xml)).ordered
