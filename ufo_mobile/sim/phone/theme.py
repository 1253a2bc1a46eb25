"""Metrics and colours shared by layout (which measures) and render (which draws).

All sizes are pixels of a 1080-wide design; layout and render scale them to the real width.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

STATUS_BAR = 84
NAV_BAR = 66
TOOLBAR = 168

#: Font size per text style.
FONT_SIZES: dict[str, int] = {
    "body": 44,
    "title": 48,
    "secondary": 38,
    "header": 38,
    "caption": 32,
    "display": 160,
    "bubble_out": 44,
    "bubble_in": 44,
    "app_icon": 36,
    "avatar": 56,
    "button": 42,
    "fab": 42,
    "toolbar_title": 60,
}

#: Styles whose text wraps over several lines unless ``lines`` says otherwise.
MULTILINE_STYLES = frozenset({"body", "caption", "bubble_out", "bubble_in"})
BUBBLE_STYLES = frozenset({"bubble_out", "bubble_in"})
BUBBLE_PAD = 28
BUBBLE_MARGIN = 32
BUBBLE_GAP = 16
#: The most of the next row a scroll container shows below its last whole row when more lies below
#: (a third of the row if that is less), so a list never ends on a row boundary while it goes on.
LIST_PEEK = 64


def bubble_text_width(row_width: int, scale: float) -> int:
    """Wrap width of the text inside a chat bubble drawn in a row ``row_width`` wide."""
    return round(row_width * 0.75) - 2 * round(BUBBLE_PAD * scale)

#: Heights of leaf widgets by the last part of their class name.
LEAF_HEIGHTS: dict[str, int] = {
    "EditText": 150,
    "AutoCompleteTextView": 150,
    "Button": 132,
    "ImageButton": 132,
    "Switch": 150,
    "CheckBox": 132,
    "RadioButton": 132,
    "ToggleButton": 132,
    "SeekBar": 120,
    "ImageView": 120,
    "ProgressBar": 120,
}

CHECKABLE_CLASSES = frozenset({"Switch", "CheckBox", "RadioButton", "ToggleButton", "CompoundButton",
                               "SwitchCompat", "SwitchMaterial"})
BUTTON_CLASSES = frozenset({"Button", "ImageButton", "FloatingActionButton", "ExtendedFloatingActionButton"})


def short_class(cls: str) -> str:
    """``android.widget.Switch`` -> ``Switch``."""
    return cls.rsplit(".", 1)[-1]


def line_height(size: int) -> int:
    return round(size * 1.35)


@dataclass(frozen=True)
class Palette:
    background: str
    surface: str
    text: str
    secondary: str
    accent: str
    on_accent: str
    divider: str
    toolbar: str
    field: str
    bubble_in: str
    status_text: str


LIGHT = Palette(
    background="#FFFFFF", surface="#F1F3F4", text="#1F1F1F", secondary="#5F6368", accent="#1A73E8",
    on_accent="#FFFFFF", divider="#E0E0E0", toolbar="#F8F9FA", field="#F1F3F4", bubble_in="#E8EAED",
    status_text="#1F1F1F",
)
DARK = Palette(
    background="#121212", surface="#2A2A2A", text="#E8EAED", secondary="#9AA0A6", accent="#8AB4F8",
    on_accent="#0B1D33", divider="#3C4043", toolbar="#1E1E1E", field="#2A2A2A", bubble_in="#303134",
    status_text="#E8EAED",
)

_ICON_COLOURS = ("#1A73E8", "#D93025", "#188038", "#F9AB00", "#9334E6", "#E8710A", "#12B5CB", "#C5221F")


def colour_for(name: str) -> str:
    """A stable colour for a name (crc32, so it does not change between runs)."""
    return _ICON_COLOURS[zlib.crc32(name.encode("utf-8")) % len(_ICON_COLOURS)]


def initials(label: str) -> str:
    """Up to two initials of a label: ``Google Messages`` -> ``GM``, ``Notes`` -> ``N``."""
    words = [word for word in label.replace("-", " ").split() if word]
    return "".join(word[0].upper() for word in words[:2]) or "?"
