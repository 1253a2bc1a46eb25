"""The device port: what the agent may ask of a phone.

Every driver (simulated, adbutils, uiautomator2, wrappers) implements ``DeviceDriver``. A driver
lists the operations it really implements in the class-level ``supported`` set; the others raise
``NotImplementedError`` and tools consult ``supported`` before offering an action to the model.
All methods are coroutines; drivers that wrap blocking libraries run them through
``device.blocking.call_blocking`` (a daemon thread under a timeout).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ufo_mobile.core import keycodes

_NAMED_KEYS = ("home", "back", "call", "endcall", "volume_up", "volume_down", "power", "camera", "tab", "space",
               "enter", "del", "search", "menu", "dpad_up", "dpad_down", "dpad_left", "dpad_right", "app_switch",
               "forward_del", "move_end")

KEYCODES: dict[str, int] = {name: keycodes.code(f"KEYCODE_{name}") for name in _NAMED_KEYS}
"""Our names of the keys the agent is offered, with their codes from ``core.keycodes``, and
``select_all``, which is no Android key (257 is another key on a phone): drivers press CTRL+A."""
KEYCODES["select_all"] = 257

MAX_KEYCODE = keycodes.LAST_KEYCODE
"""The highest key code AOSP's ``KeyEvent`` defines (``KEYCODE_F24``); 0 is ``KEYCODE_UNKNOWN``, no key."""

# Our names by key code; ``select_all`` has no code of its own.
_NAMES_BY_CODE: dict[int, str] = {code: name for name, code in KEYCODES.items() if name != "select_all"}


@dataclass(frozen=True)
class Key:
    """A key to press: our name for it when we have one, and its Android key code."""

    name: str | None
    code: int

    @property
    def label(self) -> str:
        """``back``, or Android's name (``KEYCODE_DPAD_CENTER``) for a key we have no name of our own for."""
        return self.name if self.name is not None else keycodes.name_of(self.code)


def resolve_key(key: str | int) -> Key:
    """The key ``key`` means: one of our names (``back``, ``select_all``), any ``KEYCODE_*`` name of
    AOSP's ``KeyEvent`` with or without the prefix, in any case (``KEYCODE_DPAD_CENTER``,
    ``dpad_center``, ``KEYCODE_A``, ``a``), or a key code (``4``, ``"4"``; digits are always a code,
    as on Android). A key we have a name for gets the name; any other is kept by its code, which the
    drivers that talk to a real phone send as it is (``input keyevent 23``).

    Raises:
        ValueError: an unknown name (naming the nearest known one), or a number that is no key code.
    """
    if isinstance(key, bool) or not isinstance(key, int | str):
        raise ValueError(f"a key is a name or an Android key code, not {key!r}")
    text = key.strip() if isinstance(key, str) else str(key)
    if isinstance(key, int) or (text.isascii() and text.isdigit()):
        code = int(key)
        if not 1 <= code <= MAX_KEYCODE:
            raise ValueError(f"unknown key code {code}: Android's key codes run from 1 to {MAX_KEYCODE} "
                             "(KEYCODE_BACK is 4, KEYCODE_HOME 3, KEYCODE_ENTER 66)")
        return Key(_NAMES_BY_CODE.get(code), code)
    name = text.lower().removeprefix("keycode_")
    if name in KEYCODES:
        return Key(name, KEYCODES[name])
    found = keycodes.code_of(text)
    if not found:  # None, or KEYCODE_UNKNOWN
        raise ValueError(_unknown_key(key))
    return Key(None, found)


def _unknown_key(key: str | int) -> str:
    if str(key).strip().upper().removeprefix("KEYCODE_") == "UNKNOWN":
        return "KEYCODE_UNKNOWN (0) is no key to press"
    close = keycodes.nearest(str(key))
    hint = f"; the nearest is {close}" if close else ""
    return (f"unknown key {key!r}: not a KEYCODE_* name of Android's KeyEvent{hint} "
            "(a name may also be given without KEYCODE_, or as its number)")


def normalize_key(key: str | int) -> str:
    """Return the canonical lower-case key name, accepting ``KEYCODE_BACK``, ``Back`` and the code ``4``.

    Raises:
        ValueError: an unknown key, or a key we have no name for (``resolve_key`` keeps those by code).
    """
    resolved = resolve_key(key)
    if resolved.name is None:
        raise ValueError(f"no name for Android key code {resolved.code} ({resolved.label}); known keys: "
                         f"{', '.join(sorted(KEYCODES))}")
    return resolved.name


class RectLike(Protocol):
    """Anything with pixel edges, such as ``ui.hierarchy.Bounds`` (right/bottom exclusive)."""

    @property
    def left(self) -> int:
        """The left edge, in pixels."""
    @property
    def top(self) -> int:
        """The top edge, in pixels."""
    @property
    def right(self) -> int:
        """The right edge, in pixels (exclusive)."""
    @property
    def bottom(self) -> int:
        """The bottom edge, in pixels (exclusive)."""


Box = RectLike | Sequence[int]
"""An element's bounds: a ``RectLike`` or ``(left, top, right, bottom)`` (a list, as a recording holds)."""


def box_edges(bounds: Box) -> tuple[int, int, int, int]:
    """``(left, top, right, bottom)`` of ``bounds``.

    Raises:
        ValueError: not four edges, or an empty box.
    """
    if isinstance(bounds, Sequence):
        if len(bounds) != 4:
            raise ValueError(f"bounds need four edges (left, top, right, bottom), got {list(bounds)}")
        left, top, right, bottom = (int(v) for v in bounds)
    else:
        left, top, right, bottom = bounds.left, bounds.top, bounds.right, bounds.bottom
    if right <= left or bottom <= top:
        raise ValueError(f"empty bounds {(left, top, right, bottom)}")
    return left, top, right, bottom


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
    """Base class of every driver: the operations the agent may ask of a phone, all coroutines.
    Subclasses override what they list in ``supported``; the rest raise ``NotImplementedError``.

    Coordinates are screen pixels in the current orientation, (0, 0) at the top left; durations are
    milliseconds. A failed call raises a ``DeviceError`` (``ufo_mobile.errors``): the phone went away
    (``DeviceDisconnectedError``), did not answer in time (``DeviceTimeoutError``) or refused the
    command (``DeviceCommandError``).
    """

    supported: ClassVar[frozenset[str]] = frozenset()

    #: The keys ``press_key`` takes, by our names; None: every key an Android phone has (``KEYCODES``).
    keys: ClassVar[frozenset[str] | None] = None

    #: The phone's system, as the model is told: ``android`` or ``ios``.
    platform: ClassVar[str] = "android"

    #: A name for logs and errors: the adb serial, or ``sim`` for the in-process simulator.
    serial: str = "?"

    async def connect(self) -> None:
        """Reach the phone and make it ready; a phone that cannot be reached raises ``DeviceError``."""
        raise NotImplementedError("connect")

    async def ensure_connected(self) -> None:
        """Connect if not yet connected (or connect again after the connection was lost)."""
        raise NotImplementedError("ensure_connected")

    async def close(self) -> None:
        """Release resources. Safe to call twice; the default does nothing."""

    async def tap(self, x: int, y: int) -> None:
        """Tap the point (x, y)."""
        raise NotImplementedError("tap")

    async def tap_in(self, bounds: Box) -> None:
        """Tap inside an element's bounds (right and bottom exclusive). This default taps the centre;
        ``StealthDriver`` taps a jittered point inside (what ``AndroidStateProvider(stealth=True)``
        asks the click actions for)."""
        left, top, right, bottom = box_edges(bounds)
        await self.tap((left + right) // 2, (top + bottom) // 2)

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        """Press and hold; the default is a zero-length swipe, which is what Android does too."""
        await self.swipe(x, y, x, y, duration_ms)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        """Swipe from (x1, y1) to (x2, y2) in ``duration_ms``."""
        raise NotImplementedError("swipe")

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        """Press at (x1, y1), move to (x2, y2) in ``duration_ms`` and let go (drag and drop)."""
        raise NotImplementedError("drag")

    async def input_text(self, text: str, clear: bool = False) -> None:
        """Type ``text`` into the focused field, replacing its content when ``clear`` is true."""
        raise NotImplementedError("input_text")

    async def press_key(self, key: str | int) -> None:
        """Press a key: a name from ``KEYCODES`` (``back``, ``KEYCODE_BACK``) or an Android key code
        (``4``); see ``resolve_key``."""
        raise NotImplementedError("press_key")

    async def start_app(self, package: str, activity: str | None = None) -> None:
        """Bring the app ``package`` to the front (its ``activity``, else its launcher activity)."""
        raise NotImplementedError("start_app")

    async def install_app(self, apk_path: str) -> None:
        """Install the APK at ``apk_path`` (a file on this machine)."""
        raise NotImplementedError("install_app")

    async def list_packages(self) -> list[str]:
        """The package names of the installed apps."""
        raise NotImplementedError("list_packages")

    async def get_apps(self) -> list[AppInfo]:
        """The apps a user can open, with their labels."""
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
        """The phone's date and time, as its ``date`` command prints it."""
        raise NotImplementedError("get_date")

    async def current_app(self) -> CurrentApp:
        """The app in the foreground, and its activity when the phone says."""
        raise NotImplementedError("current_app")

    async def screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels, in the current orientation."""
        raise NotImplementedError("screen_size")

    def supports(self, operation: str) -> bool:
        """Whether this driver implements ``operation`` (a method name, e.g. "install_app")."""
        return operation in self.supported

    def observe(self, observation_id: str | None) -> None:
        """Name the observation the next actions are decided on. Drivers that record actions use
        it; the default does nothing."""
