"""The pictures of one observed screen, made from one decode of its screenshot, each at most once.

An observation needs several pictures of the same screen: the model's (the set-of-mark at the size
the tile budget allows, PNG), and the run's record (``record``): the run directory's
``annotated.jpg`` (the same marks at full size, JPEG), the report's thumbnail of that
(``THUMBNAIL_SIDE``, JPEG) and a small clean copy of the screenshot (JPEG, at least ``CLEAN_SIDE``
on its longest side: the report's "after" figure and change boxes). ``ScreenImages`` decodes the
screenshot once, keeps the clean copy (an integer box reduction) before it draws the marks, draws
them once, at full size, and derives the smaller pictures from that drawing with ``shrink`` (an
exact box reduction by the integer part of the factor, then a short resample): a fraction of what
resampling the full-size image costs. PNGs are written with ``ui.png.encode_png``, JPEGs by Pillow.

Each picture is made on first use and kept, so a screen observed again unchanged costs nothing
more. The methods are thread-safe (the model phase makes the pictures in a worker thread).
``release`` drops the decoded pixels (a phone screen is about 10 MB of them) once the pictures are
made; a later request decodes again.

How many screens hold full-size pixels at once is bounded process-wide (``ui/pixel_slots.py``).
Each method works inside ``working()`` (nested calls make one block). A decode first takes a
working slot, waiting while all are taken, and the block gives it back when it ends; pixels still
held then (the observation phase's black-screen check keeps its decode for the pictures made next)
stay only if a kept slot is free, else they are let go there and then. ``release`` gives the kept
slot back, and so does a ``ScreenImages`` dropped without it. Pictures already made take no slot.
"""

from __future__ import annotations

import io
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from PIL import Image

from ufo_mobile.core.ui.annotate import draw_marks
from ufo_mobile.core.ui.controls import Control
from ufo_mobile.core.ui.pixel_slots import SLOTS, PixelSlots
from ufo_mobile.core.ui.png import encode_png
from ufo_mobile.core.ui.screenshot import BLANK_MAX_BYTES, decode, is_blank_image, png_size, shrink

THUMBNAIL_SIDE = 720  # the longest side of the report's pictures
CLEAN_SIDE = 540  # the clean copy's longest side is at least this (the report's "after" figure)
# annotated.jpg: quality 80 with 4:2:0 chroma keeps the numbered labels readable at full size (checked
# by eye on real screenshots), at 17 ms and ~210 KiB for a 1080x2400 screen (docs/benchmarks.md)
ANNOTATED_QUALITY = 80
SMALL_QUALITY = 90  # the thumbnail and the clean copy: decoded again for the page, so lose little


def jpeg(image: Image.Image, quality: int) -> bytes:
    """``image`` as JPEG bytes (4:2:0 chroma)."""
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality, subsampling="4:2:0")
    return out.getvalue()


@dataclass(frozen=True)
class ModelImage:
    """The screenshot as the model gets it: PNG bytes (with the marks when asked), the same
    without marks when asked for (``clean``), and the factor from screen to image pixels."""

    png: bytes
    clean: bytes | None
    scale: float


@dataclass(frozen=True)
class RecordImages:
    """What the run's record keeps of a screen: ``annotated`` (``annotated.jpg``; None when the
    marks are not recorded), its ``thumbnail`` for the report (None likewise), the ``clean`` small
    copy of the screenshot, all JPEG bytes, and the screenshot's own ``size``."""

    annotated: bytes | None
    thumbnail: bytes | None
    clean: bytes
    size: tuple[int, int]


class ScreenImages:
    """The pictures of one screenshot and the controls observed with it (module docstring).

    Args:
        png: the screenshot as the phone sent it.
        controls: the controls to mark, their bounds in the screenshot's pixels.
        slots: the bound on screens holding full-size pixels (default: the process's, ``SLOTS``).
    """

    def __init__(self, png: bytes, controls: Sequence[Control], *, slots: PixelSlots | None = None) -> None:
        self.png = png
        self.controls = list(controls)
        self._slots = slots if slots is not None else SLOTS
        self._depth = 0  # nested working() calls under way
        self._working = False  # a working slot is held (taken by a decode, given back by working())
        self._kept: weakref.finalize[[], ScreenImages] | None = None  # set while a kept slot is held
        self._lock = threading.RLock()
        self._decoded: Image.Image | None = None
        self._marked: Image.Image | None = None
        self._half: Image.Image | None = None  # the marked picture halved: where the smaller ones start
        self._blank: bool | None = None
        self._models: dict[tuple[tuple[int, int], bool, bool], ModelImage] = {}
        self._clean_small: Image.Image | None = None  # kept before the marks are drawn
        self._clean: bytes | None = None
        self._annotated: bytes | None = None
        self._thumbnails: dict[int, bytes] = {}

    def decoded(self) -> Image.Image:
        """The screenshot's pixels (RGB). Raises ``UIParseError`` when it is not a readable image."""
        with self.working():
            if self._decoded is None:
                if not self._working and self._kept is None:
                    self._slots.enter()
                    self._working = True
                self._decoded = decode(self.png)
            return self._decoded

    def marked(self) -> Image.Image:
        """The screenshot with a numbered box per control, at full size (do not draw on it). The
        marks are drawn on the decoded pixels themselves (a full-size copy costs more than the
        drawing): ask for anything that needs the unmarked pixels first, or they are decoded again."""
        with self.working():
            if self._marked is None:
                image = self.decoded()
                if self._clean is None and self._clean_small is None:
                    self._clean_small = _reduced(image)
                self._decoded = None
                draw_marks(image, self.controls, 1.0)
                self._marked = image
            return self._marked

    def blank(self) -> bool:
        """Whether the screenshot is black: what Android hands out for a secure (FLAG_SECURE) screen."""
        with self.working():
            if self._blank is None:
                # a black screen compresses to a few kB; a real one never gets under this size
                self._blank = len(self.png) <= BLANK_MAX_BYTES and is_blank_image(self.decoded())
            return self._blank

    def model_image(self, size: tuple[int, int], *, marks: bool = True, clean: bool = False) -> ModelImage:
        """The picture for the model at ``size`` (never larger than the screenshot)."""
        key = (size, marks, clean)
        with self.working():
            found = self._models.get(key)
            if found is None:
                width = png_size(self.png)[0]
                target, _ = self.model_size(size)
                # the unmarked pixels first: marking draws on them
                plain = encode_png(shrink(self.decoded(), target)) if clean or not marks else None
                if marks:
                    shown = self._shrunk(target)
                    sent = encode_png(shown)
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

    def annotated_jpeg(self) -> bytes:
        """``annotated.jpg``: the full-size set-of-mark screenshot as JPEG bytes."""
        with self.working():
            if self._annotated is None:
                self._annotated = jpeg(self.marked(), ANNOTATED_QUALITY)
            return self._annotated

    def thumbnail_jpeg(self, longest_side: int = THUMBNAIL_SIDE) -> bytes:
        """The full-size marked picture shrunk so that its longest side is at most ``longest_side``,
        as JPEG bytes: what the report shows (it makes the same from ``annotated.jpg`` without it)."""
        with self.working():
            found = self._thumbnails.get(longest_side)
            if found is None:
                width, height = png_size(self.png)
                factor = min(1.0, longest_side / max(width, height))
                size = (max(1, round(width * factor)), max(1, round(height * factor)))
                found = self._thumbnails[longest_side] = jpeg(self._shrunk(size), SMALL_QUALITY)
            return found

    def clean_jpeg(self) -> bytes:
        """The screenshot without marks, reduced by an integer factor to at least ``CLEAN_SIDE`` on
        its longest side, as JPEG bytes. Kept from before the marks are drawn: made after them, it
        decodes the screenshot again."""
        with self.working():
            if self._clean is None:
                small = self._clean_small if self._clean_small is not None else _reduced(self.decoded())
                self._clean = jpeg(small, SMALL_QUALITY)
                self._clean_small = None
            return self._clean

    def record(self, *, annotated: bool = True) -> RecordImages:
        """The pictures the run's record keeps (``RecordImages``); the marked ones when ``annotated``."""
        with self.working():
            clean = self.clean_jpeg()  # first: the marks are drawn on the decoded pixels
            full = self.annotated_jpeg() if annotated else None
            return RecordImages(full, self.thumbnail_jpeg() if annotated else None, clean, png_size(self.png))

    @property
    def holds_pixels(self) -> bool:
        """Whether full-size pixels (decoded or marked) are held: none after ``release``."""
        return self._decoded is not None or self._marked is not None

    @contextmanager
    def working(self) -> Iterator[None]:
        """Hold this screen (its lock) for the block; calls nest. A decode inside takes a working
        slot first, held to the end of the outermost block; pixels still held then are kept if a
        kept slot is free, else let go (module docstring). Pictures already made take no slot."""
        with self._lock:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._working:
                    self._working = False
                    try:
                        if self._decoded is not None or self._marked is not None or self._half is not None:
                            self._keep_or_drop()
                    finally:
                        self._slots.leave()

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
            self._unkeep()

    def _keep_or_drop(self) -> None:
        if self._kept is None and self._slots.keep():
            # a ScreenImages dropped without release() gives its kept slot back all the same
            self._kept = weakref.finalize(self, self._slots.unkeep)
        elif self._kept is None:
            self._decoded = self._marked = self._half = None

    def _unkeep(self) -> None:
        if self._kept is not None:
            self._kept()  # runs slots.unkeep once; the finalizer is spent
            self._kept = None


def _reduced(image: Image.Image) -> Image.Image:
    """``image`` box-reduced by the largest integer factor that keeps ``CLEAN_SIDE`` on its longest side."""
    factor = max(1, max(image.size) // CLEAN_SIDE)
    return image.reduce(factor) if factor > 1 else image.copy()
