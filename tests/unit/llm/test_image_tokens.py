"""Image tokens by OpenAI's published tiling rule, and sizing a screenshot to a tile budget."""

from __future__ import annotations

import pytest

from ufo_mobile.core.llm.image_tokens import fit_to_tiles, image_tokens, scaled_for_tiling, tiles


@pytest.mark.parametrize(("size", "detail", "tokens"), [
    ((1024, 1024), "high", 765),   # the guide's examples: scaled to 768x768, 4 tiles
    ((2048, 4096), "high", 1105),  # fit 2048 -> 1024x2048 -> 768x1536, 6 tiles
    ((4096, 8192), "low", 85),     # low detail is flat
    ((400, 300), "auto", 85),      # auto on a small image is low
    ((1080, 2400), "high", 1445),  # a phone screen at full size: 8 tiles
])
def test_the_published_examples(size: tuple[int, int], detail: str, tokens: int) -> None:
    assert image_tokens(*size, detail=detail) == tokens  # type: ignore[arg-type]


def test_small_images_are_not_scaled_up() -> None:
    assert scaled_for_tiling(512, 1139) == (512, 1139)
    assert tiles(512, 1139) == 3


def test_mini_models_bill_more_per_tile() -> None:
    assert image_tokens(1024, 1024, model="gpt-4o-mini-2024-07-18") == 2833 + 5667 * 4


@pytest.mark.parametrize(("screen", "budget", "expected"), [
    ((1080, 2400), 3, (512, 1139)),
    ((1080, 2400), 2, (461, 1024)),
    ((1440, 3120), 3, (512, 1109)),
    ((1920, 1200), 3, (820, 512)),
])
def test_fit_to_a_tile_budget(screen: tuple[int, int], budget: int, expected: tuple[int, int]) -> None:
    size = fit_to_tiles(*screen, budget)
    assert tiles(*size) <= budget
    assert abs(size[0] - expected[0]) <= 1 and abs(size[1] - expected[1]) <= 1
    bigger = (size[0] + 2, round((size[0] + 2) * screen[1] / screen[0]))
    assert tiles(*bigger) > budget  # the largest that fits


def test_the_longest_side_caps_the_size_too() -> None:
    assert fit_to_tiles(1080, 2400, 6, longest_side=1000) == (450, 1000)
    assert fit_to_tiles(300, 600, 6) == (300, 600)  # never larger than the screen


def test_our_screenshot_is_under_a_quarter_of_ufos_two_full_size_pngs() -> None:
    ours = image_tokens(*fit_to_tiles(1080, 2400, 3))
    ufo = 2 * image_tokens(1080, 2400)
    assert (ours, ufo) == (595, 2890) and ours / ufo <= 0.25
