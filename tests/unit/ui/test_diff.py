"""What an action changed on the screen, in the line the model reads next turn (``ui.diff``)."""

from __future__ import annotations

from typing import Any

from ufo_mobile.core.ui.diff import describe_change


def screen(*controls: list[Any], app: str = "com.android.settings", keyboard: bool = False) -> dict[str, Any]:
    return {"observation_id": "o", "app": app, "keyboard": keyboard, "controls": list(controls)}


def row(cls: str, name: str, top: int, flags: str = "", text: str = "") -> list[Any]:
    return [cls, name, flags, text, [0, top, 1080, top + 100]]


WIFI_PAGE = [row("ImageButton", "Navigate up", 0), row("Switch", "Use Wi-Fi", 100, "off")]


def test_nothing_changed() -> None:
    assert describe_change(screen(*WIFI_PAGE), screen(*WIFI_PAGE)) == "nothing on the screen changed"


def test_a_switch_now_on_and_what_appeared() -> None:
    after = [row("ImageButton", "Navigate up", 0), row("Switch", "Use Wi-Fi", 100, "on"),
             row("TextView", "HomeNet", 200)]
    assert describe_change(screen(*WIFI_PAGE), screen(*after)) == "'Use Wi-Fi' is now on; appeared: 'HomeNet'"


def test_a_new_screen_is_not_a_scroll() -> None:
    before = [row("TextView", name, 100 * i) for i, name in enumerate(["A", "B", "C", "D", "E"])]
    after = [row("TextView", "A", 300), row("TextView", "X", 400), row("TextView", "Y", 500),
             row("TextView", "Z", 600)]
    line = describe_change(screen(*before), screen(*after))
    assert line.startswith("a different screen, showing: 'X', 'Y', 'Z'") and "scrolled" not in line


def test_a_list_that_moved_up_scrolled_down() -> None:
    before = [row("TextView", name, 100 * i) for i, name in enumerate(["A", "B", "C", "D"])]
    after = [row("TextView", name, 100 * i - 100) for i, name in enumerate(["A", "B", "C", "D"])][1:] + [
        row("TextView", "E", 300)]
    assert describe_change(screen(*before), screen(*after)).startswith("the content scrolled down")


def test_a_text_that_moved_to_another_row_is_no_scroll() -> None:
    """Connecting to another network moves 'Connected' from one row to the other: no scroll."""
    before = [row("TextView", "HomeNet", 0), row("TextView", "Connected", 50), row("TextView", "Office-5G", 100),
              row("TextView", "Secured", 150), row("TextView", "Cafe", 200), row("TextView", "Open", 250)]
    after = [row("TextView", "HomeNet", 0), row("TextView", "Saved", 50), row("TextView", "Office-5G", 100),
             row("TextView", "Connected", 150), row("TextView", "Cafe", 200), row("TextView", "Open", 250)]
    line = describe_change(screen(*before), screen(*after))
    assert "scrolled" not in line and "appeared: 'Saved'" in line and "went away: 'Secured'" in line
    assert "'Connected' is now by 'Office-5G'" in line


def test_the_app_and_the_keyboard() -> None:
    line = describe_change(screen(*WIFI_PAGE), screen(*WIFI_PAGE, app="com.example.notes", keyboard=True))
    assert line == "the app in front is now com.example.notes (was com.android.settings); the keyboard opened"


def test_controls_a_new_screen_shares_at_other_places_are_no_scroll() -> None:
    names = ["Title", "Search", "A", "B", "C", "D", "E", "F", "G", "Start chat"]
    before = [row("TextView", name, 100 * i) for i, name in enumerate(names)]
    after = [row("TextView", "Title", 0), row("TextView", "Search", 100), row("TextView", "A", 700),
             row("TextView", "B", 1100), row("TextView", "Start chat", 150), row("EditText", "To", 300),
             row("TextView", "Top contacts", 400)]
    line = describe_change(screen(*before), screen(*after))
    assert "scrolled" not in line and "appeared: 'To', 'Top contacts'" in line


def test_a_filtered_list_says_what_is_still_there() -> None:
    before = [row("EditText", "Search", 0)] + [row("TextView", name, 100 * i) for i, name in
                                               enumerate(["Apples", "Bananas", "Greek yogurt", "Milk", "Bread"], 1)]
    after = [row("EditText", "Search", 0, text="yog"), row("TextView", "Greek yogurt", 100)]
    line = describe_change(screen(*before), screen(*after))
    assert line.endswith("most of the screen went away; still there: 'Search', 'Greek yogurt'")
