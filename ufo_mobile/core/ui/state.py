"""One observed screen: the controls, the model's text, and coordinate helpers.

``build_ui_state`` is a pure function of the dump and its arguments. Actions refer to a control by
``(index, observation_id)``; ``resolve`` refuses ids from another observation
(``StaleObservationError``) and unknown ids (``ElementNotFoundError``, listing valid ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.core.ui.controls import (
    Control,
    FilterOptions,
    extract_controls,
    infer_app_package,
    is_editable,
    keyboard_visible,
    screen_for,
)
from ufo_mobile.core.ui.format import FormatOptions, format_ui
from ufo_mobile.core.ui.hierarchy import Bounds, UINode, UITree, parse_hierarchy
from ufo_mobile.core.ui.pipeline import TreeFilter, TreeFormatter
from ufo_mobile.core.ui.windows import keyboard_band
from ufo_mobile.errors import ElementNotFoundError, InvalidActionError, StaleObservationError

_GRID = 9  # candidate tap points per side when the centre of a control is blocked


@dataclass(frozen=True, eq=False)
class UIState:
    """A screen as the agent saw it at one observation."""

    observation_id: str
    elements: list[Control]
    formatted_text: str
    focused_text: str
    phone_state: dict[str, Any]
    screen_width: int
    screen_height: int
    rotation: int = 0
    tree: UITree | None = field(default=None, repr=False)
    #: the phone's own date and time when the screen was read (``date`` on the phone), if it says
    device_date: str = ""
    #: taps on a control land at a jittered point inside it (``tap_in``): the provider's ``stealth``
    stealth: bool = False
    _by_index: dict[int, Control] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._by_index.update((control.index, control) for control in self.elements)

    def get_element(self, index: int) -> dict[str, Any] | None:
        """The control with this id as a dict (``control_info``: index, class, text, resource_id,
        bounds, flags, ...), or None when the screen has no such control (seed 002's call)."""
        control = self._by_index.get(index)
        return control_info(control) if control is not None else None

    def get_control(self, index: int) -> Control:
        """The control with this id. Raises ``ElementNotFoundError`` listing valid ids."""
        control = self._by_index.get(index)
        if control is None:
            raise ElementNotFoundError(
                f"no control {index} on the current screen (observation {self.observation_id}); "
                f"valid ids: {describe_ids(sorted(self._by_index))}"
            )
        return control

    def resolve(self, index: int, observation_id: str) -> Control:
        """The control ``index`` of observation ``observation_id``, which must be this one."""
        if observation_id != self.observation_id:
            raise StaleObservationError(
                f"control {index} refers to observation {observation_id!r}, but the screen is now "
                f"observation {self.observation_id!r}; use ids from the current screen"
            )
        return self.get_control(index)

    def get_element_coords(self, index: int) -> tuple[int, int]:
        """The centre of the control's visible bounds, in screen pixels."""
        return self.get_control(index).bounds.center

    def get_element_info(self, index: int) -> dict[str, Any]:
        """A JSON-ready description of the control."""
        return control_info(self.get_control(index))

    def get_clear_point(self, index: int) -> tuple[int, int]:
        """A point inside the control where a tap reaches it and nothing drawn above it.

        Blockers are touch-consuming nodes painted later (clickable children, overlapping
        siblings, higher windows). Falls back to the centre when every candidate is blocked.
        """
        control = self.get_control(index)
        if self.tree is None:
            return control.bounds.center
        return clear_point(control, self.tree)

    def open_bounds(self, index: int) -> Bounds | None:
        """The control's bounds when a tap anywhere inside them reaches it (nothing drawn above takes
        touches from any part), else None: where a stealth tap (``tap_in``) may land."""
        control = self.get_control(index)
        if self.tree is not None and blockers(control, self.tree):
            return None
        return control.bounds

    def convert_point(self, x: float, y: float) -> tuple[int, int]:
        """Normalized coordinates (0-1000 on both axes) to screen pixels."""
        if not (0 <= x <= 1000 and 0 <= y <= 1000):
            raise InvalidActionError(f"normalized point ({x}, {y}) is outside 0-1000")
        px = min(self.screen_width - 1, round(x * self.screen_width / 1000))
        py = min(self.screen_height - 1, round(y * self.screen_height / 1000))
        return max(0, px), max(0, py)


def build_ui_state(xml: str | bytes, *, observation_id: str, screen_size: tuple[int, int] | None = None,
                   current_app: str = "", filter_options: FilterOptions | None = None,
                   format_options: FormatOptions | None = None,
                   keyboard_frame: tuple[int, int, int, int] | None = None,
                   tree_filter: TreeFilter | None = None, tree_formatter: TreeFormatter | None = None) -> UIState:
    """Parse, filter and format one dump.

    Args:
        xml: the uiautomator dump.
        observation_id: the id actions must quote to use this screen's control ids.
        screen_size: ``(width, height)`` in pixels; inferred from the dump when ``None``.
        current_app: the foreground package if known; inferred from the windows otherwise.
        keyboard_frame: where the soft keyboard is shown, when the device says so but the dump (the
            app's window only, as ``uiautomator dump`` gives) does not show it: controls under it
            cannot be tapped and are left out (as they are under a keyboard the dump shows as a band
            across the bottom: ``windows.keyboard_band``).
        tree_filter, tree_formatter: the provider's stages (``pipeline``): which controls to keep,
            and the screen text (``format_ui`` with ``format_options`` when not given).

    Raises:
        UIParseError: the dump is malformed or empty.
    """
    tree = parse_hierarchy(xml)
    fopts = filter_options or FilterOptions()
    screen = screen_for(tree, screen_size)
    app = current_app or infer_app_package(tree, fopts.keyboard_packages)
    cover = Bounds(*keyboard_frame) if keyboard_frame is not None else \
        keyboard_band(tree, screen, app_package=app, keyboard_packages=fopts.keyboard_packages)
    controls = extract_controls(tree, screen, app_package=app, options=fopts, obstruction=cover)
    keyboard = cover is not None or keyboard_visible(tree, screen, app_package=app,
                                                     keyboard_packages=fopts.keyboard_packages)
    phone_state: dict[str, Any] = {"current_app": app, "keyboard_shown": keyboard}
    if tree_filter is not None:
        controls = list(tree_filter.filter(controls, {**phone_state, "screen_size": [screen.width, screen.height],
                                                      "rotation": tree.rotation}))
    focused = _focused_control(controls)
    phone_state.update({
        "focused_element": control_info(focused) if focused is not None else None,
        "screen_size": [screen.width, screen.height],
        "rotation": tree.rotation,
    })
    if tree_formatter is not None:
        text = tree_formatter.format(controls, phone_state)
    else:
        text = format_ui(controls, app=app, screen_size=(screen.width, screen.height),
                         keyboard_shown=keyboard, focused=focused, options=format_options)
    return UIState(
        observation_id=observation_id, elements=controls, formatted_text=text,
        focused_text=focused.node.text if focused is not None else "", phone_state=phone_state,
        screen_width=screen.width, screen_height=screen.height, rotation=tree.rotation, tree=tree,
    )


def unavailable_ui_state(observation_id: str, screen_size: tuple[int, int], reason: str, *,
                         app: str = "") -> UIState:
    """A screen seen only in its screenshot: no controls, and a text that says why and what to do."""
    width, height = screen_size
    text = "\n".join([
        f"App {app or 'unknown'}, screen {width}x{height} px.",
        f"(No control list for this screen: {reason}. Read the screenshot; use click_at, long_press_at "
        "or swipe with screen coordinates, or wait and look again.)",
    ])
    phone_state: dict[str, Any] = {"current_app": app, "keyboard_shown": None, "focused_element": None,
                                   "screen_size": [width, height], "rotation": 0, "controls_unavailable": reason}
    return UIState(observation_id=observation_id, elements=[], formatted_text=text, focused_text="",
                   phone_state=phone_state, screen_width=width, screen_height=height)


def control_info(control: Control) -> dict[str, Any]:
    """Everything known about a control, as plain JSON-ready values."""
    node = control.node
    return {
        "index": control.index,
        "kind": control.kind.value,
        "class": node.class_name,
        "text": control.label,
        "description": control.description,
        "hint": control.hint,
        "resource_id": node.resource_id,
        "package": node.package,
        "bounds": control.bounds.as_list(),
        "center": list(control.bounds.center),
        "clickable": node.clickable,
        "long_clickable": node.long_clickable,
        "checkable": node.checkable,
        "checked": node.checked,
        "scrollable": node.scrollable,
        "editable": control.editable,
        "enabled": node.enabled,
        "focused": control.focused,
        "selected": control.selected,
        "password": node.password,
        "parent": control.parent,
    }


def describe_ids(ids: list[int], limit: int = 12) -> str:
    """Compress sorted ids into ranges: ``[1, 2, 3, 7]`` -> ``"1-3, 7"`` (at most ``limit`` parts)."""
    if not ids:
        return "none (the screen has no controls)"
    parts: list[str] = []
    start = prev = ids[0]
    for value in [*ids[1:], None]:
        if value is not None and value == prev + 1:
            prev = value
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    shown = ", ".join(parts[:limit])
    return shown + (", ..." if len(parts) > limit else "")


def clear_point(control: Control, tree: UITree) -> tuple[int, int]:
    """The candidate point nearest the centre of ``control`` that no blocker covers."""
    box = control.bounds
    blocked = blockers(control, tree)
    cx, cy = box.center
    if not any(b.contains_point(cx, cy) for b in blocked):
        return cx, cy
    candidates = [
        (box.left + (2 * i + 1) * box.width // (2 * _GRID), box.top + (2 * j + 1) * box.height // (2 * _GRID))
        for i in range(_GRID) for j in range(_GRID)
    ]
    candidates.sort(key=lambda p: ((p[0] - cx) ** 2 + (p[1] - cy) ** 2, p))
    for x, y in candidates:
        if not any(b.contains_point(x, y) for b in blocked):
            return x, y
    return cx, cy


def blockers(control: Control, tree: UITree) -> list[Bounds]:
    """The parts of ``control`` that nodes drawn above it take touches from."""
    return [b for b in (_blocking_box(n, control, tree) for n in tree.nodes) if b is not None]


def _blocking_box(node: UINode, control: Control, tree: UITree) -> Bounds | None:
    """The part of ``control`` that ``node`` takes touches from, if any."""
    if node.z <= control.node.z or node is control.node:
        return None
    upper_window = node.parent < 0 and len(tree.roots) > 1
    consumes = node.clickable or node.long_clickable or is_editable(node)
    # A disabled clickable view still swallows the touch, so it blocks too.
    if not (upper_window or (consumes and node.visible_to_user)):
        return None
    return node.bounds.intersect(control.bounds)


def _focused_control(controls: list[Control]) -> Control | None:
    focused = [c for c in controls if c.focused]
    editable = [c for c in focused if c.editable]
    candidates = editable or focused
    return candidates[0] if candidates else None
