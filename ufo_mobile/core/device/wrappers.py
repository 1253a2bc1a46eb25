"""``DriverWrapper``: a driver that forwards every call to another one.

Its ``supported`` set and ``serial`` are the inner driver's, per instance, so wrappers stack
(``StealthDriver(RecordingDriver(SimDriver()))``). The wrappers themselves live in
``ufo_mobile.core.device.recording`` (record and replay actions) and ``ufo_mobile.core.device.stealth``
(human-like input).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ufo_mobile.core.device.base import AppInfo, Box, CurrentApp, DeviceDriver, KeyboardState

Sleep = Callable[[float], Awaitable[None]]


class DriverWrapper(DeviceDriver):
    """Forwards everything to ``inner``; subclasses override the calls they change."""

    def __init__(self, inner: DeviceDriver) -> None:
        self.inner = inner
        # ``supported`` is a class attribute on plain drivers; a wrapper's depends on its inner one.
        object.__setattr__(self, "supported", frozenset(inner.supported))
        object.__setattr__(self, "keys", inner.keys)
        object.__setattr__(self, "platform", inner.platform)

    @property
    def serial(self) -> str:  # type: ignore[override]  # read-only: the inner driver's
        return self.inner.serial

    @property
    def innermost(self) -> DeviceDriver:
        """The driver at the bottom of a stack of wrappers."""
        driver = self.inner
        while isinstance(driver, DriverWrapper):
            driver = driver.inner
        return driver

    def supports(self, operation: str) -> bool:
        return self.inner.supports(operation)

    def observe(self, observation_id: str | None) -> None:
        self.inner.observe(observation_id)

    async def connect(self) -> None:
        await self.inner.connect()

    async def ensure_connected(self) -> None:
        await self.inner.ensure_connected()

    async def close(self) -> None:
        await self.inner.close()

    async def tap(self, x: int, y: int) -> None:
        await self.inner.tap(x, y)

    async def tap_in(self, bounds: Box) -> None:
        await self.inner.tap_in(bounds)

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self.inner.long_press(x, y, duration_ms)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self.inner.swipe(x1, y1, x2, y2, duration_ms)

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        await self.inner.drag(x1, y1, x2, y2, duration_ms)

    async def input_text(self, text: str, clear: bool = False) -> None:
        await self.inner.input_text(text, clear)

    async def press_key(self, key: str | int) -> None:
        await self.inner.press_key(key)

    async def start_app(self, package: str, activity: str | None = None) -> None:
        await self.inner.start_app(package, activity)

    async def install_app(self, apk_path: str) -> None:
        await self.inner.install_app(apk_path)

    async def list_packages(self) -> list[str]:
        return await self.inner.list_packages()

    async def get_apps(self) -> list[AppInfo]:
        return await self.inner.get_apps()

    async def screenshot(self) -> bytes:
        return await self.inner.screenshot()

    async def get_ui_tree(self) -> str:
        return await self.inner.get_ui_tree()

    async def fallback_ui_tree(self) -> str:
        return await self.inner.fallback_ui_tree()

    async def keyboard_state(self) -> KeyboardState:
        return await self.inner.keyboard_state()

    async def get_date(self) -> str:
        return await self.inner.get_date()

    async def current_app(self) -> CurrentApp:
        return await self.inner.current_app()

    async def screen_size(self) -> tuple[int, int]:
        return await self.inner.screen_size()
