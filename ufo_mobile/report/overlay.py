"""The marks on the report's pictures, drawn by the browser: an inline SVG laid over the picture,
in the picture's own pixels (``viewBox="0 0 W H"``), so the picture itself is embedded as the
JPEG it already is, never decoded, drawn on and encoded again.

``target_marks`` draws the action's target (a box, touch points, a swipe's line) in magenta with a
white halo; ``change_marks`` draws the regions that changed after the action in cyan with the same
halo; ``framed`` puts the picture and its marks together. A stroke runs inside a box's edges, as
Pillow draws an outline: the box's first and last pixels are covered. The colours and the line
widths are those of ``images.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ufo_mobile.report.images import CHANGED, HALO, HIGHLIGHT, Mark

_Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Marks:
    """SVG shapes for one picture, and the target's box in the picture's pixels (when there is one)."""

    shapes: str = ""
    box: _Box | None = None


def _colour(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _outline(box: _Box, width: int, colour: tuple[int, int, int]) -> str:
    """A rectangle covering the pixels ``box`` (inclusive) whose stroke of ``width`` runs inside it."""
    left, top, right, bottom = box
    half = width / 2
    return (f'<rect x="{_n(left + half)}" y="{_n(top + half)}" width="{_n(max(0.0, right + 1 - left - width))}" '
            f'height="{_n(max(0.0, bottom + 1 - top - width))}" stroke="{_colour(colour)}" stroke-width="{width}"/>')


def _ring(x: int, y: int, radius: int, width: int, colour: tuple[int, int, int]) -> str:
    """A circle over the pixels ``x - radius .. x + radius`` whose stroke runs inside that square."""
    return (f'<circle cx="{_n(x + 0.5)}" cy="{_n(y + 0.5)}" r="{_n(max(0.0, radius + 0.5 - width / 2))}" '
            f'stroke="{_colour(colour)}" stroke-width="{width}"/>')


def _clip(box: _Box, size: tuple[int, int]) -> _Box:
    """``box`` (right and bottom exclusive) as the inclusive pixels it covers inside a picture of ``size``."""
    left, top, right, bottom = box
    width, height = size
    return (max(0, left), max(0, top), min(width - 1, max(left, right - 1)), min(height - 1, max(top, bottom - 1)))


def _scaled(box: _Box, scale: float) -> _Box:
    return round(box[0] * scale), round(box[1] * scale), round(box[2] * scale), round(box[3] * scale)


def _grow(box: _Box, by: int) -> _Box:
    return box[0] - by, box[1] - by, box[2] + by, box[3] + by


def target_marks(mark: Mark, scale: float, size: tuple[int, int]) -> Marks:
    """``mark`` (screen pixels) times ``scale`` over a picture of ``size``: a box with a halo, and
    each touch point a ring (two points without a box: a swipe, joined by a line)."""
    line = max(3, round(max(size) / 200))
    shapes: list[str] = []
    box = None
    if mark.box is not None:
        box = _clip(_scaled(mark.box, scale), size)
        shapes += [_outline(_grow(box, line), line + 2, HALO), _outline(box, line, HIGHLIGHT)]
    points = [(round(x * scale), round(y * scale)) for x, y in mark.points]
    if len(points) == 2 and mark.box is None:
        (x1, y1), (x2, y2) = points
        shapes.append(f'<line x1="{_n(x1 + 0.5)}" y1="{_n(y1 + 0.5)}" x2="{_n(x2 + 0.5)}" y2="{_n(y2 + 0.5)}" '
                      f'stroke="{_colour(HIGHLIGHT)}" stroke-width="{line}"/>')
    for x, y in points:
        radius = line * 4
        shapes += [_ring(x, y, radius + 2, line + 2, HALO), _ring(x, y, radius, line, HIGHLIGHT)]
    return Marks("".join(shapes), box)


def change_marks(boxes: Iterable[_Box], scale: float, size: tuple[int, int]) -> Marks:
    """``boxes`` (right and bottom exclusive, in pixels ``scale`` times the picture's) as cyan
    outlines with a halo over a picture of ``size``."""
    line = max(3, round(max(size) / 180))
    shapes = []
    for found in boxes:
        shown = _clip(_scaled(found, scale), size)
        shapes += [_outline(_grow(shown, line), line, HALO), _outline(shown, line, CHANGED)]
    return Marks("".join(shapes))


def framed(image: str, size: tuple[int, int], marks: Marks) -> str:
    """``image`` (an ``<img>`` of ``size``) with ``marks`` laid over it; the image alone without marks."""
    if not marks.shapes:
        return image
    width, height = size
    return (f'<span class="frame">{image}<svg class="marks" viewBox="0 0 {width} {height}" '
            f'preserveAspectRatio="none" fill="none" aria-hidden="true">{marks.shapes}</svg></span>')
