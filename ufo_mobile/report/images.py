"""Screenshots for the report: downscaled, JPEG-encoded, with what the action pointed at drawn
on top in a colour set-of-mark never uses (``picture``), or, on the screen after an action, the
regions that changed (``changes_picture``, in another such colour), as ``data:`` URIs.

The action's target is found from its arguments: ``index`` (a control, whose bounds come from the
step's ``controls.json``), ``x``/``y`` (a point), ``x1``..``y2`` (an area) or ``coordinate`` and
``coordinate2`` (a swipe). Bounds are in screen pixels and are scaled to the image drawn.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, UnidentifiedImageError

from ufo_mobile.core.trace.writer import Thumbnail
from ufo_mobile.core.ui.screen_images import THUMBNAIL_SIDE
from ufo_mobile.core.ui.screenshot import shrink

LONGEST_SIDE = THUMBNAIL_SIDE  # 720: the run keeps thumbnails of its annotated screenshots at this size
JPEG_QUALITY = 80
HIGHLIGHT = (255, 0, 200)  # magenta: no control kind is drawn in it
HALO = (255, 255, 255)
CHANGED = (0, 200, 255)  # cyan: what changed on the screen after the action (no control kind uses it)

_Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Mark:
    """What an action pointed at, in screen pixels: a box (a control, an area) and/or points."""

    box: _Box | None = None
    points: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Picture:
    """An image ready for the page."""

    uri: str
    width: int
    height: int
    box: _Box | None = None  # the highlight box in the picture's pixels


def mark_of(action: dict[str, Any] | None, controls: list[dict[str, Any]] | None) -> Mark | None:
    """The target of ``action`` (a parsed reply's action), or None when it names none."""
    args = action.get("args") if action else None
    if not isinstance(args, dict):
        return None
    index = args.get("index")
    if isinstance(index, int) and not isinstance(index, bool):
        for control in controls or ():
            bounds = _numbers(control.get("bounds"), 4)
            if control.get("index") == index and bounds is not None:
                return Mark(box=(bounds[0], bounds[1], bounds[2], bounds[3]))
        return None
    area = _numbers([args.get(k) for k in ("x1", "y1", "x2", "y2")], 4)
    if area is not None:
        return Mark(box=(area[0], area[1], area[2], area[3]))
    found = [_numbers(p, 2) for p in ([args.get("x"), args.get("y")], args.get("coordinate"), args.get("coordinate2"))]
    points = tuple((p[0], p[1]) for p in found if p is not None)
    return Mark(points=points) if points else None


def _numbers(value: Any, size: int) -> list[int] | None:
    """``value`` as ``size`` whole numbers, or None when it is not a list of that many numbers."""
    if not isinstance(value, list | tuple) or len(value) != size:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return None
    return [round(v) for v in value]


def picture(path: Path, *, screen_size: tuple[int, int] | None = None, mark: Mark | None = None,
            longest_side: int = LONGEST_SIDE, thumbnail: Thumbnail | None = None) -> Picture | None:
    """``path`` shrunk to ``longest_side``, ``mark`` drawn on it, as a JPEG data URI; None when the
    file is missing or not an image. ``thumbnail``: the same shrunk picture, kept by the run that
    wrote the file, used instead of decoding the file while the file is unchanged."""
    found = _from_thumbnail(path, thumbnail, longest_side) if thumbnail is not None else None
    if found is not None:
        image, original_width = found
    else:
        opened = open_rgb(path)
        if opened is None:
            return None
        image, original_width = opened, opened.width
        size = _shrunk_size(image.size, longest_side)
        if size != image.size:
            image = shrink(image, size)
    # screen pixels -> picture pixels (the screenshot may itself be smaller than the screen)
    scale = image.width / screen_size[0] if screen_size and screen_size[0] > 0 else image.width / original_width
    box = draw_mark(image, mark, scale) if mark is not None else None
    return _encoded(image, box)


def changes_picture(image: Image.Image, boxes: Iterable[_Box], *, longest_side: int = LONGEST_SIDE) -> Picture:
    """``image`` (a screenshot) shrunk to ``longest_side`` with ``boxes`` (its own pixels: the
    regions that changed) drawn on it in ``CHANGED``, as a JPEG data URI."""
    size = _shrunk_size(image.size, longest_side)
    small = shrink(image, size) if size != image.size else image.copy()
    scale = small.width / image.width
    draw = ImageDraw.Draw(small)
    line = max(3, round(max(small.size) / 180))
    for box in boxes:
        left, top, right, bottom = (round(v * scale) for v in box)
        shown = (max(0, left), max(0, top), min(small.width - 1, max(left, right - 1)),
                 min(small.height - 1, max(top, bottom - 1)))
        draw.rectangle(_grow(shown, line), outline=HALO, width=line)
        draw.rectangle(shown, outline=CHANGED, width=line)
    return _encoded(small, None)


def open_rgb(path: Path) -> Image.Image | None:
    """The image in ``path`` as RGB pixels, or None when it is missing or not an image."""
    unreadable = (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError)
    try:
        opened = Image.open(path)
    except unreadable:
        return None
    try:
        opened.load()  # reads the pixels and closes the file
    except unreadable:
        opened.close()
        return None
    return opened if opened.mode == "RGB" else opened.convert("RGB")  # no copy of an RGB screenshot


def _encoded(image: Image.Image, box: _Box | None) -> Picture:
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    uri = "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")
    return Picture(uri=uri, width=image.width, height=image.height, box=box)


def _shrunk_size(size: tuple[int, int], longest_side: int) -> tuple[int, int]:
    factor = min(1.0, longest_side / max(size))
    return (max(1, round(size[0] * factor)), max(1, round(size[1] * factor))) if factor < 1.0 else size


def _from_thumbnail(path: Path, thumbnail: Thumbnail, longest_side: int) -> tuple[Image.Image, int] | None:
    """The thumbnail's picture and the original's width, when it stands for ``path`` at this size."""
    image = kept_copy(path, thumbnail)
    if image is None or image.size != _shrunk_size(thumbnail.source_size, longest_side):
        return None
    return image, thumbnail.source_size[0]


def kept_copy(path: Path, thumbnail: Thumbnail, min_side: int = 1) -> Image.Image | None:
    """The pixels of ``thumbnail`` (a small copy of ``path`` the run kept), when it stands for
    ``path`` (the file is unchanged) and its longest side is at least ``min_side``; else None."""
    if not thumbnail.matches(path):
        return None
    try:
        with Image.open(io.BytesIO(thumbnail.jpeg)) as opened:
            image = opened.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError):
        return None
    return image if max(image.size) >= min_side else None


def draw_mark(image: Image.Image, mark: Mark, scale: float) -> _Box | None:
    """Draw ``mark`` on ``image`` (screen pixels times ``scale``); returns the box drawn, if any."""
    draw = ImageDraw.Draw(image)
    line = max(3, round(max(image.size) / 200))
    box = None
    if mark.box is not None:
        left, top, right, bottom = (round(v * scale) for v in mark.box)
        box = (max(0, left), max(0, top), min(image.width - 1, max(left, right - 1)),
               min(image.height - 1, max(top, bottom - 1)))
        draw.rectangle(_grow(box, line), outline=HALO, width=line + 2)  # a halo: visible on any colour
        draw.rectangle(box, outline=HIGHLIGHT, width=line)
    points = [(round(x * scale), round(y * scale)) for x, y in mark.points]
    if len(points) == 2 and mark.box is None:
        draw.line(points, fill=HIGHLIGHT, width=line)
    for x, y in points:
        radius = line * 4
        draw.ellipse((x - radius - 2, y - radius - 2, x + radius + 2, y + radius + 2), outline=HALO, width=line + 2)
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=HIGHLIGHT, width=line)
    return box


def _grow(box: _Box, by: int) -> _Box:
    return box[0] - by, box[1] - by, box[2] + by, box[3] + by
