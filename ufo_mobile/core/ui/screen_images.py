"""The pictures of one observed screen, made from one decode of its screenshot, each at most once.

An observation needs several pictures of the same screen: the model's (the set-of-mark at the size
the tile budget allows), the run directory's ``annotated.png`` (the same marks at full size) and
the report's thumbnail of that (``THUMBNAIL_SIDE``). ``ScreenImages`` decodes the screenshot once, draws the marks once,
at full size, and derives the smaller pictures from that drawing with ``shrink`` (an exact box
reduction by the integer part of the factor, then a short resample): a fraction of what
resampling the full-size image costs. PNGs are written with ``ui.png.encode_png``.

Each picture is made on first use and kept, so a screen observed again unchanged costs nothing
more. The methods are thread-safe: the run writer's background thread asks for the full-size PNG
while the next step may already be using the same object. ``release`` drops the decoded pixels
(a phone screen is about 8 MB of them) once the pictures are made; a later request decodes again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from ufo_mobile.core.ui.annotate import draw_marks
from ufo_mobile.core.ui.controls import Control
from ufo_mobile.core.ui.png import encode_png
from ufo_mobile.core.ui.screenshot import BLANK_MAX_BYTES, decode, is_blank_image, png_size, shrink

THUMBNAIL_SIDE = 720  # the longest side of the report's pictures


@dataclass(frozen=True)
class ModelImage:
    """The screenshot as the model gets it: PNG bytes (with the marks when asked), the same
    without marks when asked for (``clean``), and the factor from screen to image pixels."""

    png: bytes
    clean: bytes | None
    scale: float


class ScreenImages:
    """The pictures of one screenshot and the controls observed with it (module docstring).

    Args:
        png: the screenshot as the phone sent it.
        controls: the controls to mark, their bounds in the screenshot's pixels.
    """

    def __init__(self, png: bytes, controls: Sequence[Control]) -> None:
        self.png = png
        self.controls = list(controls)
        self._lock = threading.RLock()
        self._decoded: Image.Image | None = None
        self._marked: Image.Image | None = None
        self._half: Image.Image | None = None  # the marked picture halved: where the smaller ones start
        self._blank: bool | None = None
        self._models: dict[tuple[tuple[int, int], bool, bool], ModelImage] = {}
        self._annotated_png: bytes | None = None
        self._thumbnails: dict[int, bytes] = {}

    def decoded(self) -> Image.Image:
        """The screenshot's pixels (RGB). Raises ``UIParseError`` when it is not a readable image."""
        with self._lock:
            if self._decoded is None:
                self._decoded = decode(self.png)
            return self._decoded

    def marked(self) -> Image.Image:
        """The screenshot with a numbered box per control, at full size (do not draw on it). The
        marks are drawn on the decoded pixels themselves (a full-size copy costs more than the
        drawing): ask for anything that needs the unmarked pixels first, or they are decoded again."""
        with self._lock:
            if self._marked is None:
                image = self.decoded()
                self._decoded = None
                draw_marks(image, self.controls, 1.0)
                self._marked = image
            return self._marked

    def blank(self) -> bool:
        """Whether the screenshot is black: what Android hands out for a secure (FLAG_SECURE) screen."""
        with self._lock:
            if self._blank is None:
                # a black screen compresses to a few kB; a real one never gets under this size
                self._blank = len(self.png) <= BLANK_MAX_BYTES and is_blank_image(self.decoded())
            return self._blank

    def model_image(self, size: tuple[int, int], *, marks: bool = True, clean: bool = False) -> ModelImage:
        """The picture for the model at ``size`` (never larger than the screenshot)."""
        key = (size, marks, clean)
        with self._lock:
            found = self._models.get(key)
            if found is None:
                width = png_size(self.png)[0]
                target, _ = self.model_size(size)
                # the unmarked pixels first: marking draws on them
                plain = encode_png(shrink(self.decoded(), target)) if clean or not marks else None
                if marks:
                    shown = self._shrunk(target)
                    sent = self.annotated_png() if shown is self._marked else encode_png(shown)
                else:
                    assert plain is not None
                    sent = plain
                found = ModelImage(sent, plain if clean else None, target[0] / width)
                self._models[key] = found
            return found

    def model_size(self, size: tuple[int, int]) -> tuple[tuple[int, int], float]:
        """The size ``model_image(size)`` has (never larger than the screenshot) and its factor from
        screenshot to picture pixels, known without making it."""
        width, height = png_size(self.png)
        target = (min(size[0], width), min(size[1], height))
        return target, target[0] / width

    def annotated_png(self) -> bytes:
        """``annotated.png``: the full-size set-of-mark screenshot as PNG bytes."""
        with self._lock:
            if self._annotated_png is None:
                self._annotated_png = encode_png(self.marked())
            return self._annotated_png

    def thumbnail_png(self, longest_side: int = THUMBNAIL_SIDE) -> bytes:
        """The full-size marked picture shrunk so that its longest side is at most ``longest_side``,
        as PNG bytes: what the report shows (it makes the same from ``annotated.png`` without it)."""
        with self._lock:
            found = self._thumbnails.get(longest_side)
            if found is None:
                width, height = png_size(self.png)
                factor = min(1.0, longest_side / max(width, height))
                size = (max(1, round(width * factor)), max(1, round(height * factor)))
                found = self._thumbnails[longest_side] = encode_png(self._shrunk(size))
            return found

    def _shrunk(self, size: tuple[int, int]) -> Image.Image:
        """``shrink(self.marked(), size)``, starting from the halved picture the model's and the
        report's share (``shrink`` halves first whenever the target is half the size or less)."""
        image = self.marked()
        if image.width < 2 * size[0] or image.height < 2 * size[1]:
            return shrink(image, size)
        if self._half is None:
            self._half = image.reduce(2)
        return shrink(self._half, size)

    def release(self) -> None:
        """Drop the full-size pixels; the pictures made so far stay."""
        with self._lock:
            self._decoded = self._marked = self._half = None
