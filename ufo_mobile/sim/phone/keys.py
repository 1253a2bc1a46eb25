"""Key names and Android keycodes the simulated phone understands.

The simulator reacts to home, back, enter, del, space and select_all; every other known key is
accepted and does nothing, as most keys do on a phone showing no keyboard. Unknown names fail.
"""

from __future__ import annotations

_CODES: dict[str, int] = {
    "home": 3, "back": 4, "call": 5, "endcall": 6, "dpad_up": 19, "dpad_down": 20, "dpad_left": 21,
    "dpad_right": 22, "volume_up": 24, "volume_down": 25, "power": 26, "camera": 27, "tab": 61,
    "space": 62, "enter": 66, "del": 67, "menu": 82, "search": 84, "forward_del": 112,
    "move_end": 123, "app_switch": 187, "select_all": 257,
}
_NAMES: dict[int, str] = {code: name for name, code in _CODES.items()}


def key_name(key: str | int) -> str | None:
    """Canonical lower-case name of ``key`` (``"KEYCODE_BACK"``, ``"Back"``, ``4``, ``"4"``)."""
    if isinstance(key, int):
        return _NAMES.get(key)
    name = key.strip().lower()
    if name.isdigit():
        return _NAMES.get(int(name))
    name = name.removeprefix("keycode_")
    return name if name in _CODES else None


def keycode(name: str) -> int:
    """The keycode of a canonical key name."""
    return _CODES[name]
