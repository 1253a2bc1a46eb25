"""The device port: what the agent may ask of a phone.

Every driver (simulated, adbutils, uiautomator2, wrappers) implements ``DeviceDriver``. A driver
lists the operations it really implements in the class-level ``supported`` set; the others raise
``NotImplementedError`` and tools consult ``supported`` before offering an action to the model.
All methods are coroutines; drivers that wrap blocking libraries run them through
``device.blocking.call_blocking`` (a daemon thread under a timeout).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

# Android key names accepted by ``press_key`` (case-insensitive), mapped to KEYCODE numbers.
KEYCODES: dict[str, int] = {
    "home": 3,
    "back": 4,
    "call": 5,
    "endcall": 6,
    "volume_up": 24,
    "volume_down": 25,
    "power": 26,
    "camera": 27,
    "tab": 61,
    "space": 62,
    "enter": 66,
    "del": 67,
    "search": 84,
    "menu": 82,
    "dpad_up": 19,
    "dpad_down": 20,
    "dpad_left": 21,
    "dpad_right": 22,
    "app_switch": 187,
    "forward_del": 112,
    "move_end": 123,
    "select_all": 257,  # not a real keycode; drivers translate it (ctrl+a)
}


def normalize_key(key: str) -> str:
    """Return the canonical lower-case key name, accepting ``KEYCODE_BACK`` and ``Back``."""
    name = key.strip().lower()
    if name.startswith("keycode_"):
        name = name[len("keycode_"):]
    if name not in KEYCODES:
        raise ValueError(f"unknown key {key!r}; known keys: {', '.join(sorted(KEYCODES))}")
    return name


@dataclass(frozen=True)
class AppInfo:
    """An installed app: its package and the label a user sees."""

    package: str
    label: str


@dataclass(frozen=True)
class KeyboardState:
    """Whether the soft keyboard is up, and where (left, top, right, bottom) when the device says."""

    shown: bool
    frame: tuple[int, int, int, int] | None = None


@dataclass(frozen=True)
class CurrentApp:
    """The app in the foreground."""

    package: str
    activity: str = ""


class DeviceDriver:
    """Base class of every driver. Subclasses override what they list in ``supported``."""

    supported: ClassVar[frozenset[str]] = frozenset()

    #: A name for logs and errors: the adb serial, or ``sim`` for the in-process simulator.
    serial: str = "?"

    async def connect(self) -> None:
        raise NotImplementedError("connect")

    async def ensure_connected(self) -> None:
        raise NotImplementedError("ensure_connected")

    async def close(self) -> None:
        """Release resources. Safe to call twice; the default does nothing."""

    async def tap(self, x: int, y: int) -> None:
        raise NotImplementedError("tap")

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        """Press and hold; the default is a zero-length swipe, which is what Android does too."""
        await self.swipe(x, y, x, y, duration_ms)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        raise NotImplementedError("swipe")

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        raise NotImplementedError("drag")

    async def input_text(self, text: str, clear: bool = False) -> None:
        """Type ``text`` into the focused field, replacing its content when ``clear`` is true."""
        raise NotImplementedError("input_text")

    async def press_key(self, key: str) -> None:
        raise NotImplementedError("press_key")

    async def start_app(self, package: str, activity: str | None = None) -> None:
        raise NotImplementedError("start_app")

    async def install_app(self, apk_path: str) -> None:
        raise NotImplementedError("install_app")

    async def list_packages(self) -> list[str]:
        raise NotImplementedError("list_packages")

    async def get_apps(self) -> list[AppInfo]:
        raise NotImplementedError("get_apps")

    async def screenshot(self) -> bytes:
        """The current screen as PNG bytes."""
        raise NotImplementedError("screenshot")

    async def get_ui_tree(self) -> str:
        """The current UI hierarchy as uiautomator XML."""
        raise NotImplementedError("get_ui_tree")

    async def fallback_ui_tree(self) -> str:
        """The hierarchy by another route when ``get_ui_tree`` keeps being refused (optional)."""
        raise NotImplementedError("fallback_ui_tree")

    async def keyboard_state(self) -> KeyboardState:
        """Whether the soft keyboard is up, and its frame (optional)."""
        raise NotImplementedError("keyboard_state")

    async def get_date(self) -> str:
        raise NotImplementedError("get_date")

    async def current_app(self) -> CurrentApp:
        raise NotImplementedError("current_app")

    async def screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels, in the current orientation."""
        raise NotImplementedError("screen_size")

    def supports(self, operation: str) -> bool:
        return operation in self.supported

    def observe(self, observation_id: str | None) -> None:
        """Name the observation the next actions are decided on. Drivers that record actions use
        it; the default does nothing."""
