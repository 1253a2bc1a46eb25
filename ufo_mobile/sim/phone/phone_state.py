"""What a simulated phone holds and shows: installed apps (``model.App``) and each app's state
variables, the phone's facts (size, clock, focus, keyboard), the laid-out screen, and Android-like
tasks. A task is a back stack of frames (package + screen + scroll offsets + focused field), keyed
by the package that started it. The launcher's task always exists; HOME brings it to the front;
BACK pops the current task and leaves it for the launcher at its root. A ``launch`` effect with a
screen pushes that app's screen onto the caller's task (BACK returns to the caller), while a plain
launch, like ``start_app``, resumes or starts the target's own task.

``simphone.SimPhone`` adds the touches and keys. Every public method is thread-safe (one
re-entrant lock), synchronous and quick.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ufo_mobile.errors import DeviceCommandError, SimulatorError
from ufo_mobile.sim.phone import keyboard, theme
from ufo_mobile.sim.phone.behaviour import LaunchSpec
from ufo_mobile.sim.phone.facts import Foreground, InstalledApp, fixed_clock
from ufo_mobile.sim.phone.hierarchy import to_xml
from ufo_mobile.sim.phone.layout import Layout
from ufo_mobile.sim.phone.loader import builtin_apps, load_app_file
from ufo_mobile.sim.phone.model import App, Screen
from ufo_mobile.sim.phone.paint import Fonts
from ufo_mobile.sim.phone.render import Renderer
from ufo_mobile.sim.phone.shots import ShotCache
from ufo_mobile.sim.phone.tasks import Frame, Tasks
from ufo_mobile.sim.phone.template import Scope, render, resolve, truthy
from ufo_mobile.sim.phone.view import Snapshot, StatusBar

LAUNCHER = "com.android.launcher3"
SETTINGS = "com.android.settings"


class PhoneState:
    """The state of a simulated phone and its navigation; ``SimPhone`` adds the input and is the
    class to use. ``apps=None`` installs the shipped apps (launcher, Settings, ...).

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
        self._shots = ShotCache()

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
            keyboard_up = self.soft_keyboard and frame.keyboard_up
            resized = keyboard_up and app.screens[frame.screen].soft_input == "resize"
            layout = Layout(app, self._states[frame.package], self._extras(), fonts=self._fonts,
                            width=width, height=height, scroll=frame.scroll, focus=frame.focus,
                            content_bottom=keyboard.window_rect(width, height).top if resized else None)
            root = layout.build(frame.screen)
            settings = self._states.get(SETTINGS, {})
            status = StatusBar(time=f"{self._clock():%H:%M}", battery=self.battery,
                               wifi=truthy(settings.get("wifi")), bluetooth=truthy(settings.get("bluetooth")))
            return Snapshot(width=width, height=height, package=frame.package, screen=frame.screen,
                            activity=app.activity_of(frame.screen), root=root, status=status,
                            status_height=layout.status_height, nav_height=layout.nav_height,
                            dark=truthy(settings.get("dark_theme")), toast=self._toast,
                            app_color=app.color, background=app.screens[frame.screen].background,
                            keyboard=keyboard_up)

    def dump_hierarchy(self) -> str:
        """The current screen as uiautomator XML."""
        return to_xml(self.snapshot())

    def screenshot_png(self) -> bytes:
        """The current screen as PNG bytes (drawn and encoded once per screen: ``shots.ShotCache``)."""
        return self._shots.png(self.snapshot(), self._renderer.png)

    def _extras(self) -> dict[str, Any]:
        now = self._clock()
        apps = [{"package": app.package, "label": app.label,
                 "color": app.color or theme.colour_for(app.package)}
                for app in self._apps.values() if app.launcher_icon and app.package != self._launcher]
        return {"@time": f"{now:%H:%M}", "@date": f"{now:%a, %b} {now.day}", "@apps": apps}

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

