"""The screen similarity of a replay's guard: on made-up screens, and on real uiautomator dumps from
../shared/data/ui_dumps (read from there, never copied; skipped with the reason when absent)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.core.ui.state import build_ui_state
from ufo_mobile.replay.similarity import NEW_DISCOUNT, compare, normalise, signatures

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "data" / "ui_dumps"
SIZE = (1080, 2400)


def control(index: int, cls: str, text: str = "", *, bounds: tuple[int, int, int, int], parent: int = 0,
            rid: str = "", clickable: bool = False, scrollable: bool = False) -> dict[str, Any]:
    return {"index": index, "class": f"android.widget.{cls}", "text": text, "description": "", "hint": "",
            "resource_id": rid, "bounds": list(bounds), "parent": parent, "clickable": clickable,
            "scrollable": scrollable, "checkable": False, "editable": False}


def rows(labels: list[str], top: int = 300) -> list[dict[str, Any]]:
    """A title and a list of clickable rows, each with a title inside."""
    out = [control(1, "TextView", "Settings", bounds=(0, 84, 1080, 252), rid="app:id/title"),
           control(2, "RecyclerView", bounds=(0, 252, 1080, 2334), rid="app:id/list", scrollable=True)]
    for n, label in enumerate(labels):
        y = top + n * 188
        out.append(control(len(out) + 1, "LinearLayout", bounds=(0, y, 1080, y + 188), parent=2, clickable=True))
        out.append(control(len(out) + 1, "TextView", label, bounds=(48, y + 36, 1032, y + 101),
                           parent=len(out), rid="app:id/title"))
    return out


def test_the_same_screen_scores_one_and_pairs_every_control_with_itself() -> None:
    screen = rows(["Wi-Fi", "Bluetooth", "Display"])
    result = compare(screen, SIZE, screen, SIZE)
    assert result.score == 1.0
    assert result.pairs == {c["index"]: c["index"] for c in screen}
    assert result.missing == [] and result.new == []


def test_reordered_rows_pair_by_label_not_by_place() -> None:
    before, after = rows(["Wi-Fi", "Bluetooth", "Display"]), rows(["Bluetooth", "Display", "Wi-Fi"])
    result = compare(before, SIZE, after, SIZE)
    assert result.score > 0.9
    assert result.pairs[3] == 7  # the Wi-Fi row (its label is the title inside it) is now the third row
    assert result.pairs[4] == 8


def test_clocks_and_counts_do_not_make_another_screen() -> None:
    assert normalise("  Battery   87% ") == normalise("Battery 64%") == "battery #%"
    a = rows(["Battery 87%", "Storage 42% used"])
    b = rows(["Battery 64%", "Storage 43% used"])
    assert compare(a, SIZE, b, SIZE).score == 1.0


def test_another_screen_scores_low_and_lists_what_is_missing_and_new() -> None:
    settings = rows(["Wi-Fi", "Bluetooth", "Display"])
    other = [control(1, "EditText", "Search contacts", bounds=(24, 100, 1056, 220), rid="c:id/search"),
             control(2, "ImageButton", "Add contact", bounds=(900, 2200, 1040, 2340), clickable=True)]
    result = compare(settings, SIZE, other, SIZE)
    assert result.score < 0.2
    assert result.missing == [c["index"] for c in settings] and result.new == [1, 2]


def test_a_control_that_came_in_weighs_less_than_one_that_went_away() -> None:
    """A launcher with two more apps installed is still the screen the step was decided on; the
    same screen having lost two of its rows is further from it."""
    six = ["Wi-Fi", "Bluetooth", "Display", "Sound", "Storage", "Battery"]
    more = compare(rows(six[:4]), SIZE, rows(six), SIZE)
    fewer = compare(rows(six), SIZE, rows(six[:4]), SIZE)
    assert more.new == [11, 12, 13, 14] and fewer.missing == [11, 12, 13, 14]
    assert more.score >= 0.8 > fewer.score
    assert more.score == round(20 / (20 + 28 - 20 - NEW_DISCOUNT * 8), 4)  # both title rows, two weights each


def test_screens_of_another_size_compare_by_relative_position() -> None:
    big = rows(["Wi-Fi", "Bluetooth"])
    small = [{**c, "bounds": [v // 2 for v in c["bounds"]]} for c in big]
    assert compare(big, SIZE, small, (540, 1200)).score == 1.0


def test_empty_containers_weigh_least() -> None:
    weights = {s.index: s.weight for s in signatures(
        [control(1, "FrameLayout", bounds=(0, 0, 10, 10)), control(2, "TextView", "Hi", bounds=(0, 0, 10, 10)),
         control(3, "FrameLayout", bounds=(0, 0, 10, 10), rid="x:id/frame")], SIZE)}
    assert weights == {1: 0.5, 2: 2.0, 3: 1.0}


# --- real dumps ------------------------------------------------------------------------------------


def corpus() -> dict[str, tuple[list[dict[str, Any]], tuple[int, int], str]]:
    if not CORPUS.is_dir() or not any(CORPUS.glob("*.xml")):
        pytest.skip(f"real dump corpus not found at {CORPUS} (../shared/data/ui_dumps)")
    screens = {}
    for path in sorted(CORPUS.glob("*.xml")):
        ui = build_ui_state(path.read_bytes(), observation_id="corpus")
        screens[path.name] = ([ui.get_element_info(c.index) for c in ui.elements], (ui.screen_width, ui.screen_height),
                              str(ui.phone_state.get("current_app") or ""))
    return screens


def scrolled(controls: list[dict[str, Any]], fraction: float) -> list[dict[str, Any]]:
    """The same screen with its largest list scrolled by ``fraction`` of its height: the rows inside
    move up, and those whose centre leaves the list are gone."""
    lists = [c for c in controls if c["scrollable"]]
    box = max(lists, key=lambda c: (c["bounds"][2] - c["bounds"][0]) * (c["bounds"][3] - c["bounds"][1]))
    top, bottom = box["bounds"][1], box["bounds"][3]
    dy = int((bottom - top) * fraction)
    inside, out = {box["index"]}, []
    for c in controls:
        if c["parent"] in inside:
            inside.add(c["index"])
            left, t, right, b = c["bounds"]
            if (t + b) / 2 - dy < top:
                continue
            c = {**c, "bounds": [left, t - dy, right, b - dy]}
        out.append(c)
    return out


def test_on_real_dumps_the_same_screen_scores_one() -> None:
    for name, (controls, size, _) in corpus().items():
        assert compare(controls, size, controls, size).score == 1.0, name


def test_on_real_dumps_a_scrolled_list_scores_high() -> None:
    scores = {name: compare(controls, size, scrolled(controls, 0.2), size).score
              for name, (controls, size, _) in corpus().items() if any(c["scrollable"] for c in controls)}
    assert len(scores) >= 10
    assert min(scores.values()) >= 0.65, sorted(scores.items(), key=lambda kv: kv[1])[:3]
    assert sorted(scores.values())[len(scores) // 2] >= 0.75  # the median


def test_on_real_dumps_another_app_scores_low() -> None:
    screens = corpus()
    worst = max((compare(a[0], a[1], b[0], b[1]).score, x, y)
                for (x, a), (y, b) in itertools.combinations(screens.items(), 2) if a[2] != b[2])
    assert worst[0] <= 0.3, worst
