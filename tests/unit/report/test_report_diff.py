"""What changed between two screens: the boxes of the regions that differ, in the first image's pixels."""

from __future__ import annotations

from PIL import Image, ImageDraw

from ufo_mobile.report.diff import COMPARE_SIDE, MAX_BOXES, changed_boxes

SIZE = (1080, 2400)
BACKGROUND = (236, 239, 244)


def screen(*rects: tuple[int, int, int, int], size: tuple[int, int] = SIZE) -> Image.Image:
    """A plain screen with each rectangle (left, top, right, bottom; right and bottom exclusive) dark."""
    image = Image.new("RGB", size, BACKGROUND)
    draw = ImageDraw.Draw(image)
    for left, top, right, bottom in rects:
        draw.rectangle((left, top, right - 1, bottom - 1), fill=(20, 20, 20))
    return image


def fits(found: list[tuple[int, int, int, int]] | None, *expected: tuple[int, int, int, int]) -> bool:
    """``found`` holds the ``expected`` boxes in order, each covered whole and at most one compared
    pixel (the screen is compared at COMPARE_SIDE on its longest side) larger on every side."""
    slack = max(SIZE) / COMPARE_SIDE
    return found is not None and len(found) == len(expected) and all(
        0 <= e[0] - f[0] <= slack and 0 <= e[1] - f[1] <= slack and 0 <= f[2] - e[2] <= slack
        and 0 <= f[3] - e[3] <= slack for f, e in zip(found, expected, strict=True))


def test_a_changed_rectangle_is_boxed() -> None:
    assert fits(changed_boxes(screen(), screen((120, 300, 480, 600))), (120, 300, 480, 600))
    assert changed_boxes(screen(), screen((120, 304, 480, 600))) == [(120, 304, 480, 600)]  # on the compared grid


def test_separate_changes_are_separate_boxes_largest_first() -> None:
    found = changed_boxes(screen((60, 2100, 150, 2190)), screen((300, 900, 900, 1200)))
    assert fits(found, (300, 900, 900, 1200), (60, 2100, 150, 2190))  # one appeared, one went away


def test_pixels_that_touch_form_one_region() -> None:
    after = screen((120, 300, 480, 600), (480, 600, 700, 700))  # meets the first at a corner
    assert fits(changed_boxes(screen(), after), (120, 300, 700, 700))


def test_the_same_screen_has_no_change_and_faint_noise_does_not_count() -> None:
    assert changed_boxes(screen(), screen()) == []
    noisy = screen()
    ImageDraw.Draw(noisy).rectangle((0, 0, 500, 500), fill=(246, 249, 254))  # +10 on every channel
    assert changed_boxes(screen(), noisy) == []


def test_screens_of_different_sizes_are_not_compared() -> None:
    assert changed_boxes(screen(), screen(size=(2400, 1080))) is None


def test_many_scattered_changes_are_one_box_around_them_all() -> None:
    dots = [(40 + 200 * (i % 5), 100 + 300 * (i // 5), 60 + 200 * (i % 5), 120 + 300 * (i // 5))
            for i in range(MAX_BOXES + 3)]
    assert fits(changed_boxes(screen(), screen(*dots)), (40, 100, 860, 720))


def test_a_small_screenshot_keeps_its_own_pixels() -> None:
    before, after = screen(size=(200, 400)), screen((48, 60, 152, 100), size=(200, 400))
    assert changed_boxes(before, after) == [(48, 60, 152, 100)]  # compared at 150x300: on that grid
