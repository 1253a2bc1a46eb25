"""The pictures of one observed screen, made from one decode of its screenshot, each at most once.

An observation needs several pictures of the same screen: the model's (the set-of-mark at the size
the tile budget allows), and the run's record (``record``): the run directory's ``annotated.jpg``,
the report's thumbnail of that (``THUMBNAIL_SIDE``) and a small clean copy of the screenshot (at
least ``CLEAN_SIDE`` on its longest side: the report's "after" figure and change boxes). All are
JPEG, made by Pillow.

``ScreenImages`` decodes the screenshot once and reduces it at once by a whole factor (a box
average: ``Image.reduce``) to the working picture, the largest such reduction that keeps at least
``ANNOTATED_SIDE`` pixels on its longest side: a 1080x2400 phone's screenshot is halved to 540x1200.
The marks are drawn once, on a copy of that, and it is ``annotated.jpg``; the model's picture and the
thumbnail are shrunk from it (``shrink``), the clean copy is reduced from the unmarked working
picture. Full-size marks are drawn only for a model picture larger than the working picture (a
tile budget above the default), on the decoded pixels. Working at the reduced size costs a quarter
of the pixels for every job after the decode, and nothing the pictures show is lost: the model's
and the report's pictures are smaller still, and the run directory keeps the full-size
``screenshot.png`` as the phone sent it.

The model's picture is JPEG at quality 90 without chroma subsampling: on the real screenshots
(``bench/images.py``) a third of what the PNG writer (``ui/png.py``) costs for it, at about half its
bytes and 40-43 dB PSNR (no visible change, the small label numbers included), and a model's image
tokens depend only on the picture's size.

Each picture is made on first use and kept, so a screen observed again unchanged costs nothing
more. The methods are thread-safe (the model phase makes the pictures in a worker thread).
``release`` drops the decoded pixels (a phone screen is about 8 MB of them) once the pictures are
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
from ufo_mobile.core.ui.screenshot import BLANK_MAX_BYTES, decode, is_blank_image, png_size, shrink

THUMBNAIL_SIDE = 720  # the longest side of the report's pictures
CLEAN_SIDE = 540  # the clean copy's longest side is at least this (the report's "after" figure)
ANNOTATED_SIDE = 1200  # the working picture (annotated.jpg) keeps at least this on its longest side
# annotated.jpg: quality 85 with 4:2:0 chroma keeps the numbered labels readable at the working size
# (checked by eye on the real screenshots; docs/benchmarks.md has its cost and size)
ANNOTATED_QUALITY = 85
SMALL_QUALITY = 90  # the thumbnail and the clean copy: decoded again for the page, so lose little
MODEL_QUALITY = 90  # the model's picture, without chroma subsampling (module docstring)


def jpeg(image: Image.Image, quality: int, *, subsampling: str = "4:2:0") -> bytes:
    """``image`` as JPEG bytes (4:2:0 chroma unless told otherwise)."""
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality, subsampling=subsampling)
    return out.getvalue()


def model_jpeg(image: Image.Image) -> bytes:
    """The model's picture as JPEG bytes (``MODEL_QUALITY``, every pixel's own colour)."""
    return jpeg(image, MODEL_QUALITY, subsampling="4:4:4")


@dataclass(frozen=True)
class ModelImage:
    """The screenshot as the model gets it: JPEG bytes (with the marks when asked), the same
    without marks when asked for (``clean``), and the factor from screen to image pixels."""

    data: bytes
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
        self._work: Image.Image | None = None  # the working picture, unmarked
        self._work_marked: Image.Image | None = None
        self._full_marked: Image.Image | None = None  # only for a model picture larger than the working one
        self._blank: bool | None = None
        self._models: dict[tuple[tuple[int, int], bool, bool], ModelImage] = {}
        self._clean: bytes | None = None
        self._annotated: bytes | None = None
        self._thumbnails: dict[int, bytes] = {}

    def decoded(self) -> Image.Image:
        """The screenshot's pixels (RGB), unmarked. Raises ``UIParseError`` when it is not a readable image."""
        with self.working():
            if self._decoded is None:
                if not self._working and self._kept is None:
                    self._slots.enter()
                    self._working = True
                self._decoded = decode(self.png)
            return self._decoded

    @property
    def factor(self) -> int:
        """Screenshot pixels per working-picture pixel, along each side."""
        return working_factor(png_size(self.png))

    def working_picture(self) -> Image.Image:
        """The unmarked screenshot reduced by ``factor`` (do not draw on it)."""
        with self.working():
            if self._work is None:
                self._work = _working(self.decoded())
            return self._work

    def marked(self) -> Image.Image:
        """The working picture with a numbered box per control: ``annotated.jpg`` (do not draw on it)."""
        with self.working():
            if self._work_marked is None:
                image = self.working_picture().copy()
                draw_marks(image, self.controls, 1 / self.factor)
                self._work_marked = image
            return self._work_marked

    def blank(self) -> bool:
        """Whether the screenshot is black: what Android hands out for a secure (FLAG_SECURE) screen."""
        with self.working():
            if self._blank is None:
                # a black screen compresses to a few kB; a real one never gets under this size. Judged
                # on the working picture, which every picture after is made from: a box average of
                # a box average, and a tenth of the work on the full-size pixels
                self._blank = len(self.png) <= BLANK_MAX_BYTES and is_blank_image(self.working_picture())
            return self._blank

    def model_image(self, size: tuple[int, int], *, marks: bool = True, clean: bool = False) -> ModelImage:
        """The picture for the model at ``size`` (never larger than the screenshot)."""
        key = (size, marks, clean)
        with self.working():
            found = self._models.get(key)
            if found is None:
                target, scale = self.model_size(size)
                plain = model_jpeg(self._unmarked(target)) if clean or not marks else None
                sent = model_jpeg(self._marked(target)) if marks else plain
                assert sent is not None
                found = ModelImage(sent, plain if clean else None, scale)
                self._models[key] = found
            return found

    def model_size(self, size: tuple[int, int]) -> tuple[tuple[int, int], float]:
        """The size ``model_image(size)`` has (never larger than the screenshot) and its factor from
        screenshot to picture pixels, known without making it."""
        width, height = png_size(self.png)
        target = (min(size[0], width), min(size[1], height))
        return target, target[0] / width

    def annotated_jpeg(self) -> bytes:
        """``annotated.jpg``: the marked working picture as JPEG bytes."""
        with self.working():
            if self._annotated is None:
                self._annotated = jpeg(self.marked(), ANNOTATED_QUALITY)
            return self._annotated

    def thumbnail_jpeg(self, longest_side: int = THUMBNAIL_SIDE) -> bytes:
        """The marked picture shrunk so that its longest side is at most ``longest_side``, as JPEG
        bytes: what the report shows (it makes the same from ``annotated.jpg`` without it)."""
        with self.working():
            found = self._thumbnails.get(longest_side)
            if found is None:
                size = fitted(png_size(self.png), longest_side)
                found = self._thumbnails[longest_side] = jpeg(self._marked(size), SMALL_QUALITY)
            return found

    def clean_jpeg(self) -> bytes:
        """The screenshot without marks, reduced by a whole factor to at least ``CLEAN_SIDE`` on its
        longest side, as JPEG bytes."""
        with self.working():
            if self._clean is None:
                self._clean = jpeg(_clean_of_working(self.working_picture()), SMALL_QUALITY)
            return self._clean

    def record(self, *, annotated: bool = True) -> RecordImages:
        """The pictures the run's record keeps (``RecordImages``); the marked ones when ``annotated``."""
        with self.working():
            clean = self.clean_jpeg()
            full = self.annotated_jpeg() if annotated else None
            return RecordImages(full, self.thumbnail_jpeg() if annotated else None, clean, png_size(self.png))

    @property
    def holds_pixels(self) -> bool:
        """Whether any decoded pixels (the screenshot's or a picture drawn from them) are held: none
        after ``release``."""
        return any(image is not None for image in self._pixels())

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
                        if self.holds_pixels:
                            self._keep_or_drop()
                    finally:
                        self._slots.leave()

    def _marked(self, size: tuple[int, int]) -> Image.Image:
        """The marked screenshot at ``size``: shrunk from the working picture when that is at least
        as large, else from a full-size drawing of the marks."""
        work = self.marked() if self._fits(size) else self._marked_full_size()
        return shrink(work, size)

    def _unmarked(self, size: tuple[int, int]) -> Image.Image:
        return shrink(self.working_picture() if self._fits(size) else self.decoded(), size)

    def _fits(self, size: tuple[int, int]) -> bool:
        width, height = png_size(self.png)
        return size[0] * self.factor <= width and size[1] * self.factor <= height

    def _marked_full_size(self) -> Image.Image:
        if self._full_marked is None:
            image = self.decoded().copy()
            draw_marks(image, self.controls, 1.0)
            self._full_marked = image
        return self._full_marked

    def _pixels(self) -> tuple[Image.Image | None, ...]:
        return self._decoded, self._work, self._work_marked, self._full_marked

    def release(self) -> None:
        """Drop the pixels; the pictures made so far stay."""
        with self._lock:
            self._drop()
            self._unkeep()

    def _drop(self) -> None:
        self._decoded = self._work = self._work_marked = self._full_marked = None

    def _keep_or_drop(self) -> None:
        if self._kept is None and self._slots.keep():
            # a ScreenImages dropped without release() gives its kept slot back all the same
            self._kept = weakref.finalize(self, self._slots.unkeep)
        elif self._kept is None:
            self._drop()

    def _unkeep(self) -> None:
        if self._kept is not None:
            self._kept()  # runs slots.unkeep once; the finalizer is spent
            self._kept = None


def clean_copy(image: Image.Image) -> Image.Image:
    """The small clean copy of a full-size screenshot, the same size ``ScreenImages.clean_jpeg``
    keeps: reduced by the working factor, then by the whole factor that keeps ``CLEAN_SIDE``."""
    return _clean_of_working(_working(image))


def fitted(size: tuple[int, int], longest_side: int) -> tuple[int, int]:
    """``size`` scaled down (never up) so that its longest side is at most ``longest_side``."""
    factor = min(1.0, longest_side / max(size))
    return (max(1, round(size[0] * factor)), max(1, round(size[1] * factor))) if factor < 1.0 else size


def _working(image: Image.Image) -> Image.Image:
    """A full-size screenshot reduced to its working picture (``working_factor``)."""
    return _reduced(image, working_factor(image.size))


def _clean_of_working(image: Image.Image) -> Image.Image:
    return _reduced(image, max(1, max(image.size) // CLEAN_SIDE))


def _reduced(image: Image.Image, factor: int) -> Image.Image:
    return image.reduce(factor) if factor > 1 else image


def working_factor(size: tuple[int, int]) -> int:
    """The whole factor the working picture is reduced by: the largest that keeps at least
    ``ANNOTATED_SIDE`` pixels on the screenshot's longest side (1 for a screen smaller than that)."""
    return max(1, max(size) // ANNOTATED_SIDE)
