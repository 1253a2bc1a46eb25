"""The simulated apps tell an agent what real apps tell it: a list that goes on shows the next row cut
off, the calendar marks the days with events and lists and finds them, chat bubbles name their
sender, a search that finds nothing says so, and every settings switch carries its row's title."""

from __future__ import annotations

import pytest

from tests.unit.sim.conftest import Screen
from ufo_mobile.sim.loader import load_app_text
from ufo_mobile.sim.phone import SimPhone

ROWS = """
package: com.example.rows
label: Rows
start: main
state:
  rows: [{n: 1}, {n: 2}, {n: 3}, {n: 4}, {n: 5}, {n: 6}, {n: 7}, {n: 8}]
screens:
  main:
    title: Rows
    body:
      - class: androidx.recyclerview.widget.RecyclerView
        id: rows
        scrollable: true
        height: 600
        children:
          - {for_each: rows, id: row, text: "Row {item.n}", height: 200, on_tap: {set: {var: rows, value: []}}}
"""


@pytest.fixture
def rows(phone: SimPhone) -> Screen:
    phone.install(load_app_text(ROWS, "rows.yaml"))
    phone.start_app("com.example.rows")
    return Screen(phone)


def _row_boxes(screen: Screen) -> dict[str, tuple[int, int, int, int]]:
    return {node.get("text"): screen.bounds(node) for node in screen.nodes()
            if node.get("resource-id", "").endswith(":id/row")}


# -- 5. a list that goes on shows its next row cut off ------------------------------------------


def test_a_list_of_whole_rows_shows_the_next_row_cut_off_at_its_bottom(rows: Screen) -> None:
    """600 pixels hold exactly three rows of 200: the fourth still shows, cut by the list's edge."""
    list_top, list_bottom = rows.bounds(rows.node(rid="rows"))[1::2]
    boxes = _row_boxes(rows)
    assert "Row 4" in boxes
    top, bottom = boxes["Row 4"][1::2]
    assert bottom == list_bottom and 0 < bottom - top < 200
    assert "Row 5" not in boxes
    assert all(list_top <= box[1] < box[3] <= list_bottom for box in boxes.values())


def test_a_scroll_that_stops_on_a_row_boundary_still_shows_the_next_row(rows: Screen) -> None:
    x, y = rows.center(rows.node(rid="rows"))
    rows.phone.swipe(x, y + 250, x, y - 150, 300)  # 400 pixels: two rows, the viewport ends between rows
    boxes = _row_boxes(rows)
    list_bottom = rows.bounds(rows.node(rid="rows"))[3]
    assert boxes["Row 6"][3] == list_bottom and boxes["Row 6"][3] - boxes["Row 6"][1] < 200


def test_a_list_scrolled_to_its_end_ends_with_its_last_row_whole(rows: Screen) -> None:
    x, y = rows.center(rows.node(rid="rows"))
    for _ in range(4):
        rows.phone.swipe(x, y + 250, x, y - 250, 300)
    boxes = _row_boxes(rows)
    list_bottom = rows.bounds(rows.node(rid="rows"))[3]
    assert boxes["Row 8"][3] == list_bottom and boxes["Row 8"][3] - boxes["Row 8"][1] == 200
