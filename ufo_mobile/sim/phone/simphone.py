"""``SimPhone``: a deterministic simulated Android phone driven by pixel coordinates.

The phone holds installed apps (``model.App``), each app's state variables, and Android-like
tasks: a task is a back stack of frames (package + screen + scroll offsets + focused field),
keyed by the package that started it. The launcher's task always exists; HOME brings it to the
front; BACK pops the current task and leaves it for the launcher at its root. A ``launch`` effect
with a screen pushes that app's screen onto the caller's task (BACK returns to the caller), while a
plain launch, like ``start_app``, resumes or starts the target's own task.

Every public method is thread-safe (one re-entrant lock), synchronous and quick; the async
``SimDriver`` runs the slow one (rendering) in a thread.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ufo_mobile.errors import DeviceCommandError, SimulatorError
from ufo_mobile.sim.phone import keyboard, keys, theme
from ufo_mobile.sim.phone.behaviour import Effect, LaunchSpec
from ufo_mobile.sim.phone.effects import run_effects
from ufo_mobile.sim.phone.facts import DEFAULT_TIME, Foreground, InstalledApp, fixed_clock, real_clock
from ufo_mobile.sim.phone.hierarchy import to_xml
from ufo_mobile.sim.phone.layout import Layout
from ufo_mobile.sim.phone.loader import builtin_apps, load_app_file
from ufo_mobile.sim.phone.model import App, Screen
from ufo_mobile.sim.phone.paint import Fonts
from ufo_mobile.sim.phone.render import Renderer
from ufo_mobile.sim.phone.tasks import Frame, Tasks
from ufo_mobile.sim.phone.template import Scope, fmt, render, resolve, truthy
from ufo_mobile.sim.phone.view import Snapshot, StatusBar, View

__all__ = ["DEFAULT_TIME", "Foreground", "InstalledApp", "SimPhone", "fixed_clock", "real_clock"]

LAUNCHER = "com.android.launcher3"
SETTINGS = "com.android.settings"
LONG_PRESS_MS = 500
TOUCH_SLOP = 24


class SimPhone:
    """A simulated phone. ``apps=None`` installs the shipped apps (launcher, Settings, ...).

    ``soft_keyboard`` (off by default; realistic device profiles turn it on): while a text field
    has focus a keyboard covers the bottom of the screen and takes the touches there."""

    def __init__(self, apps: Iterable[App] | None = None, *, width: int = 1080, height: int = 2400,
                 clock: Callable[[], datetime] | None = None, launcher: str = LAUNCHER,
                 serial: str = "sim", battery: int = 87) -> None:
        if width < 320 or height < 480:
            raise SimulatorError(f"screen size {width}x{height} is too small (at least 320x480)")
        self.serial = serial
        self.battery = battery
        self._size = (width, height)
        self._clock = clock or fixed_clock()
        self._launcher = launcher
        self._lock = threading.RLock()
        self._apps: dict[str, App] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._toast = ""
        self.soft_keyboard = False
        self._fonts = Fonts()  # for measuring text; used only under self._lock
        for app in builtin_apps() if apps is None else apps:
            self._register(app)
        if launcher not in self._apps:
            raise SimulatorError(f"no launcher installed: install an app with package {launcher!r}")
        self._tasks = Tasks(self._frame(launcher, self._apps[launcher].start))
        self._renderer = Renderer()

    # -- apps and state ------------------------------------------------------------------------

    def install(self, app: App) -> None:
        """Install (or replace, resetting its state and closing its screens) an app."""
        with self._lock:
            self._tasks.drop_package(app.package)
            self._register(app)
            if app.package == self._launcher:
                self._tasks = Tasks(self._frame(app.package, app.start))

    def install_app(self, path: str | Path) -> App:
        """Load an app YAML file and install it; raises ``SimulatorError`` for a bad file."""
        app = load_app_file(path)
        self.install(app)
        return app

    def _register(self, app: App) -> None:
        self._apps[app.package] = app
        self._states[app.package] = copy.deepcopy(app.state)

    def installed_apps(self) -> list[InstalledApp]:
        with self._lock:
            return [InstalledApp(app.package, app.label) for app in self._apps.values()]

    def app(self, package: str) -> App:
        """The spec of an installed app."""
        with self._lock:
            if package not in self._apps:
                raise SimulatorError(f"app {package!r} is not installed")
            return self._apps[package]

    def state(self, package: str) -> dict[str, Any]:
        """A copy of an app's state variables, e.g. ``state("com.android.settings")["wifi"]``."""
        with self._lock:
            if package not in self._states:
                raise SimulatorError(f"app {package!r} is not installed")
            return copy.deepcopy(self._states[package])

    def set_state(self, package: str, **values: Any) -> None:
        """Set state variables of an app (test setup)."""
        with self._lock:
            if package not in self._states:
                raise SimulatorError(f"app {package!r} is not installed")
            self._states[package].update(copy.deepcopy(values))

    # -- phone facts ---------------------------------------------------------------------------

    def screen_size(self) -> tuple[int, int]:
        return self._size

    def now(self) -> datetime:
        return self._clock()

    def date(self) -> str:
        """The time as Android's ``date`` prints it: ``Wed Jan 15 09:41:00 UTC 2025``."""
        now = self._clock()
        return f"{now:%a %b} {now.day:2d} {now:%H:%M:%S} {now.tzname() or 'UTC'} {now.year}"

    def current_app(self) -> Foreground:
        with self._lock:
            frame = self._top()
            return Foreground(frame.package, self._apps[frame.package].activity_of(frame.screen))

    def current_screen(self) -> str:
        """The screen name shown (handy in tests and task checks)."""
        with self._lock:
            return self._top().screen

    def focused_field(self) -> str | None:
        """The state variable of the focused text field, if any."""
        with self._lock:
            return self._top().focus

    def selecting(self) -> bool:
        """Whether the focused field's text is all selected (CTRL+A, select_all), so the next key replaces it."""
        with self._lock:
            frame = self._top()
            return frame.focus is not None and frame.select_all

    def keyboard_shown(self) -> bool:
        """Whether the soft keyboard is up (it is on, and a text field has focus)."""
        with self._lock:
            return self.soft_keyboard and self._top().keyboard_up

    def hide_keyboard(self) -> None:
        """The input method hides itself; the field keeps its focus (a tap on it shows it again)."""
        with self._lock:
            self._top().keyboard_hidden = True

    def screen_spec(self) -> Screen:
        """The spec of the screen shown (its ``animated`` and ``secure`` flags, ...)."""
        with self._lock:
            frame = self._top()
            return self._apps[frame.package].screens[frame.screen]

    def task_tops(self) -> list[Foreground]:
        """The top screen of every task, most recently shown first (the launcher's included)."""
        with self._lock:
            return [Foreground(f.package, self._apps[f.package].activity_of(f.screen)) for f in self._tasks.tops()]

    # -- observation ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The current screen, laid out."""
        with self._lock:
            frame = self._top()
            app = self._apps[frame.package]
            width, height = self._size
            layout = Layout(app, self._states[frame.package], self._extras(), fonts=self._fonts,
                            width=width, height=height, scroll=frame.scroll, focus=frame.focus)
            root = layout.build(frame.screen)
            settings = self._states.get(SETTINGS, {})
            status = StatusBar(time=f"{self._clock():%H:%M}", battery=self.battery,
                               wifi=truthy(settings.get("wifi")), bluetooth=truthy(settings.get("bluetooth")))
            return Snapshot(width=width, height=height, package=frame.package, screen=frame.screen,
                            activity=app.activity_of(frame.screen), root=root, status=status,
                            status_height=layout.status_height, nav_height=layout.nav_height,
                            dark=truthy(settings.get("dark_theme")), toast=self._toast,
                            app_color=app.color, background=app.screens[frame.screen].background,
                            keyboard=self.soft_keyboard and frame.keyboard_up)

    def dump_hierarchy(self) -> str:
        """The current screen as uiautomator XML."""
        return to_xml(self.snapshot())

    def screenshot_png(self) -> bytes:
        """The current screen as PNG bytes."""
        return self._renderer.png(self.snapshot())

    def _extras(self) -> dict[str, Any]:
        now = self._clock()
        apps = [{"package": app.package, "label": app.label,
                 "color": app.color or theme.colour_for(app.package)}
                for app in self._apps.values() if app.launcher_icon and app.package != self._launcher]
        return {"@time": f"{now:%H:%M}", "@date": f"{now:%a, %b} {now.day}", "@apps": apps}

    # -- input ---------------------------------------------------------------------------------

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

    # -- navigation (also the effects' Navigator) ----------------------------------------------

    def _top(self) -> Frame:
        return self._tasks.top

    def _frame(self, package: str, screen: str) -> Frame:
        return Frame(package, screen, focus=self._apps[package].screens[screen].focus)

    def home(self) -> None:
        """Go to the launcher; other tasks keep their back stacks."""
        with self._lock:
            self._tasks.home()

    def back(self) -> None:
        """Pop the current screen; at the root of an app, return to the launcher."""
        with self._lock:
            self._tasks.back()

    def goto(self, package: str, screen: str, replace: bool) -> None:
        """Open ``screen`` of ``package`` on top of the current task (an effect)."""
        with self._lock:
            self._tasks.push(self._frame(package, screen), replace=replace)

    def launch(self, spec: LaunchSpec, scope: Scope) -> None:
        """Run a ``launch`` effect; a missing package shows a toast, as a phone would."""
        with self._lock:
            package = render(spec.package, scope)
            if package not in self._apps:
                self._toast = "App not installed"
                return
            target = self._apps[package]
            if spec.screen is not None and spec.screen not in target.screens:
                raise SimulatorError(f"launch: app {package!r} has no screen {spec.screen!r}")
            self._states[package].update(resolve(dict(spec.extras), scope))
            if spec.screen is None:
                self.start_app(package)
            else:
                self._tasks.push(self._frame(package, spec.screen))

    def start_app(self, package: str, activity: str | None = None) -> None:
        """Bring ``package`` to the front (resuming its task) or open ``activity`` afresh."""
        with self._lock:
            if package not in self._apps:
                raise DeviceCommandError(f"start_app: package {package!r} is not installed",
                                         serial=self.serial)
            app = self._apps[package]
            screen = app.start
            if activity:
                found = app.screen_for_activity(activity)
                if found is None:
                    raise DeviceCommandError(f"start_app: {package}/{activity} does not exist",
                                             serial=self.serial)
                screen = found
            if package == self._launcher:
                self._tasks.home()
                return
            fresh = activity or not self._tasks.has(package)
            self._tasks.switch(package, self._frame(package, screen) if fresh else None)

    def stop_app(self, package: str) -> None:
        """Force-stop: forget the app's tasks (its state variables stay, like app data)."""
        with self._lock:
            self._tasks.drop_package(package)


def _tappable(view: View) -> bool:
    return view.enabled and (view.clickable or view.kind == "seekbar")
