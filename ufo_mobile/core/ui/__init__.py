"""From a uiautomator dump to what the model sees.

``parse_hierarchy`` (XML -> ``UITree`` of ``UINode``), ``extract_controls`` (which nodes the model
sees, with stable 1-based ids), ``format_ui`` (the indexed screen text), ``build_ui_state`` (all of
it as one ``UIState``), ``annotate``/``downscale``/``render_blank`` (set-of-mark images) and
``ControlCache`` (recent screens per device).
"""

from ufo_mobile.core.ui.annotate import KIND_COLORS, annotate, downscale, render_blank
from ufo_mobile.core.ui.cache import ControlCache
from ufo_mobile.core.ui.controls import (
    DEFAULT_KEYBOARD_PACKAGES,
    Control,
    ControlKind,
    FilterOptions,
    extract_controls,
    infer_app_package,
    infer_screen,
    is_keyboard_package,
    screen_for,
)
from ufo_mobile.core.ui.format import FormatOptions, format_line, format_ui, quote, screen_legend
from ufo_mobile.core.ui.hierarchy import Bounds, UINode, UITree, parse_hierarchy
from ufo_mobile.core.ui.state import UIState, build_ui_state, clear_point, control_info

__all__ = [
    "Bounds",
    "Control",
    "ControlCache",
    "ControlKind",
    "DEFAULT_KEYBOARD_PACKAGES",
    "FilterOptions",
    "FormatOptions",
    "KIND_COLORS",
    "UINode",
    "UIState",
    "UITree",
    "annotate",
    "build_ui_state",
    "clear_point",
    "control_info",
    "downscale",
    "extract_controls",
    "format_line",
    "format_ui",
    "infer_app_package",
    "infer_screen",
    "is_keyboard_package",
    "parse_hierarchy",
    "quote",
    "render_blank",
    "screen_for",
    "screen_legend",
]
