"""What an action did to the screen, in a line the model reads next turn.

``snapshot`` keeps, of one observed screen, what a person would notice change: the app in front,
the keyboard, and each control's class, label, flags and place. ``describe_change`` compares two
snapshots: a switch that is now on, a field that now holds a text or has focus, a dialog or page
that appeared ("appeared: 'Delete event?', 'Cancel', 'Delete'"), what went away, a list that
scrolled, another app in front, or "nothing on the screen changed". Snapshots are plain data: they
live in the shared state (the next step compares with the last one, also after a resume).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ufo_mobile.core.ui.controls import Control, ControlKind
from ufo_mobile.core.ui.format import control_flags
from ufo_mobile.core.ui.state import UIState
from ufo_mobile.safe_text import printable

LABEL_CHARS = 40   # of a label quoted in a change line
LISTED = 4         # controls named per "appeared" / "went away"
MAX_CHARS = 600    # the whole line
NEW_SCREEN = 0.6   # the share of the controls that went away past which it is another screen


_WATCHED = {"check=on": "on", "check=off": "off", "selected": "selected", "focused": "focused",
            "disabled": "disabled"}  # the screen list's flags whose change is worth a line


def _flags(control: Control) -> str:
    return ",".join(_WATCHED[f] for f in control_flags(control) if f in _WATCHED)


def _name(control: Control) -> str:
    """What identifies a control across two screens: an edit field by its hint or id (its text is
    what changes), anything else by its label, description or id."""
    node = control.node
    if control.kind is ControlKind.EDIT:
        return control.hint or control.description or node.resource_id.rsplit("/", 1)[-1]
    return control.label or control.description


def snapshot(ui: UIState, app: str) -> dict[str, Any]:
    """The parts of ``ui`` that ``describe_change`` compares (JSON-ready)."""
    b = [[c.short_class, _name(c), _flags(c), c.label if c.kind is ControlKind.EDIT else "",
          [c.bounds.left, c.bounds.top, c.bounds.right, c.bounds.bottom]] for c in ui.elements]
    return {"observation_id": ui.observation_id, "app": app,
            "keyboard": bool(ui.phone_state.get("keyboard_shown")), "controls": b}


def _keyed(controls: Sequence[list[Any]]) -> dict[tuple[str, str, int], list[Any]]:
    """Controls by (class, name, n-th of that class and name): duplicates stay apart."""
    seen: Counter[tuple[str, str]] = Counter()
    keyed: dict[tuple[str, str, int], list[Any]] = {}
    for control in controls:
        cls, name = str(control[0]), str(control[1])
        seen[(cls, name)] += 1
        keyed[(cls, name, seen[(cls, name)])] = control
    return keyed


def _quote(text: str) -> str:
    flat = " ".join(printable(text).split())
    return repr(flat if len(flat) <= LABEL_CHARS else flat[:LABEL_CHARS - 1] + "…")


def _listed(keys: Sequence[tuple[str, str, int]]) -> str:
    """The named controls among ``keys`` (a list's repeated rows once), the first few quoted."""
    shown = list(dict.fromkeys(_quote(name) for _, name, _ in keys if name))
    more = len(shown) - LISTED
    return ", ".join(shown[:LISTED]) + (f" and {more} more" if more > 0 else "")


def _state_changes(before: list[Any], after: list[Any], name: str) -> list[str]:
    was, now = set(str(before[2]).split(",")) - {""}, set(str(after[2]).split(",")) - {""}
    label = _quote(name) if name else str(after[0])
    lines = []
    for flag, on_text, off_text in (("on", "is now on", ""), ("off", "is now off", ""),
                                    ("selected", "is now selected", "is no longer selected"),
                                    ("focused", "now has the focus", ""),
                                    ("disabled", "is now disabled", "is now enabled")):
        if flag in now and flag not in was and on_text:
            lines.append(f"{label} {on_text}")
        elif flag in was and flag not in now and off_text:
            lines.append(f"{label} {off_text}")
    if after[3] != before[3]:
        lines.append(f"the field {label} now holds {_quote(str(after[3]))}" if after[3] else
                     f"the field {label} is now empty")
    return lines


def _scrolled(before: dict[tuple[str, str, int], list[Any]], after: dict[tuple[str, str, int], list[Any]]) -> str:
    """'the content scrolled down' when most controls on both screens moved by the same distance, as
    a list's rows do (a text that moved to another row, or a few controls a new screen shares with the
    old one at other places, is no scroll)."""
    shifts: Counter[tuple[int, int]] = Counter()
    common = before.keys() & after.keys()
    for key in common:
        dx = int(after[key][4][0]) - int(before[key][4][0])
        dy = int(after[key][4][1]) - int(before[key][4][1])
        if dx or dy:
            shifts[(dx, dy)] += 1
    if not shifts:
        return ""
    (dx, dy), count = shifts.most_common(1)[0]
    if count < max(2, len(common) // 2):
        return ""
    direction = ("up" if dy < 0 else "down") if abs(dy) >= abs(dx) else ("left" if dx < 0 else "right")
    # content moving up means the list was scrolled down (toward what lies below)
    return {"up": "the content scrolled down", "down": "the content scrolled up",
            "left": "the content scrolled right", "right": "the content scrolled left"}[direction]


def _moved(old: dict[tuple[str, str, int], list[Any]], new: dict[tuple[str, str, int], list[Any]]) -> list[str]:
    """Named controls that moved on a screen that did not scroll, each with the control it now sits
    beside ('Connected' going from one network's row to another's): "'Connected' is now by 'Cafe'"."""
    def middle(box: list[Any]) -> float:
        return (int(box[1]) + int(box[3])) / 2

    still = [k for k in new if k in old and old[k][4] == new[k][4] and k[1]]
    lines = []
    for key in [k for k in new if k in old and old[k][4] != new[k][4] and k[1]][:LISTED]:
        box = new[key][4]
        reach = 1.5 * (int(box[3]) - int(box[1]))  # the same row: its neighbour within a line and a half
        near = sorted((abs(middle(new[k][4]) - middle(box)), n, k) for n, k in enumerate(still))
        beside = near[0][2] if near and near[0][0] <= reach else None
        lines.append(f"{_quote(key[1])} is now by {_quote(beside[1])}" if beside else f"{_quote(key[1])} moved")
    return lines


def describe_change(before: dict[str, Any], after: dict[str, Any]) -> str:
    """One line: what differs between two snapshots (``snapshot``), most telling first."""
    parts: list[str] = []
    if before.get("app") != after.get("app"):
        parts.append(f"the app in front is now {after.get('app') or 'unknown'} (was {before.get('app') or 'unknown'})")
    if before.get("keyboard") != after.get("keyboard"):
        parts.append("the keyboard opened" if after.get("keyboard") else "the keyboard closed")
    old, new = _keyed(before.get("controls") or []), _keyed(after.get("controls") or [])
    for key in [k for k in new if k in old]:
        parts.extend(_state_changes(old[key], new[key], key[1]))
    appeared = [k for k in new if k not in old]
    gone = [k for k in old if k not in new]
    if old and len(gone) > NEW_SCREEN * len(old):  # most of it went: another page, another app, a filtered list
        if _listed(appeared):
            parts.append(f"a different screen, showing: {_listed(appeared)}")
        else:
            parts.append(f"most of the screen went away; still there: {_listed(list(new)) or 'no named control'}")
    else:
        scrolled = _scrolled(old, new)
        if scrolled:
            parts.append(scrolled)
        else:
            parts.extend(_moved(old, new))
        if _listed(appeared):
            parts.append(f"appeared: {_listed(appeared)}")
        if _listed(gone):
            parts.append(f"went away: {_listed(gone)}")
        if not parts and (appeared or gone):
            parts.append("some unnamed controls changed")
    if not parts:
        return "nothing on the screen changed"
    line = "; ".join(parts)
    return line if len(line) <= MAX_CHARS else line[:MAX_CHARS - 1] + "…"
