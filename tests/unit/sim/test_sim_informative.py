"""The simulated apps tell an agent what real apps tell it: a list that goes on shows the next row cut
off, the calendar marks the days with events and lists and finds them, chat bubbles name their
sender, a search that finds nothing says so, and every settings switch carries its row's title."""

from __future__ import annotations

import io

import pytest
from lxml import etree
from PIL import Image

from tests.unit.sim.conftest import Screen
from ufo_mobile.core.ui.controls import ControlKind, extract_controls
from ufo_mobile.core.ui.hierarchy import parse_hierarchy
from ufo_mobile.sim.phone.loader import load_app_text, packaged_app
from ufo_mobile.sim.phone.simphone import SimPhone

SETTINGS = "com.android.settings"
MESSAGES = "com.google.android.apps.messaging"

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


# -- 4. every settings switch names itself -----------------------------------------------------


def _labels_of_switches(screen: Screen) -> list[tuple[str, str]]:
    """(the switch's own label, the title of the row holding it or "") of every Switch on the screen."""
    found = []
    for row in screen.nodes():
        for node in row:
            if node.get("class") != "android.widget.Switch":
                continue
            titles = [n.get("text") for n in row.iter("node") if n.get("resource-id", "").endswith(":id/title")]
            found.append((node.get("text") or node.get("content-desc") or "", titles[0] if len(titles) == 1 else ""))
    return found


@pytest.mark.parametrize("screen_name", list(packaged_app(SETTINGS).screens))
def test_every_settings_switch_has_its_own_label(phone: SimPhone, screen_name: str) -> None:
    phone.set_state(SETTINGS, wifi=True, bluetooth=True)
    phone.start_app(SETTINGS, screen_name)
    screen = Screen(phone)
    for label, title in _labels_of_switches(screen):
        assert label, f"{screen_name}: a switch without text or content-desc"
        if title:
            assert label == title


def test_row_switches_carry_the_row_title(phone: SimPhone) -> None:
    phone.start_app(SETTINGS, "display")
    screen = Screen(phone)
    assert ("Dark theme", "Dark theme") in _labels_of_switches(screen)
    assert ("Adaptive brightness", "Adaptive brightness") in _labels_of_switches(screen)
    switch = screen.node(cls="android.widget.Switch", desc="Dark theme")
    assert switch.get("checked") == "false"
    phone.start_app(SETTINGS, "main")
    assert screen.node(cls="android.widget.Switch", desc="Airplane mode").get("checkable") == "true"
    phone.start_app(SETTINGS, "wifi")
    assert screen.node(cls="android.widget.Switch", text="Use Wi-Fi") is not None


def test_an_agent_reads_the_dark_theme_switch_by_its_name(phone: SimPhone) -> None:
    phone.start_app(SETTINGS, "display")
    controls = extract_controls(parse_hierarchy(phone.dump_hierarchy()))
    toggles = [c.label for c in controls if c.kind is ControlKind.TOGGLE]
    assert "Dark theme" in toggles and "Adaptive brightness" in toggles


# -- 2. a chat bubble names its sender ---------------------------------------------------------


def test_message_bubbles_say_who_wrote_them(phone: SimPhone) -> None:
    phone.set_state(MESSAGES, to="Alice Johnson")
    phone.start_app(MESSAGES, "thread")
    screen = Screen(phone)
    bubbles = [(node.get("text"), node.get("content-desc")) for node in screen.nodes()
               if node.get("resource-id", "").endswith(":id/message_text")]
    assert bubbles == [("Are we still on for dinner?", "Alice Johnson said: Are we still on for dinner?"),
                       ("Yes! Where?", "You said: Yes! Where?"),
                       ("See you at 6!", "Alice Johnson said: See you at 6!")]


def test_a_sent_message_is_said_by_you(phone: SimPhone) -> None:
    phone.set_state(MESSAGES, to="Mom")
    phone.start_app(MESSAGES, "thread")
    screen = Screen(phone)
    screen.tap(rid="compose_message_text")
    phone.input_text("On my way")
    screen.tap(desc="Send")
    assert screen.node(text="On my way").get("content-desc") == "You said: On my way"
    assert screen.node(text="Call me when you can").get("content-desc") == "Mom said: Call me when you can"
    controls = extract_controls(parse_hierarchy(phone.dump_hierarchy()))
    said = {c.label: c.description for c in controls}
    assert said["On my way"] == "You said: On my way"


# -- 3. a search that finds nothing says so ------------------------------------------------------

SEARCHES = [  # package, screen, search field, a query that finds something, its row's text
    ("com.android.contacts", "list", "search_field", "ali", "Alice Johnson"),
    ("com.example.shop", "catalog", "search_field", "milk", "Oat milk"),
    (MESSAGES, "new_chat", "recipient_text_view", "bob", "Bob Smith"),
]


@pytest.mark.parametrize(("package", "screen_name", "field", "query", "found"), SEARCHES)
def test_a_search_without_results_says_no_results(phone: SimPhone, package: str, screen_name: str, field: str,
                                                  query: str, found: str) -> None:
    if package == "com.example.shop":
        phone.install(packaged_app(package))
    phone.start_app(package, screen_name)
    screen = Screen(phone)
    assert not [text for text in screen.texts() if text.startswith("No results")]
    screen.tap(rid=field)
    phone.input_text(query)
    assert screen.find(text=found) is not None
    assert not [text for text in screen.texts() if text.startswith("No results")]
    phone.input_text("xyzzy", clear=True)
    assert screen.find(text=found) is None
    top = screen.bounds(screen.node(text='No results for "xyzzy"'))[1]
    assert top >= screen.bounds(screen.node(rid=field))[3]  # under the search field


# -- 1. the calendar marks, lists and finds its events -------------------------------------------

CALENDAR = "com.example.calendar"


@pytest.fixture
def calendar(phone: SimPhone) -> Screen:
    phone.install(packaged_app(CALENDAR))
    phone.start_app(CALENDAR)
    return Screen(phone)


def _cell(screen: Screen, day: int) -> etree._Element:
    cells = [node for node in screen.nodes() if node.get("resource-id", "").endswith(":id/day_cell")
             and node.get("content-desc", "").partition(",")[0] == f"January {day}"]
    assert len(cells) == 1, f"January {day}: {len(cells)} cells"
    return cells[0]


def _has_marker(cell: etree._Element) -> bool:
    return any(node.get("resource-id", "").endswith(":id/event_marker") for node in cell.iter("node"))


def test_month_cells_count_their_events_and_carry_a_marker(calendar: Screen) -> None:
    calendar.phone.set_state(CALENDAR, events=[
        {"title": "Yoga class", "day": 15, "hour": "18", "minute": "00"},
        {"title": "Dentist appointment", "day": 17, "hour": "10", "minute": "30"},
        {"title": "Car service", "day": 17, "hour": "08", "minute": "00"},
    ])
    assert _cell(calendar, 15).get("content-desc") == "January 15, 1 event"
    assert _cell(calendar, 17).get("content-desc") == "January 17, 2 events"
    assert _cell(calendar, 16).get("content-desc") == "January 16"
    assert _has_marker(_cell(calendar, 15)) and _has_marker(_cell(calendar, 17))
    assert not _has_marker(_cell(calendar, 16))
    assert _cell(calendar, 17).get("clickable") == "true"
    assert _cell(calendar, 15).get("selected") == "true" and _cell(calendar, 17).get("selected") == "false"


def test_a_new_event_marks_its_day(calendar: Screen) -> None:
    assert _cell(calendar, 20).get("content-desc") == "January 20"
    calendar.tap(desc="January 20")
    assert _cell(calendar, 20).get("selected") == "true"
    calendar.tap(desc="Create event")
    calendar.phone.input_text("Haircut")
    calendar.tap(text="Save")
    assert _cell(calendar, 20).get("content-desc") == "January 20, 1 event"
    assert _has_marker(_cell(calendar, 20))


def test_the_agent_reads_the_event_count_of_a_day(calendar: Screen) -> None:
    controls = extract_controls(parse_hierarchy(calendar.phone.dump_hierarchy()))
    labels = [c.label for c in controls]
    assert "January 17, 1 event" in labels and "January 16" in labels


def test_schedule_lists_every_event_in_date_order(calendar: Screen) -> None:
    calendar.phone.set_state(CALENDAR, events=[
        {"title": "Book club", "day": 28, "hour": "19", "minute": "30"},
        {"title": "Dentist appointment", "day": 17, "hour": "10", "minute": "30"},
        {"title": "Early run", "day": 17, "hour": "07", "minute": "15"},
    ])
    calendar.tap(desc="Schedule view")
    titles = [n.get("text") for n in calendar.nodes() if n.get("resource-id", "").endswith(":id/event_title")]
    when = [n.get("text") for n in calendar.nodes() if n.get("resource-id", "").endswith(":id/event_when")]
    assert titles == ["Early run", "Dentist appointment", "Book club"]
    assert when == ["January 17, 2025, 07:15", "January 17, 2025, 10:30", "January 28, 2025, 19:30"]
    calendar.tap(text="Book club")
    assert calendar.find(text="January 28, 2025 at 19:30") is not None


def test_search_finds_events_by_title_and_says_when_it_finds_none(calendar: Screen) -> None:
    calendar.tap(desc="Search")
    assert calendar.node(rid="search_field").get("focused") == "true"
    assert calendar.find(text="Team lunch") is None  # nothing before a query
    calendar.phone.input_text("LUNCH")
    assert calendar.find(text="Team lunch") is not None
    assert calendar.find(text="January 22, 2025, 12:30") is not None
    assert calendar.find(text="Yoga class") is None
    calendar.phone.input_text("Opera", clear=True)
    assert calendar.find(text="Team lunch") is None
    assert calendar.find(text='No results for "Opera"') is not None


def _darkest(screen: Screen, box: tuple[int, int, int, int]) -> int:
    region = Image.open(io.BytesIO(screen.phone.screenshot_png())).crop(box).convert("L")
    darkest = region.getextrema()[0]
    assert isinstance(darkest, int)
    return darkest


def test_the_marker_dot_and_the_app_bar_icons_are_drawn(calendar: Screen) -> None:
    def marker_box(day: int) -> tuple[int, int, int, int]:
        left, _, right, bottom = calendar.bounds(_cell(calendar, day))
        return left, bottom - 40, right, bottom  # the marker's row, under the number

    assert _darkest(calendar, marker_box(17)) < 100
    assert _darkest(calendar, marker_box(16)) > 200
    for desc in ("Search", "Schedule view"):
        assert _darkest(calendar, calendar.bounds(calendar.node(desc=desc))) < 100
