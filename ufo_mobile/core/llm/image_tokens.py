"""What an image costs in input tokens, by OpenAI's published tiling rule, and how to size one to fit.

The rule (OpenAI's vision guide, for the tile-priced models: gpt-4o, gpt-4.1, o1, o3 and kin):

- ``detail: low``: a flat base cost, whatever the size (the model sees at most 512x512);
- ``detail: high`` (and ``auto`` for anything larger than 512x512): the image is scaled to fit a
  2048x2048 square, then scaled so its shortest side is 768 px (never up), then cut into 512 px
  tiles; the cost is ``base + per_tile * tiles``.

``fit_to_tiles`` finds the largest downscale of a screen that stays within a tile budget, which is
how the runtime keeps a phone screenshot cheap while keeping the control numbers legible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Detail = Literal["low", "high", "auto"]


@dataclass(frozen=True)
class TileRule:
    base: int
    per_tile: int


#: gpt-4o, gpt-4.1, o1, o3 and most tile-priced models; gpt-4o-mini bills many more tokens per tile.
TILE_RULES: dict[str, TileRule] = {"default": TileRule(85, 170), "gpt-4o-mini": TileRule(2833, 5667)}


def rule_for(model: str) -> TileRule:
    name = model.lower()
    return next((rule for prefix, rule in TILE_RULES.items() if prefix != "default" and name.startswith(prefix)),
                TILE_RULES["default"])


def scaled_for_tiling(width: int, height: int) -> tuple[int, int]:
    """The size the provider tiles: fit 2048x2048, then the shortest side down to 768."""
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    return max(1, math.floor(w * scale)), max(1, math.floor(h * scale))


def tiles(width: int, height: int) -> int:
    w, h = scaled_for_tiling(width, height)
    return math.ceil(w / 512) * math.ceil(h / 512)


def image_tokens(width: int, height: int, detail: Detail = "high", model: str = "gpt-4o") -> int:
    """Input tokens of one ``width`` x ``height`` image sent with ``detail``."""
    rule = rule_for(model)
    if detail == "low" or (detail == "auto" and max(width, height) <= 512):
        return rule.base
    return rule.base + rule.per_tile * tiles(width, height)


def fit_to_tiles(width: int, height: int, max_tiles: int, longest_side: int | None = None) -> tuple[int, int]:
    """The largest size with the screen's aspect ratio that costs at most ``max_tiles`` tiles (and
    whose longest side is at most ``longest_side``). Never larger than the original."""
    cap = 1.0 if longest_side is None else min(1.0, longest_side / max(width, height))

    def size(scale: float) -> tuple[int, int]:
        return max(1, round(width * scale)), max(1, round(height * scale))

    if tiles(*size(cap)) <= max_tiles:
        return size(cap)
    low, high = 0.0, cap  # tiles() grows with the scale: bisect to the largest scale that fits
    for _ in range(40):
        mid = (low + high) / 2
        if tiles(*size(mid)) <= max_tiles:
            low = mid
        else:
            high = mid
    return size(low)
