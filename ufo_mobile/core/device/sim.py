"""``SimDriver``: the device port over the in-process simulated phone.

Every call is a coroutine. Every call that lays the screen out (input, which hit-tests it; the UI
tree; the screenshot, which also draws it) runs on a daemon worker thread (``run_in_daemon_thread``),
never on the event loop: a screen that is slow to lay out or draw leaves the loop free to take a
signal, and a run that stops does not wait for the thread at exit. Quick reads run inline.
``latency`` adds an ``asyncio.sleep`` before every call,
so tests can exercise timeouts. After ``close`` every call raises ``DeviceDisconnectedError``
until ``connect`` (or ``ensure_connected``) opens the driver again; before the first ``connect``
the driver works, as the simulated phone is always there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver, resolve_key
from ufo_mobile.core.device.blocking import DaemonWorkers, run_in_daemon_thread
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError
from ufo_mobile.sim.android.commands.input import press_key_alone
from ufo_mobile.sim.phone.simphone import SimPhone

T = TypeVar("T")


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
        self._workers = DaemonWorkers("ufo-sim")

    async def _off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a worker thread (the phone is thread-safe: one lock)."""
        return await run_in_daemon_thread(partial(fn, *args), name="ufo-sim", workers=self._workers)

    async def _call(self) -> None:
        if self._closed:
            raise DeviceDisconnectedError("the simulated phone driver is closed", serial=self.serial)
        if self.latency:
            await asyncio.sleep(self.latency)

    # -- lifecycle -----------------------------------------------------------------------------

    async def connect(self) -> None:
        self._reopen()

    def _reopen(self) -> None:
        if self._workers.closed:
            self._workers = DaemonWorkers("ufo-sim")
        self._closed = False

    async def ensure_connected(self) -> None:
        self._reopen()

    async def close(self) -> None:
        self._closed = True
        self._workers.close()

    # -- input ---------------------------------------------------------------------------------

    async def tap(self, x: int, y: int) -> None:
        await self._call()
        await self._off_loop(self.phone.tap, x, y)

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self._call()
        await self._off_loop(self.phone.long_press, x, y)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self._call()
        await self._off_loop(self.phone.swipe, x1, y1, x2, y2, duration_ms)

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        await self._call()
        await self._off_loop(self.phone.drag, x1, y1, x2, y2, duration_ms)

    async def input_text(self, text: str, clear: bool = False) -> None:
        await self._call()
        await self._off_loop(self.phone.input_text, text, clear)

    async def press_key(self, key: str | int) -> None:
        """Any key of Android's ``KeyEvent`` (``resolve_key``): our named keys act as the simulated
        phone defines them, the others as its emulated Android's ``input keyevent`` presses them
        (a letter types into the focused field; a key the phone has nothing for does nothing)."""
        await self._call()
        try:
            resolved = resolve_key(key)
        except ValueError as exc:
            raise DeviceCommandError(str(exc), serial=self.serial) from exc
        if resolved.name is not None:
            await self._off_loop(self.phone.press_key, resolved.name)
        else:
            await self._off_loop(press_key_alone, self.phone, resolved.code)

    # -- apps ----------------------------------------------------------------------------------

    async def start_app(self, package: str, activity: str | None = None) -> None:
        await self._call()
        await self._off_loop(self.phone.start_app, package, activity)

    async def install_app(self, apk_path: str) -> None:
        """Install an app YAML file (the simulator's stand-in for an APK)."""
        await self._call()
        await self._off_loop(self.phone.install_app, Path(apk_path))

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
        return await self._off_loop(self.phone.screenshot_png)

    async def get_ui_tree(self) -> str:
        await self._call()
        return await self._off_loop(self.phone.dump_hierarchy)

    async def get_date(self) -> str:
        await self._call()
        return self.phone.date()

    async def screen_size(self) -> tuple[int, int]:
        await self._call()
        return self.phone.screen_size()
