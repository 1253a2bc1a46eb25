"""Reading what ``dumpsys`` prints, robustly across Android versions.

Each function takes the text of one ``dumpsys`` service and returns what the drivers need, or None
when the text does not say (the caller then falls back: the UI dump's package for the current app,
no keyboard for the keyboard). Nothing here raises on unknown text.

- ``focused_app``: ``dumpsys window``: ``mCurrentFocus=Window{... pkg/act}``, else
  ``mFocusedApp=... ActivityRecord{... pkg/act tN}`` (both missing on several Android 13-15 builds:
  openatx/adbutils #176, openatx/uiautomator2 #952, #1148).
- ``resumed_activity``: ``dumpsys activity activities``: Android 12+ ``topResumedActivity=`` and
  ``ResumedActivity:``, older ``mResumedActivity:``.
- ``keyboard_shown``: ``dumpsys input_method``: ``mInputShown=`` (InputMethodManagerService, or
  ImeVisibilityStateComputer on Android 14), else the input method's own ``mIsInputViewShown=``.
- ``ime_frame``: ``dumpsys window``: the frame of the visible ``InputMethod`` window (``mFrame=`` up
  to Android 10, the ``frame=`` of the ``Frames:`` line from Android 11).
- ``window_packages``: ``dumpsys window``: the package of each window, top-most first (``Window #0``
  is the top of the stack).
"""

from __future__ import annotations

import re

from ufo_mobile.core.device.base import CurrentApp

_COMPONENT = r"(?P<package>[A-Za-z][\w.]*)/(?P<activity>[\w.$]+)"
_FOCUS = re.compile(r"mCurrentFocus=Window\{[^}]*?\s" + _COMPONENT + r"\}")
_FOCUSED_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]")
_RESUMED = (re.compile(r"topResumedActivity=ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]"),
            re.compile(r"\bResumedActivity: ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]"),
            re.compile(r"mResumedActivity: ActivityRecord\{\S+ u\d+ " + _COMPONENT + r"[ }]"))
_INPUT_SHOWN = re.compile(r"\bmInputShown=(true|false)")
_VIEW_SHOWN = re.compile(r"\b(?:mIsInputViewShown|isInputViewShown)=(true|false)")
_WINDOW = re.compile(r"^\s*Window #\d+ Window\{[^}]*\}:", re.MULTILINE)
# ``mFrame=[l,t][r,b]`` up to Android 10; ``Frames: parent=[..] display=[..] frame=[l,t][r,b]`` from 11
_FRAME = re.compile(r"(?:\bmFrame=|\sframe=)\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_PACKAGE = re.compile(r"\bpackage=([\w.]+)")
# an input method whose window is taller than its keys says where they start (Gboard: a window from
# below the status bar, content insets down to the keys)
_CONTENT_INSETS = re.compile(r"\bmGivenContentInsets=\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_VISIBLE = ("mViewVisibility=0x0", "isVisible=true", "isOnScreen=true")
_HIDDEN = ("mViewVisibility=0x4", "mViewVisibility=0x8", "isVisible=false", "isOnScreen=false")


def _app(match: re.Match[str] | None) -> CurrentApp | None:
    return None if match is None else CurrentApp(match["package"], match["activity"])


def focused_app(window_dump: str) -> CurrentApp | None:
    """The app of the focused window in ``dumpsys window``'s output, if it names one."""
    return _app(_FOCUS.search(window_dump)) or _app(_FOCUSED_APP.search(window_dump))


def resumed_activity(activities_dump: str) -> CurrentApp | None:
    """The resumed activity in ``dumpsys activity activities``' output, if it names one."""
    for pattern in _RESUMED:
        found = _app(pattern.search(activities_dump))
        if found is not None:
            return found
    return None


def keyboard_shown(input_method_dump: str) -> bool | None:
    """The system's ``mInputShown``; the input method's own ``mIsInputViewShown`` when it is absent."""
    values = _INPUT_SHOWN.findall(input_method_dump) or _VIEW_SHOWN.findall(input_method_dump)
    return None if not values else "true" in values


def _windows(window_dump: str) -> list[str]:
    """Each window's block of ``dumpsys window windows``, top of the stack first."""
    starts = [m.start() for m in _WINDOW.finditer(window_dump)]
    ends = [*starts[1:], len(window_dump)] if starts else []
    return [window_dump[a:b] for a, b in zip(starts, ends, strict=True)]


def ime_frame(window_dump: str) -> tuple[int, int, int, int] | None:
    """Where the input method's keys are (left, top, right, bottom) while its window is visible
    (``mViewVisibility=0x0``, or ``isVisible=true`` / ``isOnScreen=true``): its window's frame, below
    the content insets it gives when the window reaches higher than the keys."""
    for block in _windows(window_dump):
        head = block.splitlines()[0]
        visible = any(mark in block for mark in _VISIBLE) and not any(mark in block for mark in _HIDDEN)
        if "InputMethod}" not in head or not visible:
            continue
        frame = _FRAME.search(block)
        if frame is None:
            continue
        left, top, right, bottom = (int(v) for v in frame.groups())
        insets = _CONTENT_INSETS.search(block)
        if insets is not None and 0 < int(insets.group(2)) < bottom - top:
            top += int(insets.group(2))
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
