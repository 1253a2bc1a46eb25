"""``AdbDriver``: a phone over the adb server, through adbutils only.

Every call goes through ``call_blocking`` (a worker thread, a timeout, one error mapping). Shell
commands are built from fixed words plus ``shlex.quote``d arguments; text typed by the model is
never placed in a shell command line as-is. The driver is put together from one module per concern:

- ``adb_base``: picking the device, ``adb connect``, running calls and shell commands;
- ``adb_text``: typing exactly (``input text``, or an input method with delivery confirmed),
  clearing a field, select-all;
- ``adb_apps``: the launchable apps with the labels in their APKs (cached on disk), installing;
- ``adb_screen``: screenshots (always a PNG; the display named on multi-display phones), the soft
  keyboard, the app in front (never guessed);
- ``adb_dump``: ``uiautomator dump`` and what its refusals mean (``DumpUnavailableError``; a null
  root dumped again at once, an idle refusal predicted), and the dump through uiautomator2
  (``fallback_ui_tree``);
and here: gestures, keys, starting apps, the date and the screen size.
"""

from __future__ import annotations

import re
import shlex
from typing import ClassVar

from ufo_mobile.core.device.adb_apps import KNOWN_LABELS, AdbAppsMixin, label_for
from ufo_mobile.core.device.adb_dump import AdbDumpMixin
from ufo_mobile.core.device.adb_screen import AdbScreenMixin
from ufo_mobile.core.device.adb_text import ADB_KEYBOARD, U2_KEYBOARD, AdbTextMixin, typeable_with_input_text
from ufo_mobile.core.device.base import resolve_key
from ufo_mobile.errors import DeviceCommandError

__all__ = ["ADB_KEYBOARD", "KNOWN_LABELS", "U2_KEYBOARD", "AdbDriver", "label_for", "typeable_with_input_text"]

_PACKAGE = re.compile(r"[A-Za-z][\w]*(\.[\w]+)+")
_ACTIVITY = re.compile(r"[\w.$/]+")


class AdbDriver(AdbTextMixin, AdbAppsMixin, AdbScreenMixin, AdbDumpMixin):
    """A phone over the adb server (``device.kind: adb``), by adbutils alone.

    ``serial``: the phone (``host:port`` is ``adb connect``-ed first; None: the only phone ready);
    ``client``: the adb server's client (default: the local adb server); ``timeout``: the bound on every
    call, in seconds; ``label_cache_dir``: where app labels read from APKs are kept (None: memory
    only); ``display_id``: the display to capture on a multi-display phone.
    """

    supported: ClassVar[frozenset[str]] = frozenset({
        "connect", "ensure_connected", "close", "tap", "long_press", "swipe", "drag", "input_text", "press_key",
        "start_app", "install_app", "list_packages", "get_apps", "screenshot", "get_ui_tree", "fallback_ui_tree",
        "keyboard_state", "get_date", "current_app", "screen_size",
    })

    # --- gestures and keys -----------------------------------------------------------------

    async def tap(self, x: int, y: int) -> None:
        self.screen_touched()
        await self._shell(f"input tap {int(x)} {int(y)}", what="tap")

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.screen_touched()
        await self._shell(f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}", what="swipe")

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        self.screen_touched()
        await self._shell(f"input draganddrop {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}",
                          what="drag")

    async def press_key(self, key: str | int) -> None:
        """A key name or any Android key code (``input keyevent`` takes them all)."""
        resolved = resolve_key(key)
        self.screen_changed()
        if resolved.name == "select_all":
            await self.select_all()
            return
        await self._shell(f"input keyevent {resolved.code}", what=f"press_key {resolved.label}")

    # --- apps ------------------------------------------------------------------------------

    async def start_app(self, package: str, activity: str | None = None) -> None:
        if not _PACKAGE.fullmatch(package):
            raise DeviceCommandError(f"not a package name: {package!r}", serial=self.serial)
        self.screen_changed()
        if activity:
            if not _ACTIVITY.fullmatch(activity):
                raise DeviceCommandError(f"not an activity name: {activity!r}", serial=self.serial)
            component = activity if "/" in activity else f"{package}/{activity}"
            out = await self._shell(f"am start -W -n {shlex.quote(component)}", what="start_app")
        else:
            out = await self._shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1",
                                    what="start_app", check=False)
        if "No activities found" in out or "Error" in out or "does not exist" in out:
            raise DeviceCommandError(f"cannot start {package}: {out.strip()[:200]}", serial=self.serial)

    # --- the rest --------------------------------------------------------------------------

    async def get_date(self) -> str:
        return (await self._shell("date", what="date")).strip()

    async def screen_size(self) -> tuple[int, int]:
        size = await self._call(self.device.window_size, what="screen_size")
        return int(size.width), int(size.height)
