"""``SimPhone``: a deterministic simulated Android phone driven by pixel coordinates.

What the phone holds and shows (apps, state, tasks, the laid-out screen, navigation) is
``phone_state.PhoneState``; this module adds the input: taps, long presses, swipes and drags on the
screen (or on the soft keyboard), typed text and key presses, and the ``on_tap``,
``on_long_press`` and ``submit`` effects they run.

Every public method is thread-safe (one re-entrant lock), synchronous and quick; the async
``SimDriver`` runs the slow one (rendering) in a thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from ufo_mobile.errors import DeviceCommandError
from ufo_mobile.sim.phone import keyboard, keys
from ufo_mobile.sim.phone.behaviour import Effect
from ufo_mobile.sim.phone.effects import run_effects
from ufo_mobile.sim.phone.facts import DEFAULT_TIME, Foreground, InstalledApp, fixed_clock, real_clock
from ufo_mobile.sim.phone.phone_state import LAUNCHER, PhoneState
from ufo_mobile.sim.phone.template import Scope, fmt, truthy
from ufo_mobile.sim.phone.view import View

__all__ = ["DEFAULT_TIME", "LAUNCHER", "Foreground", "InstalledApp", "SimPhone", "fixed_clock", "real_clock"]

LONG_PRESS_MS = 500
TOUCH_SLOP = 24


class SimPhone(PhoneState):
    """A simulated phone. ``apps=None`` installs the shipped apps (launcher, Settings, ...).

    ``soft_keyboard`` (off by default; realistic device profiles turn it on): while a text field
    has focus a keyboard covers the bottom of the screen and takes the touches there."""

    def tap(self, x: int, y: int) -> None:
        """Tap the topmost, deepest enabled clickable view at (x, y); nothing there does nothing."""
        with self._lock:
            self._toast = ""
            if self.keyboard_shown() and keyboard.touch(self, *self._size, x, y):  # not the app's
                return
            view = self.snapshot().hit(x, y, _tappable)
            if view is not None:
                self._activate(view, x)

    def long_press(self, x: int, y: int) -> None:
        """Press and hold: long-clickable views run ``on_long_press``, clickable ones click."""
        with self._lock:
            self._toast = ""
            if self.keyboard_shown() and keyboard.touch(self, *self._size, x, y):  # not the app's
                return
            view = self.snapshot().hit(x, y, lambda v: _tappable(v) or (v.enabled and v.long_clickable))
            if view is None:
                return
            if not view.long_clickable:
                self._activate(view, x)
                return
            if view.kind == "field":
                self._focus(view)
            if view.spec is not None:
                self._run(view.spec.on_long_press, view)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        """Drag a SeekBar, scroll the scroll container under the start point, or tap/long press."""
        slop = round(TOUCH_SLOP * self._size[0] / 1080)
        if abs(x2 - x1) <= slop and abs(y2 - y1) <= slop:
            if duration_ms >= LONG_PRESS_MS:
                self.long_press(x1, y1)
            else:
                self.tap(x1, y1)
            return
        with self._lock:
            self._toast = ""
            if self.keyboard_shown() and keyboard.window_rect(*self._size).contains(x1, y1):
                return  # a swipe on the keyboard: no gesture typing here
            snap = self.snapshot()
            seekbar = snap.hit(x1, y1, lambda v: v.enabled and v.kind == "seekbar")
            if seekbar is not None and seekbar.bind:
                self._states[seekbar.package][seekbar.bind] = seekbar.seek_value(x2, self._size[0] / 1080)
                return
            scroller = snap.hit(x1, y1, lambda v: v.scrollable)
            if scroller is not None and abs(y2 - y1) > slop:
                offset = max(0, min(scroller.scroll_range, scroller.scroll_offset + (y1 - y2)))
                from_end = scroller.spec is not None and scroller.spec.from_end
                self._top().scroll[scroller.key] = scroller.scroll_range - offset if from_end else offset

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        """A slow swipe; the simulator treats it like one."""
        self.swipe(x1, y1, x2, y2, max(duration_ms, LONG_PRESS_MS))

    def input_text(self, text: str, clear: bool = False) -> None:
        """Type into the focused field exactly as given; ``clear`` replaces its content."""
        with self._lock:
            self._toast = ""
            frame = self._top()
            if frame.focus is None:
                raise DeviceCommandError("input_text: no text field has focus (tap one first)",
                                         serial=self.serial)
            state = self._states[frame.package]
            before = "" if clear or frame.select_all else fmt(state.get(frame.focus))
            state[frame.focus] = before + text
            frame.select_all = False

    def press_key(self, key: str | int) -> None:
        """Press a key by name (``back``, ``KEYCODE_HOME``) or keycode number."""
        name = keys.key_name(key)
        if name is None:
            raise DeviceCommandError(f"press_key: unknown key {key!r}", serial=self.serial)
        with self._lock:
            self._toast = ""
            if name == "home":
                self.home()
            elif name == "back":
                self.back()
            elif name == "enter":
                self._enter()
            elif name in ("del", "select_all", "space"):
                self._edit_key(name)

    def _enter(self) -> None:
        frame = self._top()
        if frame.focus is None:
            return
        field_view = self.snapshot().find(lambda v: v.kind == "field" and v.bind == frame.focus)
        if field_view is None or field_view.spec is None:
            return
        if field_view.spec.submit:
            self._run(field_view.spec.submit, field_view)
        elif field_view.spec.multiline:
            self.input_text("\n")

    def _edit_key(self, name: str) -> None:
        frame = self._top()
        if frame.focus is None:
            return
        state = self._states[frame.package]
        if name == "select_all":
            frame.select_all = True
        elif name == "space":
            self.input_text(" ")
        else:
            text = fmt(state.get(frame.focus))
            state[frame.focus] = "" if frame.select_all else text[:-1]
            frame.select_all = False

    def _activate(self, view: View, x: int) -> None:
        """A click on ``view``: focus, seek, toggle, then its ``on_tap`` effects."""
        state = self._states[view.package]
        if view.kind == "field":
            self._focus(view)
        elif view.kind == "seekbar" and view.bind:
            state[view.bind] = view.seek_value(x, self._size[0] / 1080)
        elif view.kind == "toggle" and view.bind:
            state[view.bind] = not truthy(state.get(view.bind))
        if view.spec is not None:
            self._run(view.spec.on_tap, view)

    def _focus(self, view: View) -> None:
        self._top().focus_on(view.bind)

    def _run(self, effects: Sequence[Effect], view: View) -> None:
        if not effects:
            return
        state = self._states[view.package]
        item = view.scope.item if view.scope is not None else None
        extras = {**self._extras(), **(view.scope.extras if view.scope is not None else {})}
        run_effects(effects, view.package, state, Scope(state, item, extras), self)


def _tappable(view: View) -> bool:
    return view.enabled and (view.clickable or view.kind == "seekbar")
