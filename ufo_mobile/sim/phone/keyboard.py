"""The soft keyboard of realistic device profiles: where its keys are, what they type, how it looks.

While a text field has focus the keyboard covers the bottom of the screen above the navigation
bar (its window reaches the bottom edge, as Gboard's does): screenshots show it, taps there go to
its keys instead of the app, and the uiautomator2 dump has its window. A QWERTY layout in four rows
under a suggestion strip; letter, space, delete and enter keys act, shift and ``?123`` do nothing.
Sizes are pixels of a 1080-wide design, scaled to the phone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ufo_mobile.sim.phone import paint, theme
from ufo_mobile.sim.phone.paint import Canvas
from ufo_mobile.sim.phone.view import Rect

HEIGHT = 780            # above the navigation bar
STRIP = 110             # suggestion strip
ROW = 160
ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
BACKGROUND = "#E8EAED"
KEY = "#FFFFFF"
SPECIAL = "#C9CED6"
INK = "#202124"


@dataclass(frozen=True, slots=True)
class Key:
    label: str      # drawn on the key
    desc: str       # its content-desc in the accessibility tree
    action: str     # "type", "shift", "delete", "space", "enter", "symbols"
    rect: Rect

    @property
    def char(self) -> str:
        return self.label if self.action == "type" else " " if self.action == "space" else ""


def window_rect(width: int, height: int) -> Rect:
    """The keyboard's window: from the top of its keys to the bottom edge of the screen."""
    scale = width / 1080
    top = height - round(theme.NAV_BAR * scale) - round(HEIGHT * scale)
    return Rect(0, top, width, height)


def keys(width: int, height: int) -> list[Key]:
    """Every key with its screen rectangle."""
    scale = width / 1080

    def px(value: float) -> int:
        return round(value * scale)

    top = window_rect(width, height).top + px(STRIP)
    unit = 108
    found: list[Key] = []
    for row, letters in enumerate(ROWS):
        y = top + px(ROW * row)
        x = {0: 0, 1: 54, 2: 162}[row]
        for letter in letters:
            found.append(Key(letter, letter, "type", Rect(px(x), y, px(x + unit), y + px(ROW))))
            x += unit
    y = top + px(2 * ROW)
    found.append(Key("^", "Shift", "shift", Rect(0, y, px(162), y + px(ROW))))
    found.append(Key("<x", "Delete", "delete", Rect(px(918), y, width, y + px(ROW))))
    y = top + px(3 * ROW)
    bottom = [("?123", "Symbol keyboard", "symbols", 0, 162), (",", ",", "type", 162, 270),
              ("", "Space", "space", 270, 810), (".", ".", "type", 810, 918), ("->", "Enter", "enter", 918, 1080)]
    for label, desc, action, left, right in bottom:
        found.append(Key(label, desc, action, Rect(px(left), y, px(right) if right < 1080 else width, y + px(ROW))))
    return found


def key_at(width: int, height: int, x: int, y: int) -> Key | None:
    return next((key for key in keys(width, height) if key.rect.contains(x, y)), None)


class Typist(Protocol):
    def input_text(self, text: str, clear: bool = False) -> None: ...

    def press_key(self, key: str | int) -> None: ...


def touch(phone: Typist, width: int, height: int, x: int, y: int) -> bool:
    """A tap at (x, y) with the keyboard up: True if the keyboard took it (typing its key's
    character, deleting or pressing Enter); False if it is above the keyboard."""
    if not window_rect(width, height).contains(x, y):
        return False
    key = key_at(width, height, x, y)
    if key is not None and key.char:
        phone.input_text(key.char)
    elif key is not None and key.action in ("delete", "enter"):
        phone.press_key("del" if key.action == "delete" else "enter")
    return True


def draw(canvas: Canvas, width: int, height: int, nav_height: int) -> None:
    """Paint the keyboard over the bottom of the screen (the navigation bar's pill stays on top)."""
    scale = width / 1080
    window = window_rect(width, height)
    canvas.rect(Rect(0, window.top, width, height - nav_height), fill=BACKGROUND)
    canvas.rect(Rect(0, height - nav_height, width, height), fill=BACKGROUND)
    pad = max(2, round(8 * scale))
    size = round(52 * scale)
    for key in keys(width, height):
        box = key.rect.inset(pad, pad)
        canvas.rect(box, fill=KEY if key.action in ("type", "space") else SPECIAL, radius=round(14 * scale))
        if key.label:
            paint.draw_text(canvas, box, key.label, size, INK, align="center", max_lines=1)
