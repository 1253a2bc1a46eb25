"""The two stages a state provider can be given (seed 002's ``tree_filter`` and ``tree_formatter``).

``AndroidStateProvider(driver, tree_filter, tree_formatter)`` runs them inside ``build_ui_state``:
the filter gets the controls parsed from the dump (ids already given, so the ids the model sees stay
those of the dump) and returns the ones to keep; the formatter turns the kept controls into the
screen text the model reads. Both get the screen's ``phone_state`` (``current_app``,
``keyboard_shown``, ``screen_size``, ``rotation``; the formatter also ``focused_element``). Without
them the controls are all kept and the text is ``format.format_ui``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ufo_mobile.core.ui.controls import Control
from ufo_mobile.core.ui.format import FormatOptions, format_ui


@runtime_checkable
class TreeFilter(Protocol):
    """Chooses which parsed controls a screen keeps."""

    def filter(self, controls: list[Control], phone_state: Mapping[str, Any]) -> list[Control]: ...


@runtime_checkable
class TreeFormatter(Protocol):
    """Writes the screen text the model reads."""

    def format(self, controls: list[Control], phone_state: Mapping[str, Any]) -> str: ...


class IndexedFormatter:
    """The default screen text (``format.format_ui``) as a ``TreeFormatter``: one indexed line per control."""

    def __init__(self, options: FormatOptions | None = None) -> None:
        self.options = options

    def format(self, controls: list[Control], phone_state: Mapping[str, Any]) -> str:
        focused_info = phone_state.get("focused_element") or {}
        focused = next((c for c in controls if c.index == focused_info.get("index")), None)
        width, height = phone_state.get("screen_size") or (0, 0)
        return format_ui(controls, app=str(phone_state.get("current_app") or ""), screen_size=(width, height),
                         keyboard_shown=bool(phone_state.get("keyboard_shown")), focused=focused,
                         options=self.options)
