"""``U2Driver``: the same interface through uiautomator2's on-device server.

The hierarchy, screenshots, taps, swipes, keys and text go through the server's JSON-RPC (faster
than ``uiautomator dump`` and ``screencap``); app management, packages, the current app and the
date go through an ``AdbDriver`` on the same device. Text is typed through the device clipboard
(set, paste, then the previous clipboard is put back), so it never passes through a shell.

When the uiautomator2 server cannot start (no permission, old Android, a broken install), the
driver logs one clear warning and carries on as an ``AdbDriver``.
"""

from __future__ import annotations

import base64
import io
from functools import partial
from typing import Any, ClassVar

import adbutils
import structlog
from PIL import Image

from ufo_mobile.device.adb import AdbDriver
from ufo_mobile.device.base import KEYCODES, AppInfo, CurrentApp, DeviceDriver, normalize_key
from ufo_mobile.device.blocking import call_blocking
from ufo_mobile.errors import DeviceCommandError, DeviceError

# keys the uiautomator2 server knows by name; the rest are sent as key codes
_U2_KEY_NAMES = {"home", "back", "enter", "search", "menu", "power", "volume_up", "volume_down", "camera"}


class U2Driver(DeviceDriver):
    supported: ClassVar[frozenset[str]] = AdbDriver.supported

    def __init__(self, serial: str | None = None, *, client: adbutils.AdbClient | None = None,
                 timeout: float = 20.0, start_timeout: float = 40.0, fallback: bool = True,
                 logger: Any = None) -> None:
        self.adb = AdbDriver(serial, client=client, timeout=timeout, logger=logger)
        self.serial = self.adb.serial
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._fallback = fallback
        self._u2: Any = None
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.device")

    @property
    def using_u2(self) -> bool:
        """False when the driver fell back to plain adb."""
        return self._u2 is not None

    async def connect(self) -> None:
        await self.adb.connect()
        self.serial = self.adb.serial
        import uiautomator2

        try:
            self._u2 = await call_blocking(uiautomator2.connect, self.adb.device, limit=self._start_timeout,
                                           serial=self.serial, what="start uiautomator2 server")
            await self._rpc("ping", lambda d: d.jsonrpc.deviceInfo())
        except DeviceError as exc:
            self._u2 = None
            if not self._fallback:
                raise
            self._log.warning("u2_unavailable_fallback_to_adb", serial=self.serial, error=str(exc),
                              message=f"uiautomator2 server could not start on {self.serial} ({exc}); "
                                      "continuing with the plain adb driver")

    async def ensure_connected(self) -> None:
        await self.adb.ensure_connected()
        if self._u2 is None and self._fallback:
            return
        if self._u2 is None:
            await self.connect()

    async def close(self) -> None:
        self._u2 = None
        await self.adb.close()

    async def _rpc(self, what: str, fn: Any) -> Any:
        return await call_blocking(partial(fn, self._u2), limit=self._timeout, serial=self.serial, what=what)

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

    async def press_key(self, key: str) -> None:
        if self._u2 is None:
            return await self.adb.press_key(key)
        name = normalize_key(key)
        if name in _U2_KEY_NAMES:
            await self._rpc(f"press_key {name}", lambda d: d.jsonrpc.pressKey(name))
        elif name == "select_all":
            await self._rpc("press_key select_all", lambda d: d.jsonrpc.pressKeyCode(29, 0x1000))  # CTRL+A
        else:
            await self._rpc(f"press_key {name}", lambda d: d.jsonrpc.pressKeyCode(KEYCODES[name]))

    async def input_text(self, text: str, clear: bool = False) -> None:
        if self._u2 is None:
            return await self.adb.input_text(text, clear)
        if clear:
            await self._rpc("clear text", lambda d: d.jsonrpc.clearInputText())
        if not text:
            return
        await self._rpc("input_text", partial(_paste, text=text))

    # --- apps (plain adb) ------------------------------------------------------------------

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
            return await self.adb.get_ui_tree()
        xml = await self._rpc("dump hierarchy", lambda d: d.jsonrpc.dumpWindowHierarchy(False, 50))
        return str(xml or "")

    async def screen_size(self) -> tuple[int, int]:
        if self._u2 is None:
            return await self.adb.screen_size()
        info = await self._rpc("screen_size", lambda d: d.jsonrpc.deviceInfo())
        return int(info["displayWidth"]), int(info["displayHeight"])


def _paste(device: Any, *, text: str) -> None:
    """Type ``text`` through the clipboard and put the previous clipboard content back."""
    previous = device.jsonrpc.getClipboard()
    device.jsonrpc.setClipboard(None, text)
    if device.jsonrpc.getClipboard() != text:
        raise DeviceCommandError("the clipboard did not take the text")
    try:
        device.jsonrpc.pasteClipboard()
    finally:
        device.jsonrpc.setClipboard(None, previous or "")


def _as_png(encoded: str) -> bytes:
    """The server answers base64 (JPEG on real phones); the pipeline wants PNG."""
    data = base64.b64decode(encoded)
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    with Image.open(io.BytesIO(data)) as image:
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG", compress_level=1)
        return out.getvalue()
