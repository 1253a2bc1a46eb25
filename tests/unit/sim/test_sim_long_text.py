"""A long unbroken text: the wrap is linear, and what is laid out, drawn and dumped is bounded."""

from __future__ import annotations

import io
import random
import re

import pytest
from PIL import Image

from ufo_mobile.sim.phone.hierarchy import to_xml
from ufo_mobile.sim.phone.loader import builtin_apps, load_app_text
from ufo_mobile.sim.phone.paint import Fonts, wrap
from ufo_mobile.sim.phone.simphone import SimPhone
from ufo_mobile.sim.phone.view import ELLIPSIS, TEXT_LIMIT

MEGABYTE = 1024 * 1024  # over Pillow's own limit of a million characters per measured string


class CountingFonts(Fonts):
    """Fonts whose measurements (cache misses) are counted, with the characters they measure."""

    def __init__(self) -> None:
        super().__init__(measure=self._count)
        self.calls = 0
        self.chars = 0

    def _count(self, size: int, text: str) -> float:
        self.calls += 1
        self.chars += len(text)
        return self._getlength(size, text)


def _unbroken(count: int) -> str:
    """``count`` letters with no space: a random mix, so no two wrapped lines are alike (a cache
    would hide repeated measurements of equal lines)."""
    rng = random.Random(21)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzAVW") for _ in range(count))


def _measured(count: int) -> tuple[CountingFonts, list[str]]:
    fonts = CountingFonts()
    return fonts, wrap(_unbroken(count), fonts, 44, 1000)


def test_the_wrap_of_an_unbroken_word_measures_linearly() -> None:
    (small, small_lines), (large, large_lines) = _measured(20_000), _measured(40_000)
    assert len(large_lines) / len(small_lines) == pytest.approx(2, rel=0.1)
    # twice the text, twice the work: measurements, and the characters they measure (the quadratic
    # wrap this replaced made about twice the calls too, but each measured the rest of the word: it
    # measured about 4 times the characters)
    assert large.calls / small.calls == pytest.approx(2, rel=0.1)
    assert large.chars / small.chars == pytest.approx(2, rel=0.1)


def test_an_unbroken_word_wraps_into_lines_that_fit() -> None:
    fonts = Fonts()
    text = _unbroken(5_000)
    lines = wrap(text, fonts, 44, 700)
    assert "".join(lines) == text
    assert all(fonts.width(44, line) <= 700 for line in lines)
    assert wrap(text, fonts, 44, 700, max_lines=3) == lines[:3]


@pytest.mark.parametrize(("glyph", "count", "size"), [
    ("A", MEGABYTE, 44),  # more characters than Pillow measures at once
    ("W", 900 * 1024, 44),  # wider than FreeType's 26.6 pen reaches (it measured negative)
    ("W", 100_000, 400),  # the same in fewer characters of a big font
])
def test_a_very_long_text_is_measured(glyph: str, count: int, size: int) -> None:
    fonts = Fonts()
    one = fonts.width(size, glyph * 100) / 100
    assert fonts.width(size, glyph * count) == pytest.approx(count * one, rel=0.01)


def _long_app(text: str) -> str:
    """An app showing ``text`` in its title, a label, a button and a scrolled page (one copy in the
    file, an alias elsewhere), and a multiline field; the label, taller than the screen, comes last."""
    return f"""
package: com.example.long
label: Long
start: main
state: {{note: ""}}
screens:
  main:
    title: &long "{text}"
    body:
      - {{class: android.widget.Button, id: button, text: *long}}
      - {{class: android.widget.EditText, id: note, bind: note, multiline: true}}
      - {{id: page, scrollable: true, height: 600, children: [{{id: inner, text: *long, style: body}}]}}
      - {{id: label, text: *long}}
"""


def test_a_megabyte_label_renders_and_dumps_bounded() -> None:
    text = "A" * MEGABYTE
    app = load_app_text(_long_app(text), "long.yaml")
    phone = SimPhone([*builtin_apps(), app])
    phone.start_app("com.example.long")
    phone.set_state("com.example.long", note="B" * MEGABYTE)

    xml = phone.dump_hierarchy()
    texts = re.findall(r' text="([^"]*)"', xml)
    long_ones = [value for value in texts if len(value) > 100]
    assert len(long_ones) == 5  # the title, the label, the button, the scrolled text, the field
    for value in long_ones:
        assert len(value) == TEXT_LIMIT and value.endswith(ELLIPSIS)
        assert set(value[:-1]) in ({"A"}, {"B"})
    assert len(xml) < 6 * TEXT_LIMIT + 20_000  # bounded: nowhere near the megabytes the app holds
    assert phone.state("com.example.long")["note"] == "B" * MEGABYTE  # the state keeps it whole

    image = Image.open(io.BytesIO(phone.screenshot_png()))
    assert image.size == phone.screen_size()
    label = phone.snapshot().find(lambda view: view.resource_id.endswith(":id/label"))
    assert label is not None and label.bounds.bottom <= phone.screen_size()[1]
    left, top, right, bottom = (label.bounds.left, label.bounds.top, label.bounds.right, label.bounds.bottom)
    darkest = image.crop((left, top, right, bottom)).convert("L").getextrema()[0]
    assert isinstance(darkest, int) and darkest < 100  # the label is drawn
    assert to_xml(phone.snapshot()) == xml  # and it is stable
