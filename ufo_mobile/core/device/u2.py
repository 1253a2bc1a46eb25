"""``U2Driver``: the same interface through uiautomator2's on-device server.

The hierarchy, screenshots, taps, swipes and keys go through the server's JSON-RPC (faster than
``uiautomator dump`` and ``screencap``, and its dump does not wait for an idle screen); app
management, packages, labels, the current app, the keyboard and the date go through an
``AdbDriver`` on the same device, which also starts uiautomator2 with our own adb client (never the
global one on port 5037: ``adb_dump.pin_client``).

- Windows: the server lists window roots in a HashSet's order; the dump is given back with them in
  stacking order, top-most first, from ``dumpsys window``.
- Text: printable ASCII goes through ``input text`` (exact); other text through uiautomator2's own
  input method (``com.github.uiautomator/.AdbKeyboard``, installed from its bundled APK when
  missing, as its ``send_keys`` does), whose broadcast result confirms delivery, with the user's
  input method restored after. The clipboard (``setClipboard`` + ``pasteClipboard``) is the last
  resort: it throws "Package android does not belong to 2000" on Android 11-14 (openatx/uiautomator2
  #1010, #1029) and cannot be read back on Android 10+ (#853, #747), so the user's clipboard is put
  back only when it could be read.
- The server holds the phone's only UiAutomation connection, which ``uiautomator dump`` needs
  (openatx/uiautomator2 #298, #1013): ``close`` stops it, and so does falling back to plain adb.

When the uiautomator2 server cannot start (no permission, old Android, a broken install), the
driver logs one clear warning and carries on as an ``AdbDriver``.
"""

from __future__ import annotations

import asyncio
import base64
import io
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import adbutils
from PIL import Image

from ufo_mobile.core.device.adb import AdbDriver, typeable_with_input_text
from ufo_mobile.core.device.adb_base import INJECT_DENIED, XIAOMI_HINT, Sleep
from ufo_mobile.core.device.adb_dump import MAX_DEPTH, u2_connect, u2_release
from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver, KeyboardState, resolve_key
from ufo_mobile.core.device.blocking import call_blocking
from ufo_mobile.errors import DeviceCommandError, DeviceError, DumpUnavailableError

# keys the uiautomator2 server knows by name; the rest are sent as key codes
_U2_KEY_NAMES = {"home", "back", "enter", "search", "menu", "power", "volume_up", "volume_down", "camera"}
META_CTRL_ON = 0x1000
KEYCODE_A = 29


class U2Driver(DeviceDriver):
    """A phone through uiautomator2's on-device server (``device.kind: u2``), with an ``AdbDriver``
    on the same phone for the rest (see the module docstring). Takes ``AdbDriver``'s arguments, and
    ``fallback``: carry on as plain adb when the server cannot start (else ``connect`` fails)."""

    # no fallback dumper: the server's own dump already copes with animated screens
    supported: ClassVar[frozenset[str]] = AdbDriver.supported - {"fallback_ui_tree"}

    def __init__(self, serial: str | None = None, *, client: adbutils.AdbClient | None = None,
                 timeout: float = 20.0, start_timeout: float = 40.0, fallback: bool = True,
                 label_cache_dir: str | Path | None = None, display_id: str | None = None, logger: Any = None,
                 sleep: Sleep = asyncio.sleep) -> None:
        self.adb = AdbDriver(serial, client=client, timeout=timeout, start_timeout=start_timeout,
                             label_cache_dir=label_cache_dir, display_id=display_id, logger=logger, sleep=sleep)
        self.serial = self.adb.serial
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._fallback = fallback
        self._u2: Any = None
        self._log = self.adb._log

    @property
    def using_u2(self) -> bool:
        """False when the driver fell back to plain adb."""
        return self._u2 is not None

    async def connect(self) -> None:
        await self.adb.connect()
        self.serial = self.adb.serial
        try:
            self._u2 = await call_blocking(u2_connect, self.adb.device, self.adb.client, limit=self._start_timeout,
                                           serial=self.serial, what="start uiautomator2 server")
            await self._ping()
        except DeviceError as exc:
            await self._stop_server()  # whatever runs would keep ``uiautomator dump`` from working
            if not self._fallback:
                raise
            self._log.warning("u2_unavailable_fallback_to_adb", serial=self.serial, error=str(exc),
                              message=f"uiautomator2 server could not start on {self.serial} ({exc}); "
                                      "continuing with the plain adb driver")

    async def _ping(self) -> None:
        await self._rpc("ping", lambda d: d.jsonrpc.deviceInfo())

    async def ensure_connected(self) -> None:
        await self.adb.ensure_connected()
        if self._u2 is None and self._fallback:
            return
        if self._u2 is None:
            await self.connect()

    async def close(self) -> None:
        try:
            await self._stop_server()
        finally:
            await self.adb.close()

    async def _stop_server(self) -> None:
        """Stop the uiautomator2 server (ours, or one left running) so that the accessibility bridge
        is free again; a phone that is gone is not waited for beyond the command timeout."""
        server, self._u2 = self._u2, None
        if self.adb._device is None:
            return
        try:
            if server is not None:
                await call_blocking(u2_release, server, limit=self._timeout, serial=self.serial,
                                    what="stop uiautomator2 server")
            await self.adb.stop_u2_server()
        except DeviceError as exc:
            self._log.warning("u2_server_not_stopped", serial=self.serial, error=str(exc))

    async def _rpc(self, what: str, fn: Any) -> Any:
        try:
            return await call_blocking(partial(fn, self._u2), limit=self._timeout, serial=self.serial, what=what)
        except DeviceCommandError as exc:
            if INJECT_DENIED in str(exc):
                raise DeviceCommandError(f"{what}: {XIAOMI_HINT}", serial=self.serial) from exc
            raise await self.adb.confirm_failure(exc) from exc  # the phone may be gone (AdbBase)

    # --- input -----------------------------------------------------------------------------

    async def tap(self, x: int, y: int) -> None:
        if self._u2 is None:
            return await self.adb.tap(x, y)
        await self._rpc("tap", lambda d: d.jsonrpc.click(int(x), int(y)))

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        if self._u2 is None:
            return await self.adb.long_press(x, y, duration_ms)
        await self._rpc("long_press", lambda d: d.jsonrpc.click(int(x), int(y), int(duration_ms)))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        if self._u2 is None:
            return await self.adb.swipe(x1, y1, x2, y2, duration_ms)
        steps = max(2, int(duration_ms / 5))  # the server moves one step every 5 ms
        await self._rpc("swipe", lambda d: d.jsonrpc.swipe(int(x1), int(y1), int(x2), int(y2), steps))

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        if self._u2 is None:
            return await self.adb.drag(x1, y1, x2, y2, duration_ms)
        steps = max(2, int(duration_ms / 5))
        await self._rpc("drag", lambda d: d.jsonrpc.drag(int(x1), int(y1), int(x2), int(y2), steps))

    async def press_key(self, key: str | int) -> None:
        if self._u2 is None:
            return await self.adb.press_key(key)
        resolved = resolve_key(key)
        name = resolved.name
        if name in _U2_KEY_NAMES:
            await self._rpc(f"press_key {name}", lambda d: d.jsonrpc.pressKey(name))
        elif name == "select_all":  # CTRL+A: works where `input keycombination` does not (Android 10)
            await self._rpc("press_key select_all", lambda d: d.jsonrpc.pressKeyCode(KEYCODE_A, META_CTRL_ON))
        else:  # any other key, named or not, by its code
            await self._rpc(f"press_key {resolved.label}", lambda d: d.jsonrpc.pressKeyCode(resolved.code))

    async def input_text(self, text: str, clear: bool = False) -> None:
        if self._u2 is None:
            return await self.adb.input_text(text, clear)
        if clear:
            await self._rpc("clear text", lambda d: d.jsonrpc.clearInputText())
        if not text:
            return
        if typeable_with_input_text(text):
            await self.adb.input_text(text)
            return
        try:
            await self.adb.type_with_u2_keyboard(text, install=True)
            return
        except DeviceCommandError as exc:
            if "no text field has focus" in str(exc):
                raise
            ime_error = exc
        self._log.warning("u2_input_method_unavailable", serial=self.serial, error=str(ime_error),
                          message="uiautomator2's input method cannot type here: trying the clipboard")
        try:
            await self._rpc("input_text", partial(_paste, text=text))
        except DeviceError as exc:
            raise DeviceCommandError(f"input_text: neither uiautomator2's input method ({ime_error}) nor the "
                                     f"clipboard ({exc}) could type the text", serial=self.serial) from exc

    # --- apps and state (plain adb) --------------------------------------------------------

    async def start_app(self, package: str, activity: str | None = None) -> None:
        await self.adb.start_app(package, activity)

    async def install_app(self, apk_path: str) -> None:
        await self.adb.install_app(apk_path)

    async def list_packages(self) -> list[str]:
        return await self.adb.list_packages()

    async def get_apps(self) -> list[AppInfo]:
        return await self.adb.get_apps()

    async def current_app(self) -> CurrentApp:
        return await self.adb.current_app()

    async def keyboard_state(self) -> KeyboardState:
        return await self.adb.keyboard_state()

    async def get_date(self) -> str:
        return await self.adb.get_date()

    # --- observation -----------------------------------------------------------------------

    async def screenshot(self) -> bytes:
        if self._u2 is None:
            return await self.adb.screenshot()
        encoded = await self._rpc("screenshot", lambda d: d.jsonrpc.takeScreenshot(1, 80))
        if not encoded:
            return await self.adb.screenshot()  # the server could not capture: screencap can
        return await call_blocking(_as_png, encoded, limit=self._timeout, serial=self.serial, what="decode screenshot")

    async def get_ui_tree(self) -> str:
        if self._u2 is None:
            return await self.adb.dump_ui_tree()  # no fallback here: none started ahead
        xml = str(await self._rpc("dump hierarchy", lambda d: d.jsonrpc.dumpWindowHierarchy(False, MAX_DEPTH))
                  or "")
        if not xml.strip():
            raise DumpUnavailableError("uiautomator2 gave an empty dump", serial=self.serial, kind="other")
        return await self.adb.ordered_windows(xml)

    async def screen_size(self) -> tuple[int, int]:
        if self._u2 is None:
            return await self.adb.screen_size()
        info = await self._rpc("screen_size", lambda d: d.jsonrpc.deviceInfo())
        return int(info["displayWidth"]), int(info["displayHeight"])


def _paste(device: Any, *, text: str) -> None:
    """Type ``text`` through the clipboard; the user's clipboard is put back only if it could be read."""
    previous = device.jsonrpc.getClipboard()  # None on Android 10+: apps in the background cannot read it
    device.jsonrpc.setClipboard(None, text)  # throws on Android 11-14 (the shell is not package "android")
    try:
        if previous is not None and device.jsonrpc.getClipboard() != text:
            raise DeviceCommandError("the clipboard did not take the text")
        device.jsonrpc.pasteClipboard()
    finally:
        if previous is not None:
            device.jsonrpc.setClipboard(None, previous)


def _as_png(encoded: str) -> bytes:
    """The server answers base64 (JPEG on real phones); the pipeline wants PNG."""
    data = base64.b64decode(encoded)
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    with Image.open(io.BytesIO(data)) as image:
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG", compress_level=1)
        return out.getvalue()
