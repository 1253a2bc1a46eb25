"""``SimDriver``: the device port over the in-process simulated phone.

Every call is a coroutine. Input calls are quick and run inline; rendering the screenshot runs in
a worker thread (``asyncio.to_thread``). ``latency`` adds an ``asyncio.sleep`` before every call,
so tests can exercise timeouts. After ``close`` every call raises ``DeviceDisconnectedError``
until ``connect`` (or ``ensure_connected``) opens the driver again; before the first ``connect``
the driver works, as the simulated phone is always there.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from ufo_mobile.device.base import AppInfo, CurrentApp, DeviceDriver, normalize_key
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError
from ufo_mobile.sim.phone import SimPhone


class SimDriver(DeviceDriver):
    """A driver for ``SimPhone``; ``phone`` is public so tests can inspect app state."""

    supported: ClassVar[frozenset[str]] = frozenset({
        "connect", "ensure_connected", "close", "tap", "long_press", "swipe", "drag", "input_text",
        "press_key", "start_app", "install_app", "list_packages", "get_apps", "screenshot",
        "get_ui_tree", "get_date", "current_app", "screen_size",
    })

    def __init__(self, phone: SimPhone | None = None, *, serial: str = "sim", latency: float = 0.0) -> None:
        if latency < 0:
            raise ValueError("latency must be >= 0")
        self.phone = phone if phone is not None else SimPhone(serial=serial)
        self.serial = serial
        self.latency = latency
        self._closed = False

    async def _call(self) -> None:
        if self._closed:
            raise DeviceDisconnectedError("the simulated phone driver is closed", serial=self.serial)
        if self.latency:
            await asyncio.sleep(self.latency)

    # -- lifecycle -----------------------------------------------------------------------------

    async def connect(self) -> None:
        self._closed = False

    async def ensure_connected(self) -> None:
        self._closed = False

    async def close(self) -> None:
        self._closed = True

    # -- input ---------------------------------------------------------------------------------

    async def tap(self, x: int, y: int) -> None:
        await self._call()
        self.phone.tap(x, y)

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self._call()
        self.phone.long_press(x, y)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self._call()
        self.phone.swipe(x1, y1, x2, y2, duration_ms)

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        await self._call()
        self.phone.drag(x1, y1, x2, y2, duration_ms)

    async def input_text(self, text: str, clear: bool = False) -> None:
        await self._call()
        self.phone.input_text(text, clear)

    async def press_key(self, key: str) -> None:
        await self._call()
        try:
            name = normalize_key(key)
        except ValueError as exc:
            raise DeviceCommandError(str(exc), serial=self.serial) from exc
        self.phone.press_key(name)

    # -- apps ----------------------------------------------------------------------------------

    async def start_app(self, package: str, activity: str | None = None) -> None:
        await self._call()
        self.phone.start_app(package, activity)

    async def install_app(self, apk_path: str) -> None:
        """Install an app YAML file (the simulator's stand-in for an APK)."""
        await self._call()
        await asyncio.to_thread(self.phone.install_app, Path(apk_path))

    async def list_packages(self) -> list[str]:
        await self._call()
        return sorted(app.package for app in self.phone.installed_apps())

    async def get_apps(self) -> list[AppInfo]:
        await self._call()
        return [AppInfo(app.package, app.label) for app in self.phone.installed_apps()]

    async def current_app(self) -> CurrentApp:
        await self._call()
        foreground = self.phone.current_app()
        return CurrentApp(foreground.package, foreground.activity)

    # -- observation ---------------------------------------------------------------------------

    async def screenshot(self) -> bytes:
        await self._call()
        return await asyncio.to_thread(self.phone.screenshot_png)

    async def get_ui_tree(self) -> str:
        await self._call()
        return self.phone.dump_hierarchy()

    async def get_date(self) -> str:
        await self._call()
        return self.phone.date()

    async def screen_size(self) -> tuple[int, int]:
        await self._call()
        return self.phone.screen_size()
