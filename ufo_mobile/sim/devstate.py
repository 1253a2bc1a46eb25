"""What the emulated device knows besides the ``SimPhone``: properties, settings, input methods,
the clipboard, its file system, the uiautomator2 server flag, limits and injected faults.

One ``DeviceState`` is shared by every connection and stream of an ``EmulatedAdbd``. Fault
switches are set from test threads, so they sit behind a lock.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

from ufo_mobile.sim.devfs import DeviceFs
from ufo_mobile.sim.phone import SimPhone

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_IME = "com.android.adbkeyboard/.AdbIME"
KNOWN_IMES = (LATIN_IME, ADB_IME)
EMPTY_DUMP = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"
DISPLAY_ID = "4619827259835644672"
COMMAND_LOG_SIZE = 10_000


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
        self._lock = threading.Lock()
        self._hang: list[str] = []
        self._empty = 0

    def hang(self, prefix: str) -> None:
        with self._lock:
            self._hang.append(prefix)

    def unhang(self, prefix: str | None = None) -> None:
        with self._lock:
            self._hang = [] if prefix is None else [p for p in self._hang if p != prefix]

    def hangs(self, command: str) -> bool:
        with self._lock:
            return any(command.startswith(prefix) for prefix in self._hang)

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
class DeviceState:
    phone: SimPhone
    serial: str
    limits: AdbdLimits = field(default_factory=AdbdLimits)
    faults: Faults = field(default_factory=Faults)

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.fs = DeviceFs(lambda: int(self.phone.now().timestamp()), max_file_size=self.limits.max_file_size)
        self.props = default_props(self.phone, self.serial)
        self.settings: dict[str, dict[str, str]] = {
            "system": {"screen_brightness": "102", "screen_brightness_mode": "0", "screen_off_timeout": "30000",
                       "pointer_location": "0", "show_touches": "0"},
            "secure": {"default_input_method": LATIN_IME, "enabled_input_methods": LATIN_IME,
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
        self._u2_ports: dict[int, int] = {}

    # -- input methods (kept in the secure settings, as on Android) -----------------------------

    def enabled_imes(self) -> list[str]:
        with self.lock:
            return [ime for ime in self.settings["secure"].get("enabled_input_methods", "").split(":") if ime]

    def set_enabled_imes(self, imes: list[str]) -> None:
        with self.lock:
            self.settings["secure"]["enabled_input_methods"] = ":".join(imes)

    def current_ime(self) -> str:
        with self.lock:
            return self.settings["secure"].get("default_input_method", "")

    # -- uiautomator2 server ---------------------------------------------------------------------

    def u2_start(self, port: int) -> bool:
        """Mark the server on ``port`` started; False if one already runs there."""
        with self.lock:
            if self._u2_ports.get(port):
                return False
            self._u2_ports[port] = 1
            return True

    def u2_stop(self, port: int) -> None:
        with self.lock:
            self._u2_ports.pop(port, None)

    def u2_running(self, port: int) -> bool:
        with self.lock:
            return bool(self._u2_ports.get(port))

    # -- hierarchy -------------------------------------------------------------------------------

    def dump_xml(self) -> str:
        """The uiautomator XML of the screen, or the empty dump while the fault asks for one."""
        if self.faults.take_empty_dump():
            return EMPTY_DUMP
        return self.phone.dump_hierarchy()

    def density(self) -> int:
        width, _ = self.phone.screen_size()
        return max(120, round(420 * width / 1080))


def default_props(phone: SimPhone, serial: str) -> dict[str, str]:
    width, height = phone.screen_size()
    return {
        "ro.product.name": "ufo_sim", "ro.product.model": "UFO Sim Phone", "ro.product.device": "ufo_sim",
        "ro.product.manufacturer": "UFO", "ro.product.brand": "ufo", "ro.product.board": "ufo_sim",
        "ro.product.cpu.abi": "x86_64", "ro.product.cpu.abilist": "x86_64,arm64-v8a",
        "ro.build.version.release": "14", "ro.build.version.sdk": "34", "ro.build.version.codename": "REL",
        "ro.build.version.security_patch": "2025-01-05", "ro.build.type": "userdebug",
        "ro.build.tags": "release-keys", "ro.build.id": "UP1A.231005.007",
        "ro.build.display.id": "ufo_sim-userdebug 14 UP1A.231005.007",
        "ro.build.fingerprint": "ufo/ufo_sim/ufo_sim:14/UP1A.231005.007/1:userdebug/release-keys",
        "ro.build.characteristics": "default", "ro.serialno": serial, "ro.boot.serialno": serial,
        "ro.sf.lcd_density": str(max(120, round(420 * width / 1080))), "ro.debuggable": "1",
        "ro.secure": "1", "ro.adb.secure": "0", "service.adb.root": "0", "sys.boot_completed": "1",
        "dev.bootcomplete": "1", "init.svc.bootanim": "stopped", "persist.sys.timezone": "UTC",
        "persist.sys.locale": "en-US", "ro.product.locale": "en-US", "gsm.operator.alpha": "UFO Mobile",
        "ro.config.screen_size": f"{width}x{height}",
    }
