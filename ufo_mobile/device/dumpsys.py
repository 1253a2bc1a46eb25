"""Reading what ``dumpsys`` prints, robustly across Android versions.

Each function takes the text of one ``dumpsys`` service and returns what the drivers need, or None
when the text does not say (the caller then falls back: the UI dump's package for the current app,
no keyboard for the keyboard). Nothing here raises on unknown text.

- ``focused_app``: ``dumpsys window``: ``mCurrentFocus=Window{... pkg/act}``, else
  ``mFocusedApp=... ActivityRecord{... pkg/act tN}`` (both missing on several Android 13-15 builds:
  openatx/adbutils #176, openatx/uiautomator2 #952, #1148).
- ``resumed_activity``: ``dumpsys activity activities``: Android 12+ ``topResumedActivity=`` and
  ``ResumedActivity:``, older ``mResumedActivity:``.
- ``keyboard_shown``: ``dumpsys input_method``: ``mInputShown=`` (InputMethodManagerService), or the
  ``mIsInputViewShown=`` of newer dumps.
- ``ime_frame``: ``dumpsys window``: the frame of the visible ``InputMethod`` window.
- ``window_packages``: ``dumpsys window``: the package of each window, top-most first (``Window #0``
  is the top of the stack).
"""

from __future__ import annotations

import re

from ufo_mobile.device.base import CurrentApp

_COMPONENT = r"(?P<package>[A-Za-z][\w.]*)/(?P<activity>[\w.$]+)"
_FOCUS = re.compile(r"mCurrentFocus=Window\{[^}]*?\s" + _COMPONENT + r"\}")
_FOCUSED_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]")
_RESUMED = (re.compile(r"topResumedActivity=ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]"),
            re.compile(r"\bResumedActivity: ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]"),
            re.compile(r"mResumedActivity: ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]"))
_SHOWN = re.compile(r"\b(?:mInputShown|mIsInputViewShown|isInputViewShown)=(true|false)")
_WINDOW = re.compile(r"^\s*Window #\d+ Window\{[^}]*\}:", re.MULTILINE)
_FRAME = re.compile(r"mFrame=\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_PACKAGE = re.compile(r"\bpackage=([\w.]+)")


def _app(match: re.Match[str] | None) -> CurrentApp | None:
    return None if match is None else CurrentApp(match["package"], match["activity"])


def focused_app(window_dump: str) -> CurrentApp | None:
    return _app(_FOCUS.search(window_dump)) or _app(_FOCUSED_APP.search(window_dump))


def resumed_activity(activities_dump: str) -> CurrentApp | None:
    for pattern in _RESUMED:
        found = _app(pattern.search(activities_dump))
        if found is not None:
            return found
    return None


def keyboard_shown(input_method_dump: str) -> bool | None:
    values = _SHOWN.findall(input_method_dump)
    return None if not values else "true" in values


def _windows(window_dump: str) -> list[str]:
    """Each window's block of ``dumpsys window windows``, top of the stack first."""
    starts = [m.start() for m in _WINDOW.finditer(window_dump)]
    return [window_dump[a:b] for a, b in zip(starts, [*starts[1:], len(window_dump)], strict=True)]


def ime_frame(window_dump: str) -> tuple[int, int, int, int] | None:
    """The frame (left, top, right, bottom) of the input method's window while it is visible
    (``mViewVisibility=0x0``)."""
    for block in _windows(window_dump):
        head = block.splitlines()[0]
        if "InputMethod}" not in head or "mViewVisibility=0x0" not in block:
            continue
        frame = _FRAME.search(block)
        if frame is not None:
            left, top, right, bottom = (int(v) for v in frame.groups())
            if right > left and bottom > top:
                return left, top, right, bottom
    return None


def window_packages(window_dump: str) -> list[str]:
    """The package of every window that names one, top-most first, without repeats."""
    out: list[str] = []
    for block in _windows(window_dump):
        found = _PACKAGE.search(block)
        if found is not None and found.group(1) not in out:
            out.append(found.group(1))
    return out
