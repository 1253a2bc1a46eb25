"""What the scripted model reads in the conversation it is sent, as a real model would: the
controls of the latest screen list (the lines ``ufo_mobile/core/ui/format.py`` writes under the
``App ..., screen WxH px, ...`` line), with their numbers, labels, nesting and flags.

A script names a control with ``{label: Wi-Fi}`` in place of a number in a mapping reply
(``nth: 2`` picks the second control with that label), or with ``{{label: Wi-Fi}}`` inside a text
reply (the reasoning manager's tags, CodeAct's code). The number filled in is the one a careful
model would use: the control that shows the label if it can be tapped or typed into, else the
tappable row it sits in (``click`` on a line above it, less indented). A reply may also expect
the screen to show a label (with a flag such as ``check=on``) before it is sent (``shows``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.memory.messages import ChatMessage

_HEADER = re.compile(r"^App \S+, screen \d+x\d+ px, .*$", re.M)
_LINE = re.compile(r"^(?P<indent> *)(?P<index>\d+) (?P<cls>\S+)(?P<rest>.*)$")
_QUOTED = re.compile(r'(?:(?:desc|hint)=)?"((?:[^"\\]|\\.)*)"')
_UNESCAPE = {"n": "\n", "r": "\r", "t": "\t"}
_TEXT_MARKER = re.compile(r"\{\{\s*label:\s*(.+?)\s*\}\}")
_INDENT = 2  # spaces per nesting level (FormatOptions.indent)


class LabelError(LookupError):
    """A script names a control by a label that the screen it was sent does not show."""


@dataclass(frozen=True)
class ScreenControl:
    """One line of the screen list: the control's number, its texts and what can be done with it."""

    index: int
    level: int
    texts: tuple[str, ...]
    flags: frozenset[str]
    parent: int | None  # the position (in the list) of the line it is indented under

    @property
    def actionable(self) -> bool:
        return bool(self.flags & {"click", "long", "edit"})


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _UNESCAPE.get(m.group(1), m.group(1)), text)


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _same(a: str, b: str) -> bool:
    return _norm(a) == _norm(b)


def _labelled(controls: Sequence[ScreenControl], label: str) -> list[int]:
    """The positions of the controls that show ``label``: as one of their texts, else (none doing so) as
    the first part of one, the way an iPhone joins a row's texts into its label ("Riverside Tech Meetup -
    Sign up, riverside-meetup.org/signup")."""
    exact = [pos for pos, control in enumerate(controls) if any(_same(label, t) for t in control.texts)]
    if exact:
        return exact
    first = _norm(label) + ","
    return [pos for pos, control in enumerate(controls) if any(_norm(t).startswith(first) for t in control.texts)]


def parse_screen(text: str) -> list[ScreenControl]:
    """The controls of a screen list: the lines from the start of ``text`` to the first line that
    is not a control."""
    controls: list[ScreenControl] = []
    open_lines: list[int] = []  # positions of the lines the next one may be indented under
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            break
        level = len(match["indent"]) // _INDENT
        rest = match["rest"]
        texts = tuple(_unescape(q) for q in _QUOTED.findall(rest))
        flags = frozenset(_QUOTED.sub(" ", rest).split())
        while open_lines and controls[open_lines[-1]].level >= level:
            open_lines.pop()
        parent = open_lines[-1] if open_lines else None
        controls.append(ScreenControl(int(match["index"]), level, texts, flags, parent))
        open_lines.append(len(controls) - 1)
    return controls


def latest_screen(messages: Sequence[ChatMessage]) -> list[ScreenControl] | None:
    """The controls of the last screen list in the conversation, or None when it has none."""
    for message in reversed(messages):
        if message.role == "system":
            continue
        text = message.text()
        headers = list(_HEADER.finditer(text))
        if headers:
            return parse_screen(text[headers[-1].end() + 1:])
    return None


def _shown(controls: Sequence[ScreenControl], limit: int = 12) -> str:
    """The first labels on the screen, for an error message."""
    shown = [t for control in controls for t in control.texts[:1]]
    return (", ".join(repr(t) for t in shown[:limit]) + (", ..." if len(shown) > limit else "")) or "no labels"


def shows(controls: Sequence[ScreenControl], label: str, flag: str | None = None) -> None:
    """Nothing when a control labelled ``label`` (with ``flag``, if given) is on the screen.

    Raises:
        LabelError: no such control; the message lists what is shown.
    """
    if any(flag is None or flag in controls[pos].flags for pos in _labelled(controls, label)):
        return
    what = f"a control labelled {label!r}" + (f" with {flag}" if flag else "")
    raise LabelError(f"the screen does not show {what}; it shows: {_shown(controls)}")


def number_for(controls: Sequence[ScreenControl], label: str, nth: int = 1) -> int:
    """The number to use for the ``nth`` control labelled ``label`` (see the module docstring).

    Raises:
        LabelError: fewer than ``nth`` controls show that label; the message lists what is shown.
    """
    found = _labelled(controls, label)
    if len(found) < nth:
        which = f"a control labelled {label!r}" if nth == 1 else f"{nth} controls labelled {label!r}"
        raise LabelError(f"the screen does not show {which}; it shows: {_shown(controls)}")
    start = found[nth - 1]
    pos: int | None = start
    while pos is not None and not controls[pos].actionable:
        pos = controls[pos].parent
    return controls[start if pos is None else pos].index


def _marker(value: Any) -> tuple[str, int] | None:
    """``(label, nth)`` when ``value`` is a ``{label: ..., nth: ...}`` marker."""
    if isinstance(value, dict) and "label" in value and set(value) <= {"label", "nth"}:
        nth = value.get("nth", 1)
        return str(value["label"]), nth if isinstance(nth, int) and nth > 0 else 1
    return None


def has_labels(entry: Any) -> bool:
    """True when the reply ``entry`` names a control by its label anywhere."""
    if isinstance(entry, str):
        return _TEXT_MARKER.search(entry) is not None
    if _marker(entry) is not None:
        return True
    if isinstance(entry, dict):
        return any(has_labels(v) for v in entry.values())
    if isinstance(entry, list):
        return any(has_labels(v) for v in entry)
    return False


def fill_labels(entry: Any, controls: Sequence[ScreenControl]) -> Any:
    """``entry`` with every label marker replaced by that control's number on ``controls``."""
    if isinstance(entry, str):
        return _TEXT_MARKER.sub(lambda m: str(number_for(controls, m.group(1))), entry)
    marker = _marker(entry)
    if marker is not None:
        return number_for(controls, *marker)
    if isinstance(entry, dict):
        return {key: fill_labels(value, controls) for key, value in entry.items()}
    if isinstance(entry, list):
        return [fill_labels(value, controls) for value in entry]
    return entry


def label_of(controls: Sequence[ScreenControl], index: int) -> dict[str, Any] | None:
    """The ``{label: ..., nth: ...}`` marker that names control ``index`` of ``controls`` (its first
    text, or the first text inside it; ``nth`` so that ``number_for`` gives ``index`` back), or None
    when nothing names it."""
    found = next((pos for pos, control in enumerate(controls) if control.index == index), None)
    if found is None:
        return None
    inside = [pos for pos in range(found, len(controls)) if pos == found or _within(controls, pos, found)]
    label = next((controls[pos].texts[0] for pos in inside if controls[pos].texts), None)
    if label is None:
        return None
    for nth in range(1, len(controls) + 1):
        try:
            if number_for(controls, label, nth) == index:
                return {"label": label, "nth": nth} if nth > 1 else {"label": label}
        except LabelError:
            return None
    return None


def _within(controls: Sequence[ScreenControl], pos: int, ancestor: int) -> bool:
    parent = controls[pos].parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = controls[parent].parent
    return False


def by_label(entry: Any, controls: Sequence[ScreenControl]) -> Any:
    """A mapping reply with each action's control number (``index``) replaced by the label marker that
    names that control on ``controls``: the reply then names its controls on any phone that shows them,
    however that phone numbers them (an iPhone's tree against the Android numbering it was written for)."""
    if isinstance(entry, dict):
        out = {key: by_label(value, controls) for key, value in entry.items()}
        args = out.get("args")
        if isinstance(args, dict) and isinstance(args.get("index"), int) and not isinstance(args["index"], bool):
            marker = label_of(controls, args["index"])
            if marker is not None:
                out["args"] = {**args, "index": marker}
        return out
    if isinstance(entry, list):
        return [by_label(value, controls) for value in entry]
    return entry
