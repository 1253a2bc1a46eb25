"""Drawing primitives for the simulated screen: text with wrapping, icons, widgets.

A ``Canvas`` is an ``ImageDraw`` plus an origin, so a scroll container can be drawn into its own
clipped layer with the same code that draws the rest of the screen. Pillow's bundled scalable font
(``ImageFont.load_default(size=...)``) is the only font; it covers ASCII, so other scripts show
as boxes, while the XML still carries the exact text.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from PIL import ImageDraw, ImageFont

from ufo_mobile.sim.phone import theme
from ufo_mobile.sim.phone.view import PASSWORD_DOT, Rect

Box = tuple[int, int, int, int]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


class Fonts:
    """Font objects by pixel size plus a cache of text widths (measuring is the slow part).

    ``measure(size, text)`` is how a width is taken (Pillow's ``getlength`` unless given; tests pass
    one that counts). Only short texts (``CACHE_TEXT`` characters or fewer: words, glyphs, wrapped
    lines) are kept: a long text is measured at most once per wrap, and keeping it (or its prefixes)
    would hold its characters over and over.
    """

    _CACHE_LIMIT = 50_000
    CACHE_TEXT = 200
    #: A long text is measured in parts of at most this many characters, the widths summed (a
    #: kerning pair split at a seam is not kerned), for two limits of Pillow's: it refuses a string
    #: of more than ``ImageFont.MAX_STRING_LENGTH`` characters (a million since Pillow 10,
    #: ``ValueError``), and FreeType's 26.6 fixed-point pen overflows past 2**25 pixels, so a
    #: wider string measures negative (and a line that "fits" is then drawn whole: a gigapixel mask,
    #: ``DecompressionBombError``). ``_part`` also keeps a part narrower than 2**24 pixels.
    MEASURE_PART = 100_000

    def __init__(self, measure: Callable[[int, str], float] | None = None) -> None:
        self._fonts: dict[int, Font] = {}
        self._widths: dict[tuple[int, str], int] = {}
        self._lock = threading.RLock()
        self._measure = measure if measure is not None else self._getlength

    def get(self, size: int) -> Font:
        size = max(8, size)
        with self._lock:
            if size not in self._fonts:
                self._fonts[size] = ImageFont.load_default(size=size)
            return self._fonts[size]

    def _getlength(self, size: int, text: str) -> float:
        return self.get(size).getlength(text)

    def _part(self, size: int) -> int:
        """Characters measured at once at ``size``: a glyph is at most about twice its size wide."""
        return max(1, min(self.MEASURE_PART, (1 << 23) // max(8, size)))

    def width(self, size: int, text: str) -> int:
        """Advance width of ``text`` at ``size`` pixels."""
        key = (size, text)
        found = self._widths.get(key)
        if found is not None:
            return found
        with self._lock:
            part = self._part(size)
            if len(text) <= part:
                found = round(self._measure(size, text))
            else:
                found = round(sum(self._measure(size, text[start:start + part])
                                  for start in range(0, len(text), part)))
            if len(text) <= self.CACHE_TEXT:
                if len(self._widths) >= self._CACHE_LIMIT:
                    self._widths.clear()
                self._widths[key] = found
            return found


@dataclass
class Canvas:
    draw: ImageDraw.ImageDraw
    fonts: Fonts
    ox: int = 0
    oy: int = 0

    def box(self, rect: Rect) -> Box:
        return rect.left - self.ox, rect.top - self.oy, rect.right - self.ox, rect.bottom - self.oy

    def rect(self, rect: Rect, fill: str | None = None, outline: str | None = None, width: int = 1,
             radius: int = 0) -> None:
        if rect.width <= 0 or rect.height <= 0:
            return
        radius = min(radius, rect.width // 2, rect.height // 2)
        self.draw.rounded_rectangle(self.box(rect), radius=radius, fill=fill, outline=outline, width=width)

    def ellipse(self, rect: Rect, fill: str | None = None, outline: str | None = None,
                width: int = 1) -> None:
        self.draw.ellipse(self.box(rect), fill=fill, outline=outline, width=width)

    def line(self, points: list[tuple[int, int]], fill: str, width: int) -> None:
        self.draw.line([(x - self.ox, y - self.oy) for x, y in points], fill=fill, width=width, joint="curve")

    def polygon(self, points: list[tuple[int, int]], fill: str) -> None:
        self.draw.polygon([(x - self.ox, y - self.oy) for x, y in points], fill=fill)

    def text_at(self, x: int, y: int, text: str, font: Font, fill: str) -> None:
        self.draw.text((x - self.ox, y - self.oy), text, font=font, fill=fill)


_TOKENS = re.compile(r"\S+|\s+")


def wrap(text: str, fonts: Fonts, size: int, width: int, max_lines: int | None = None) -> list[str]:
    """Break ``text`` into lines no wider than ``width``: at spaces, or inside over-long words.

    Linear in the text: every word is measured once and widths are summed per word, so the result
    is stable and cheap to recompute; a word wider than a line is cut where the sum of its glyphs'
    advances passes ``width``, and each piece is measured once (``_pieces``). With ``max_lines``
    the wrap stops after that many lines (what a box of that many lines can show), so a long text
    costs no more than the part of it that is shown.
    """
    lines: list[str] = []
    for paragraph in _paragraphs(text):
        if _wrap_paragraph(paragraph, fonts, size, width, lines, max_lines):
            return lines[:max_lines]
    return lines


def _paragraphs(text: str) -> Iterator[str]:
    """``text.split("\n")``, one at a time (a wrap that stops early splits no further)."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _wrap_paragraph(paragraph: str, fonts: Fonts, size: int, width: int, lines: list[str],
                    most: int | None) -> bool:
    """Append the lines of one paragraph to ``lines``; True once there are ``most`` of them."""
    def full() -> bool:
        return most is not None and len(lines) >= most

    line, used = "", 0
    for match in _TOKENS.finditer(paragraph):
        word = match.group()
        advance = fonts.width(size, word)
        if not line or used + advance <= width:
            line, used = line + word, used + advance
        elif word.isspace():
            lines.append(line)
            line, used = "", 0
        else:
            lines.append(line.rstrip())
            line, used = word, advance
        if full():
            return True
        if used > width and len(line) > 1:  # one word (it starts the line) wider than the line
            pieces = _pieces(line, fonts, size, width)
            piece = next(pieces)
            if line.isspace():  # blanks at the start of a paragraph: one blank line, the rest dropped
                lines.append(piece)
                line, used = "", 0
            else:
                for following in pieces:
                    lines.append(piece)
                    if full():
                        return True
                    piece = following
                line, used = piece, fonts.width(size, piece)
            if full():
                return True
    lines.append(line)
    return full()


def _pieces(word: str, fonts: Fonts, size: int, width: int) -> Iterator[str]:
    """``word`` cut into pieces no wider than ``width`` (a piece has at least one character).

    A piece ends where the running sum of glyph advances (each glyph measured once, then cached)
    would pass ``width``; the piece itself is then measured once, and only when kerning or rounding
    makes it wider after all is it shortened by a binary search over that one piece.
    """
    start, count = 0, len(word)
    while start < count:
        end, used = start, 0
        while end < count:
            used += fonts.width(size, word[end])
            if used > width and end > start:
                break
            end += 1
        piece = word[start:end]
        if len(piece) > 1 and fonts.width(size, piece) > width:
            piece = piece[:_fit(fonts, size, piece, width)]
        yield piece
        start += len(piece)


def _fit(fonts: Fonts, size: int, text: str, width: int) -> int:
    """How many leading characters of ``text`` fit in ``width`` (at least one).

    Binary search over prefixes: callers pass text about a line long (a wrapped line, a piece).
    """
    low, high = 1, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if fonts.width(size, text[:mid]) <= width:
            low = mid
        else:
            high = mid - 1
    return low


def draw_lines(canvas: Canvas, left: int, top: int, lines: list[str], size: int, colour: str,
               clip: Rect | None = None) -> None:
    """Draw already wrapped lines from (left, top), one line height apart (those inside ``clip``)."""
    font = canvas.fonts.get(size)
    step = theme.line_height(size)
    for n, line in enumerate(lines):
        if _shows(top + n * step, step, clip):
            canvas.text_at(left, top + n * step + (step - size) // 2 - size // 8, line, font, colour)


def _shows(top: int, step: int, clip: Rect | None) -> bool:
    """Whether a line from ``top``, ``step`` high, reaches into ``clip`` (no clip: it does)."""
    return clip is None or (top + step > clip.top and top < clip.bottom)


def ellipsize(line: str, fonts: Fonts, size: int, width: int) -> str:
    if fonts.width(size, line) <= width:
        return line
    return line[:max(0, _fit(fonts, size, line + "...", width) - 3)].rstrip() + "..."


def draw_text(canvas: Canvas, rect: Rect, text: str, size: int, colour: str, *, align: str = "left",
              max_lines: int | None = None, valign: str = "center", clip: Rect | None = None) -> None:
    """Draw ``text`` wrapped inside ``rect``; extra lines are cut and the last one ellipsized.

    Only what can show is wrapped and drawn: the lines the box (and ``max_lines``) holds, and of
    those only the ones inside ``clip`` (the visible part of a view taller than its viewport).
    """
    if not text or rect.width <= 0:
        return
    fonts = canvas.fonts
    step = theme.line_height(size)
    fits = max(1, rect.height // step)
    limit = min(fits, max_lines) if max_lines else fits
    lines = wrap(text, fonts, size, rect.width, max_lines=limit + 1)
    cut = len(lines) > limit
    lines = lines[:limit]
    block = step * len(lines)
    top = rect.top + (rect.height - block) // 2 if valign == "center" else rect.top
    font = fonts.get(size)
    for n, line in enumerate(lines):
        if not _shows(top + n * step, step, clip):
            continue
        if cut and n == len(lines) - 1:
            line = line + " ..."
        line = ellipsize(line, fonts, size, rect.width)
        if PASSWORD_DOT in line:
            _dots(canvas, rect.left, top + n * step, step, len(line), colour)
            continue
        width = fonts.width(size, line)
        lefts = {"center": rect.left + (rect.width - width) // 2, "right": rect.right - width}
        left = lefts.get(align, rect.left)
        canvas.text_at(left, top + n * step + (step - size) // 2 - size // 8, line, font, colour)


def _dots(canvas: Canvas, left: int, top: int, step: int, count: int, colour: str) -> None:
    radius = max(3, step // 8)
    y = top + step // 2
    for n in range(count):
        x = left + radius + n * radius * 3
        canvas.ellipse(Rect(x - radius, y - radius, x + radius, y + radius), fill=colour)


def draw_icon(canvas: Canvas, rect: Rect, icon: str, colour: str) -> None:
    """Draw an icon glyph: ``<`` back arrow, ``>`` send, ``+`` add, ``x`` close, ``search`` a magnifier,
    ``list`` three lines (a list view), ``.`` a dot, else the text."""
    cx, cy = rect.center
    half = max(8, min(rect.width, rect.height) // 5)
    stroke = max(3, half // 4)
    if icon == "<":
        canvas.line([(cx + half, cy), (cx - half, cy)], colour, stroke)
        tip = [(cx - half // 5, cy - half), (cx - half, cy), (cx - half // 5, cy + half)]
        canvas.line(tip, colour, stroke)
    elif icon == ">":
        canvas.polygon([(cx - half, cy - half), (cx + half, cy), (cx - half, cy + half),
                        (cx - half // 2, cy)], colour)
    elif icon == "+":
        canvas.line([(cx - half, cy), (cx + half, cy)], colour, stroke)
        canvas.line([(cx, cy - half), (cx, cy + half)], colour, stroke)
    elif icon == "x":
        canvas.line([(cx - half, cy - half), (cx + half, cy + half)], colour, stroke)
        canvas.line([(cx - half, cy + half), (cx + half, cy - half)], colour, stroke)
    elif icon == "search":
        lens = half * 2 // 3
        canvas.ellipse(Rect(cx - half, cy - half, cx - half + 2 * lens, cy - half + 2 * lens), outline=colour,
                       width=stroke)
        canvas.line([(cx - half + lens + lens * 7 // 10, cy - half + lens + lens * 7 // 10), (cx + half, cy + half)],
                    colour, stroke)
    elif icon == "list":
        for dy in (-half * 2 // 3, 0, half * 2 // 3):
            canvas.line([(cx - half, cy + dy), (cx + half, cy + dy)], colour, stroke)
    elif icon == ".":
        dot = max(3, min(rect.width, rect.height) // 6)
        canvas.ellipse(Rect(cx - dot, cy - dot, cx + dot, cy + dot), fill=colour)
    else:
        draw_text(canvas, rect, icon, half * 2, colour, align="center", max_lines=1)


def draw_switch(canvas: Canvas, rect: Rect, on: bool, accent: str, off: str, knob: str, scale: float) -> None:
    """A Material switch: a pill track with a round thumb, right and accented when on."""
    width, height = round(104 * scale), round(56 * scale)
    right = rect.right - round(24 * scale)
    track = Rect(right - width, rect.center[1] - height // 2, right, rect.center[1] + height // 2)
    canvas.rect(track, fill=accent if on else off, radius=height // 2)
    pad = round(8 * scale)
    size = height - 2 * pad
    left = track.right - pad - size if on else track.left + pad
    canvas.ellipse(Rect(left, track.top + pad, left + size, track.top + pad + size), fill=knob)


def draw_checkbox(canvas: Canvas, rect: Rect, on: bool, accent: str, outline: str, scale: float,
                  round_mark: bool = False) -> Rect:
    """A check box (or radio button) at the left of ``rect``; returns the space left for text."""
    size = round(54 * scale)
    left = rect.left + round(24 * scale)
    box = Rect(left, rect.center[1] - size // 2, left + size, rect.center[1] + size // 2)
    if round_mark:
        canvas.ellipse(box, outline=accent if on else outline, width=max(2, size // 10))
        if on:
            canvas.ellipse(box.inset(size // 4, size // 4), fill=accent)
    else:
        canvas.rect(box, fill=accent if on else None, outline=accent if on else outline,
                    width=max(2, size // 10), radius=size // 8)
        if on:
            tick = [(box.left + size // 5, box.center[1]), (box.left + size * 2 // 5, box.bottom - size // 4),
                    (box.right - size // 6, box.top + size // 4)]
            canvas.line(tick, "#FFFFFF", max(3, size // 9))
    return Rect(box.right + round(32 * scale), rect.top, rect.right, rect.bottom)


def draw_seekbar(canvas: Canvas, rect: Rect, fraction: float, accent: str, track: str, scale: float) -> None:
    inner = rect.inset(round(48 * scale), 0)
    y = rect.center[1]
    thickness = max(4, round(12 * scale))
    canvas.rect(Rect(inner.left, y - thickness // 2, inner.right, y + thickness // 2), fill=track,
                radius=thickness // 2)
    x = inner.left + round(fraction * inner.width)
    canvas.rect(Rect(inner.left, y - thickness // 2, max(inner.left + 1, x), y + thickness // 2), fill=accent,
                radius=thickness // 2)
    radius = round(26 * scale)
    canvas.ellipse(Rect(x - radius, y - radius, x + radius, y + radius), fill=accent)
