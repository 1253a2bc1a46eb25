"""Set-of-mark screenshots: a numbered box per control, coloured by control kind.

Labels sit at a corner of their box and move to another corner, or just outside the box, when
they would cover a label already placed (nested controls share corners). Sizes scale with the
image, and the fonts are the machine's own, picked by family (``ui/fonts.py``: Noto where it is
installed, so output is the same on every machine that has it). ``render_blank`` draws a
wireframe of the controls for when there is no screenshot; its labels are drawn in whatever script
they are in (Cyrillic, CJK, Arabic...), not as empty boxes, where a font for it is installed.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from ufo_mobile.core.ui.controls import Control, ControlKind
from ufo_mobile.core.ui.fonts import draw_text, label_font, text_width
from ufo_mobile.core.ui.hierarchy import Bounds
from ufo_mobile.core.ui.png import encode_png
from ufo_mobile.core.ui.screenshot import decode, shrink

#: Box and label colour per control kind (RGB).
KIND_COLORS: dict[ControlKind, tuple[int, int, int]] = {
    ControlKind.BUTTON: (220, 38, 38),
    ControlKind.EDIT: (37, 99, 235),
    ControlKind.TOGGLE: (147, 51, 234),
    ControlKind.SCROLL: (217, 119, 6),
    ControlKind.IMAGE: (22, 163, 74),
    ControlKind.TEXT: (71, 85, 105),
}
_Rect = tuple[int, int, int, int]


def annotate(png: bytes, controls: Sequence[Control], *, scale: float | None = None,
             screen_size: tuple[int, int] | None = None) -> bytes:
    """Draw a numbered box for every control on the screenshot ``png``; returns PNG bytes.

    Args:
        scale: image pixels per screen pixel; by default derived from ``screen_size`` (the size the
            control bounds refer to) or 1.0 when that is not given either.
    """
    image = decode(png)
    if scale is None:
        scale = image.width / screen_size[0] if screen_size else 1.0
    draw_marks(image, controls, scale)
    return encode_png(image)


def render_blank(controls: Sequence[Control], size: tuple[int, int], *, scale: float = 1.0) -> bytes:
    """A wireframe of the controls on a plain background (``size`` = image width, height); PNG bytes."""
    width, height = max(1, size[0]), max(1, size[1])
    image = Image.new("RGB", (width, height), (248, 248, 246))
    draw = ImageDraw.Draw(image)
    font_size = max(9, _label_size(width, height) * 2 // 3)
    for control in sorted(controls, key=lambda c: -c.bounds.area):
        rect = _scaled(control.bounds, scale)
        draw.rectangle(rect, outline=(170, 170, 170), width=1)
        if control.label:
            _draw_clipped_text(draw, rect, control.label, font_size)
    return encode_png(image)


def shrink_to(png: bytes, size: tuple[int, int]) -> tuple[bytes, float]:
    """``png`` resized to exactly ``size`` (never enlarged; see ``screenshot.shrink``); returns it and
    the factor from the original's width to the new one (1.0 when it already fits and is returned
    unchanged)."""
    image = decode(png)
    if size[0] >= image.width and size[1] >= image.height:
        return png, 1.0
    target = (max(1, min(size[0], image.width)), max(1, min(size[1], image.height)))
    return encode_png(shrink(image, target)), target[0] / image.width


def downscale(png: bytes, longest_side: int) -> tuple[bytes, float]:
    """Shrink ``png`` so its longest side is at most ``longest_side`` pixels.

    Returns the PNG for the model and the factor from original to new pixels (1.0 when the image
    was already small enough and is returned unchanged).
    """
    if longest_side <= 0:
        raise ValueError(f"longest_side must be positive, got {longest_side}")
    image = decode(png)
    factor = min(1.0, longest_side / max(image.width, image.height))
    return shrink_to(png, (max(1, round(image.width * factor)), max(1, round(image.height * factor))))


def layout_labels(controls: Sequence[Control], image_size: tuple[int, int],
                  scale: float = 1.0) -> dict[int, tuple[int, int, int, int]]:
    """Where each control's number goes: ``{index: (left, top, right, bottom)}`` in image pixels.

    Small controls choose first; each label takes the first spot (corners of its box, then just
    outside it) that does not cover a label already placed.
    """
    width, height = image_size
    font_size = _label_size(width, height)
    font = label_font(font_size)
    pad = max(2, font_size // 6)
    placed: dict[int, _Rect] = {}
    for control in sorted(controls, key=lambda c: (c.bounds.area, -c.index)):
        left, top, right, bottom = (round(v) for v in font.getbbox(str(control.index)))
        size = (right - left + 2 * pad, bottom - top + 2 * pad)
        placed[control.index] = _place_label(_scaled(control.bounds, scale), size,
                                             list(placed.values()), (0, 0, width, height))
    return placed


def draw_marks(image: Image.Image, controls: Sequence[Control], scale: float) -> None:
    """Draw the numbered boxes on ``image`` itself (control bounds times ``scale``)."""
    draw = ImageDraw.Draw(image)
    font = label_font(_label_size(image.width, image.height))
    line = max(2, round(min(image.width, image.height) / 400))
    for control in sorted(controls, key=lambda c: (-c.bounds.area, c.index)):
        # big boxes first, so nested ones stay visible on top
        draw.rectangle(_scaled(control.bounds, scale), outline=KIND_COLORS[control.kind], width=line)
    kinds = {control.index: control.kind for control in controls}
    for index, rect in layout_labels(controls, image.size, scale).items():
        draw.rectangle((rect[0], rect[1], rect[2] - 1, rect[3] - 1), fill=KIND_COLORS[kinds[index]])
        draw.text(((rect[0] + rect[2]) // 2, (rect[1] + rect[3]) // 2), str(index),
                  fill=(255, 255, 255), font=font, anchor="mm")


def _place_label(box: _Rect, size: tuple[int, int], placed: list[_Rect], limits: _Rect) -> _Rect:
    """The first free spot among the box's corners and the spots just outside it."""
    left, top, right, bottom = box
    w, h = size
    # Top right first: text in a row starts at the left, so a number there hides the least of it.
    spots = [
        (right - w, top), (left, top), (right - w, bottom - h), (left, top - h), (left, bottom - h),
        (left, bottom), (right - w, top - h), (right - w, bottom),
    ]
    candidates = [_clamp((x, y, x + w, y + h), limits) for x, y in spots]
    for rect in candidates:
        if not any(_overlap(rect, other) for other in placed):
            return rect
    for step in range(1, 12):  # slide along the top edge, then give up and accept the overlap
        rect = _clamp((left + step * w, top, left + (step + 1) * w, top + h), limits)
        if not any(_overlap(rect, other) for other in placed):
            return rect
    return min(candidates, key=lambda r: sum(_overlap_area(r, other) for other in placed))


def _draw_clipped_text(draw: ImageDraw.ImageDraw, rect: _Rect, text: str, size: int) -> None:
    left, top, right, bottom = rect
    room = right - left - 4
    if room <= 0 or bottom - top <= 6:
        return
    line = " ".join(text.split())
    width = text_width(draw, line, size)
    while line and width > room:
        line = line[: max(0, len(line) * room // max(1, int(width)) - 1)]
        width = text_width(draw, line, size)
    if line:  # vertically centred, clear of the number at the top corner
        draw_text(draw, (left + 2, (top + bottom) // 2), line, size, (60, 60, 60))


def _label_size(width: int, height: int) -> int:
    return max(16, min(48, round(min(width, height) / 26)))


def _scaled(bounds: Bounds, scale: float) -> _Rect:
    return (round(bounds.left * scale), round(bounds.top * scale),
            max(round(bounds.left * scale), round(bounds.right * scale) - 1),
            max(round(bounds.top * scale), round(bounds.bottom * scale) - 1))


def _clamp(rect: _Rect, limits: _Rect) -> _Rect:
    w, h = rect[2] - rect[0], rect[3] - rect[1]
    x = min(max(rect[0], limits[0]), max(limits[0], limits[2] - w))
    y = min(max(rect[1], limits[1]), max(limits[1], limits[3] - h))
    return x, y, x + w, y + h


def _overlap(a: _Rect, b: _Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _overlap_area(a: _Rect, b: _Rect) -> int:
    return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
