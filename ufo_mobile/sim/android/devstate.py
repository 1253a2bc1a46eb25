"""What the emulated device knows besides the ``SimPhone``: its realism profile, properties,
settings, input methods, the clipboard, its file system and packages, the uiautomator2 servers,
the state of its dump quirks, limits and injected faults.

One ``DeviceState`` is shared by every connection and stream of an ``EmulatedAdbd``. Fault
switches are set from test threads, so they sit behind a lock. Creating one prepares the phone for
the profile: its extra apps are installed and the soft keyboard is turned on if the profile says.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from dataclasses import dataclass, field

from ufo_mobile.sim.android.devfs import DeviceFs
from ufo_mobile.sim.android.packages import PackageManager
from ufo_mobile.sim.android.profile import (
    ADB_IME,
    LATIN_IME,
    MIUI_INPUT_SWITCH,
    RealismProfile,
    device_props,
    get_profile,
)
from ufo_mobile.sim.phone.facts import Foreground
from ufo_mobile.sim.phone.loader import packaged_app
from ufo_mobile.sim.phone.simphone import SimPhone

__all__ = ["ADB_IME", "KNOWN_IMES", "LATIN_IME", "AdbdLimits", "DeviceState", "Faults", "Touch", "U2Server"]

KNOWN_IMES = (LATIN_IME, ADB_IME)  # the kind phone's
EMPTY_DUMP = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"
DISPLAY_ID = "4619827259835644672"
SECOND_DISPLAY_ID = "4619827551948147201"  # a foldable's second panel (port 1)
COMMAND_LOG_SIZE = 10_000
FIRST_SERVER_PID = 30000  # above every app pid (dumpsys_wm.pid_of)


@dataclass(frozen=True, slots=True)
class AdbdLimits:
    """Upper bounds of every wait of the emulated device (seconds) and of its memory use."""

    ack_timeout: float = 30.0        # host OKAY for a WRTE, and TCP drain
    read_timeout: float = 120.0      # a service waiting for host bytes (sync, HTTP, stdin)
    hang_timeout: float = 600.0      # a command hung by ``EmulatedAdbd.hang``
    server_timeout: float = 3600.0   # the uiautomator2 server started by app_process
    sleep_max: float = 60.0          # ``sleep N`` is capped at this
    max_file_size: int = 64 * 1024 * 1024
    stop_timeout: float = 5.0        # stopping the daemon and its connections

    def __post_init__(self) -> None:
        for name in ("ack_timeout", "read_timeout", "hang_timeout", "server_timeout", "sleep_max",
                     "stop_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")


class Faults:
    """Switches for tests: hung command prefixes and a count of empty hierarchy dumps."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._hang: list[str] = []
        self._hung: list[str] = []  # the commands that hung, in order
        self._empty = 0

    def hang(self, prefix: str) -> None:
        with self._lock:
            self._hang.append(prefix)

    def unhang(self, prefix: str | None = None) -> None:
        with self._lock:
            self._hang = [] if prefix is None else [p for p in self._hang if p != prefix]

    def hangs(self, command: str) -> bool:
        """Whether ``command`` is to hang (it is then counted as hung)."""
        with self._lock:
            hung = any(command.startswith(prefix) for prefix in self._hang)
            if hung:
                self._hung.append(command)
                self._lock.notify_all()
            return hung

    def wait_hung(self, prefix: str, timeout: float) -> bool:
        """Wait (from any thread) until a command starting with ``prefix`` hangs; False after
        ``timeout`` seconds without one."""
        with self._lock:
            return self._lock.wait_for(lambda: any(c.startswith(prefix) for c in self._hung), timeout)

    def empty_dumps(self, count: int) -> None:
        if count < 0:
            raise ValueError("count must be >= 0")
        with self._lock:
            self._empty = count

    def take_empty_dump(self) -> bool:
        with self._lock:
            if self._empty <= 0:
                return False
            self._empty -= 1
            return True


@dataclass
class Touch:
    """A gesture in progress from ``injectInputEvent`` or ``input motionevent``."""

    x: int
    y: int
    started: float
    last_x: int
    last_y: int


@dataclass
class U2Server:
    """A uiautomator2 server started by ``app_process``; setting ``stopped`` kills it."""

    port: int
    pid: int
    command: str
    stopped: asyncio.Event


@dataclass
class DeviceState:
    phone: SimPhone
    serial: str
    limits: AdbdLimits = field(default_factory=AdbdLimits)
    faults: Faults = field(default_factory=Faults)
    profile: RealismProfile = field(default_factory=get_profile)

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.fs = DeviceFs(lambda: int(self.phone.now().timestamp()), max_file_size=self.limits.max_file_size)
        width, height = self.phone.screen_size()
        self.props = device_props(self.profile, self.serial, width, height)
        ime = self.profile.ime
        self.settings: dict[str, dict[str, str]] = {
            "system": {"screen_brightness": "102", "screen_brightness_mode": "0", "screen_off_timeout": "30000",
                       "pointer_location": "0", "show_touches": "0"},
            "secure": {"default_input_method": ime, "enabled_input_methods": ime,
                       "android_id": "5a1e0f00d5eb5a11"},
            "global": {"airplane_mode_on": "0", "adb_enabled": "1", "stay_on_while_plugged_in": "0",
                       "window_animation_scale": "1.0", "transition_animation_scale": "1.0",
                       "animator_duration_scale": "1.0"},
        }
        self.clipboard: str | None = None
        self.touch: Touch | None = None
        self.commands: deque[str] = deque(maxlen=COMMAND_LOG_SIZE)
        self.u2_blocked = False
        self.unauthorized = False  # answer CNXN with an AUTH challenge that is never accepted
        self._u2: dict[int, U2Server] = {}
        self._next_pid = FIRST_SERVER_PID
        self._last_activity: Foreground = self.phone.current_app()
        self._null_roots = 0
        self._window_dumps = 0
        self.adb_keyboard_deaf = 0  # broadcasts the ADB Keyboard's late receiver still misses
        self._imes: list[str] = list(self.profile.known_imes)  # grows when an IME's APK is installed
        self._prepare_phone()
        self.packages = PackageManager(self.phone, self.profile)
        if self.packages.realistic:
            self.fs.set_resolver(self.packages.apk_bytes)

    def _prepare_phone(self) -> None:
        installed = {app.package for app in self.phone.installed_apps()}
        for package in self.profile.extra_apps:
            if package not in installed:
                self.phone.install(packaged_app(package))
        if self.profile.soft_keyboard:
            self.phone.soft_keyboard = True

    # -- input methods (kept in the secure settings, as on Android) -----------------------------

    def known_imes(self) -> tuple[str, ...]:
        """Every installed input method (``ime list -a``)."""
        with self.lock:
            return tuple(self._imes)

    def add_ime(self, ime: str) -> None:
        """An installed APK brought an input method (``pm install``)."""
        with self.lock:
            if ime not in self._imes:
                self._imes.append(ime)

    def remove_imes(self, package: str) -> None:
        """``pm uninstall``: the package's input methods go, and with them its selection."""
        with self.lock:
            self._imes = [ime for ime in self._imes if ime.partition("/")[0] != package]
            self.set_enabled_imes([ime for ime in self.enabled_imes() if ime in self._imes])
            if self.current_ime() not in self._imes:
                self.settings["secure"]["default_input_method"] = self.profile.ime

    def enabled_imes(self) -> list[str]:
        with self.lock:
            return [ime for ime in self.settings["secure"].get("enabled_input_methods", "").split(":") if ime]

    def set_enabled_imes(self, imes: list[str]) -> None:
        with self.lock:
            self.settings["secure"]["enabled_input_methods"] = ":".join(imes)

    def current_ime(self) -> str:
        with self.lock:
            return self.settings["secure"].get("default_input_method", "")

    def select_ime(self, ime: str) -> None:
        """``ime set``: the ADB Keyboard's receiver binds late (``adb_keyboard_late`` broadcasts)."""
        with self.lock:
            self.settings["secure"]["default_input_method"] = ime
            if ime == ADB_IME:
                self.adb_keyboard_deaf = self.profile.adb_keyboard_late

    def setting_changed(self, namespace: str, key: str, value: str) -> None:
        """Side effects of ``settings put`` (the MIUI input switch's stand-in sets its property)."""
        if namespace == "global" and key == MIUI_INPUT_SWITCH and self.profile.inject_guard:
            self.props[MIUI_INPUT_SWITCH] = value

    def inject_allowed(self) -> bool:
        """False while MIUI refuses injected input (``inject_guard`` and its switch off)."""
        return not self.profile.inject_guard or self.props.get(MIUI_INPUT_SWITCH) == "1"

    # -- uiautomator2 server ---------------------------------------------------------------------

    def u2_start(self, port: int, command: str = "") -> U2Server | None:
        """Register the server on ``port`` as started; None if one already runs there."""
        with self.lock:
            if port in self._u2:
                return None
            server = self._u2[port] = U2Server(port, self._next_pid, command, asyncio.Event())
            self._next_pid += 1
            return server

    def u2_stop(self, port: int, server: U2Server | None = None) -> None:
        """Forget the server on ``port`` (only if it is still ``server``, when given)."""
        with self.lock:
            if server is None or self._u2.get(port) is server:
                self._u2.pop(port, None)

    def u2_kill(self, pid: int) -> bool:
        """Stop the server with process id ``pid`` at once (``pkill``); False if there is none."""
        with self.lock:
            for port, server in list(self._u2.items()):
                if server.pid == pid:
                    del self._u2[port]
                    server.stopped.set()
                    return True
            return False

    def u2_running(self, port: int | None = None) -> bool:
        """Whether the server on ``port`` (any port for None) runs."""
        with self.lock:
            return bool(self._u2) if port is None else port in self._u2

    def u2_servers(self) -> list[U2Server]:
        with self.lock:
            return list(self._u2.values())

    # -- hierarchy -------------------------------------------------------------------------------

    def dump_xml(self) -> str:
        """The uiautomator XML of the screen, or the empty dump while the fault asks for one."""
        if self.faults.take_empty_dump():
            return EMPTY_DUMP
        return self.phone.dump_hierarchy()

    def null_root_now(self) -> bool:
        """Whether this ``uiautomator dump`` finds no root: the first ``null_root_dumps`` dumps after
        the foreground activity changed do (the window is still being replaced)."""
        current = self.phone.current_app()
        with self.lock:
            if current != self._last_activity:
                self._last_activity = current
                self._null_roots = self.profile.null_root_dumps
            if self._null_roots <= 0:
                return False
            self._null_roots -= 1
            return True

    def next_window_dump(self) -> int:
        """The number of this uiautomator2 window dump (seeds the order of its window roots)."""
        with self.lock:
            self._window_dumps += 1
            return self._window_dumps

    def display_ids(self) -> list[str]:
        return [DISPLAY_ID, SECOND_DISPLAY_ID] if self.profile.second_display else [DISPLAY_ID]

    def density(self) -> int:
        width, _ = self.phone.screen_size()
        return max(120, round(420 * width / 1080))
