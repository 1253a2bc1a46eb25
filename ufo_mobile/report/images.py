"""Screenshots for the report as ``data:`` URIs of small JPEGs: the small copy a run kept of a
screenshot, as it is, while the file is unchanged (``picture``, ``kept_picture``), else the file
decoded and shrunk (``small_picture``); and what an action pointed at (``mark_of``), drawn over the
picture by ``overlay.py`` in a colour set-of-mark never uses (the regions that changed after an
action in another such colour).

The action's target is found from its arguments: ``index`` (a control, whose bounds come from the
step's ``controls.json``), ``x``/``y`` (a point), ``x1``..``y2`` (an area) or ``coordinate`` and
``coordinate2`` (a swipe). Bounds are in screen pixels; a picture's ``scale`` turns them into its own.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from ufo_mobile.core.trace.writer import Thumbnail
from ufo_mobile.core.ui.screen_images import THUMBNAIL_SIDE, fitted
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
    scale: float = 1.0  # screen pixels -> the picture's pixels


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


def picture(path: Path, *, screen_size: tuple[int, int] | None = None, longest_side: int = LONGEST_SIDE,
            thumbnail: Thumbnail | None = None) -> Picture | None:
    """``path`` shrunk to ``longest_side`` as a JPEG data URI, with the factor from screen pixels to
    the picture's (``scale``); None when the file is missing or not an image. ``thumbnail``: the
    same shrunk picture, kept by the run that wrote the file: while the file is unchanged its JPEG
    is the picture as it is, nothing decoded or encoded."""
    kept = _kept_jpeg(path, thumbnail) if thumbnail is not None else None
    if kept is not None and thumbnail is not None and kept[1] == fitted(thumbnail.source_size, longest_side):
        original_width, shown = thumbnail.source_size[0], _uri(*kept)
    else:
        opened = open_rgb(path)
        if opened is None:
            return None
        original_width, shown = opened.width, small_picture(opened, longest_side)
    # screen pixels -> picture pixels (the screenshot may itself be smaller than the screen)
    scale = shown.width / (screen_size[0] if screen_size and screen_size[0] > 0 else original_width)
    return Picture(shown.uri, shown.width, shown.height, scale)


def kept_picture(path: Path, thumbnail: Thumbnail | None, min_side: int = 1) -> Picture | None:
    """The JPEG of ``thumbnail`` (a small copy of ``path`` the run kept) as it is, when it stands for
    ``path`` and its longest side is at least ``min_side``; else None."""
    kept = _kept_jpeg(path, thumbnail) if thumbnail is not None else None
    return _uri(*kept) if kept is not None and max(kept[1]) >= min_side else None


def small_picture(image: Image.Image, longest_side: int = LONGEST_SIDE) -> Picture:
    """``image`` shrunk to ``longest_side``, as a JPEG data URI."""
    size = fitted(image.size, longest_side)
    out = io.BytesIO()
    (shrink(image, size) if size != image.size else image).save(out, format="JPEG", quality=JPEG_QUALITY,
                                                                 optimize=True)
    return _uri(out.getvalue(), size)


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


def _uri(jpeg: bytes, size: tuple[int, int]) -> Picture:
    return Picture("data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii"), size[0], size[1])


def _kept_jpeg(path: Path, thumbnail: Thumbnail) -> tuple[bytes, tuple[int, int]] | None:
    """The thumbnail's JPEG and its size (from its header: nothing decoded) when it stands for
    ``path`` (the file is unchanged) and is a JPEG (what the page embeds it as); else None."""
    if not thumbnail.matches(path):
        return None
    try:
        with Image.open(io.BytesIO(thumbnail.jpeg)) as opened:
            return (thumbnail.jpeg, opened.size) if opened.format == "JPEG" else None
    except (OSError, UnidentifiedImageError, ValueError):
        return None


def kept_copy(path: Path, thumbnail: Thumbnail, min_side: int = 1, *, at_least: int = 0) -> Image.Image | None:
    """The pixels of ``thumbnail`` (a small copy of ``path`` the run kept), when it stands for
    ``path`` (the file is unchanged) and its longest side is at least ``min_side``; else None.
    ``at_least``: a longest side the caller shrinks to anyway: the JPEG is decoded at the smallest
    reduction (a half, a quarter, an eighth) that keeps at least that many pixels."""
    if not thumbnail.matches(path):
        return None
    try:
        with Image.open(io.BytesIO(thumbnail.jpeg)) as opened:
            if max(opened.size) < min_side:
                return None
            if at_least:
                opened.draft("RGB", fitted(opened.size, at_least))
            return opened.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError):
        return None
