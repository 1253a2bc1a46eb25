"""The state both MCP device servers share: one phone, its last observed screen, and the caches.

UFO's mobile MCP servers keep a process-wide ``MobileServerState`` singleton; ours is an ordinary
object made once per process and handed to both tool groups, so the data server and the action
server see the same screen whether they run on one stdio connection or on two HTTP ports.

The rules (the fixes of UFO's gaps are marked *):

- An *observation* is one uiautomator dump parsed by our ``AndroidStateProvider``: the control ids
  are its indexed controls, and the XML ``get_ui_tree`` returns is the same dump, so ids and tree
  always agree. It is reused while it is younger than the control cache's TTL (5 s): the state
  observes through a ``Phone`` (``core/phone.py``), the agents' own, which owns that cache.
- *Every* action drops the cached observation (UFO forgot ``press_key``, ``launch_app`` and ``wait``),
  so the next observation dumps again.*
- Control ids stay valid until the next observation, and no longer: an action does not clear them,
  so the second click of a multi-action reply still resolves (UFO cleared the id map after one
  click).*
- Every device call is bounded by ``timeout`` seconds (UFO had no bound of its own); a call that
  runs out raises ``DeviceTimeoutError``, which the tools turn into a failed result.*
- One device call at a time: the tools take ``lock`` around their device work.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel

from ufo_mobile.core.device.base import AppInfo, DeviceDriver
from ufo_mobile.core.phone import Phone, Seen
from ufo_mobile.core.ui.controls import Control
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.core.ui.state import UIState, describe_ids
from ufo_mobile.errors import DeviceDisconnectedError, DeviceError, DeviceTimeoutError, ElementNotFoundError

T = TypeVar("T")

CONTROLS_TTL = 5.0  # seconds, as UFO's controls and UI tree caches
APPS_TTL = 300.0
DEVICE_INFO_TTL = 60.0
CACHE_TYPES = ("controls", "apps", "ui_tree", "device_info", "all")


class TargetKind(StrEnum):
    """UFO's ``TargetKind`` values."""

    WINDOW = "window"
    CONTROL = "control"
    THIRD_PARTY_AGENT = "third_party_agent"


class TargetInfo(BaseModel):
    """UFO's ``TargetInfo`` (``ufo/agents/processors/schemas/target.py``), field for field, so the
    structured results validate against what UFO's agent expects. ``rect`` is [left, top, right, bottom]."""

    kind: TargetKind
    name: str
    id: str | None = None
    type: str | None = None
    rect: list[int] | None = None


@dataclass(frozen=True)
class Observation:
    """One observed screen: the parsed state, and the dump it came from (None when the phone gave
    no dump and the screen was seen from its screenshot alone; ``reason`` then says why)."""

    ui: UIState
    xml: str | None
    reason: str = ""


def control_target(control: Control) -> TargetInfo:
    """A control as UFO's agent takes it: the name is the visible text (or description, or hint),
    else the short class name, as UFO names controls."""
    name = control.label or control.description or control.hint or control.short_class
    return TargetInfo(kind=TargetKind.CONTROL, id=str(control.index), name=name, type=control.short_class,
                      rect=control.bounds.as_list())


def app_target(index: int, app: AppInfo) -> TargetInfo:
    """An app as UFO lists it: ``type`` is the package (``launch_app`` reads it); the name is the label
    the user sees where the phone says (UFO puts the package there too)."""
    return TargetInfo(kind=TargetKind.THIRD_PARTY_AGENT, id=str(index), name=app.label or app.package,
                      type=app.package)


class _Timed:
    """One value (an app list, the device facts), valid for ``ttl`` seconds of ``clock``."""

    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl
        self._clock = clock
        self._entry: tuple[float, Any] | None = None

    def get(self) -> Any:
        if self._entry is not None and self._clock() - self._entry[0] < self.ttl:
            return self._entry[1]
        return None

    def put(self, value: Any) -> None:
        self._entry = (self._clock(), value)

    def clear(self) -> None:
        self._entry = None


class MobileServerState:
    """The phone and what is known about it, shared by the data and action tools.

    Args:
        driver: the phone (any ``DeviceDriver``); the state opens and closes it.
        timeout: the bound, in seconds, on every device call.
        provider: how screens are observed (default: ``AndroidStateProvider`` over ``driver``).
        clock: the clock of every cache (tests pass a fake one).
        logger: a structlog-style logger for the provider (the MCP command passes one on stderr).
    """

    def __init__(self, driver: DeviceDriver, *, timeout: float = 20.0, provider: AndroidStateProvider | None = None,
                 clock: Callable[[], float] = time.monotonic, logger: Any = None) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.driver = driver
        self.timeout = timeout
        self.phone = Phone(driver, provider=provider or AndroidStateProvider(driver, logger=logger), clock=clock,
                           cache_ttl=CONTROLS_TTL)
        self.lock = asyncio.Lock()
        self._observation: Observation | None = None
        self._apps = {False: _Timed(APPS_TTL, clock), True: _Timed(APPS_TTL, clock)}
        self._listed_apps: dict[str, AppInfo] = {}  # the ids of the last app list returned
        self._device_info = _Timed(DEVICE_INFO_TTL, clock)
        self._ids = itertools.count(1)
        self._lost = False  # the last call found the phone gone: reconnect before the next one

    @property
    def key(self) -> str:
        return self.driver.serial

    # --- device calls ----------------------------------------------------------------------

    async def call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        """``await make()`` within ``timeout`` seconds (after reconnecting to a phone that went away).

        Raises:
            DeviceTimeoutError: the call ran out of time (the driver's own errors pass through).
        """
        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                if self._lost:
                    await self.driver.ensure_connected()
                    self._lost = False
                return await make()
        except TimeoutError as exc:
            if deadline.expired():
                raise DeviceTimeoutError(f"{what} timed out after {self.timeout:g} s", serial=self.key) from exc
            raise
        except DeviceDisconnectedError:
            self._lost = True
            raise

    async def open(self) -> None:
        """Connect to the phone (bounded by twice the timeout: finding it may take a round trip more)."""
        deadline = asyncio.timeout(self.timeout * 2)
        try:
            async with deadline:
                await self.driver.connect()
        except TimeoutError as exc:
            if deadline.expired():
                raise DeviceTimeoutError(f"connect timed out after {self.timeout * 2:g} s", serial=self.key) from exc
            raise

    async def close(self) -> None:
        """Close the phone; a phone that does not answer is not waited for beyond the timeout."""
        try:
            async with asyncio.timeout(self.timeout):
                await self.phone.close()
        except (TimeoutError, DeviceError):
            pass

    @asynccontextmanager
    async def acting(self) -> AsyncIterator[None]:
        """The device work of one action: one at a time, and the cached screen is stale after it
        whatever happened (a failed action may still have changed the screen)."""
        async with self.lock:
            try:
                yield
            finally:
                self.phone.invalidate()

    # --- observation and control ids -------------------------------------------------------

    async def observe(self, *, force: bool = False) -> Observation:
        """The current screen: the cached observation while it is fresh (and ``force`` is false),
        else a new dump, whose controls replace the ids of the previous observation."""
        async with self.lock:
            seen = await self.phone.observe(self._read, force=force)
            if self._observation is None or self._observation.ui is not seen.ui:  # a new dump: its ids now
                reason = str(seen.ui.phone_state.get("controls_unavailable") or "")
                self._observation = Observation(seen.ui, seen.dump, reason)
            return self._observation

    async def _read(self) -> Seen:
        """One dump, read within the timeout; kept in the cache even when it was seen without one."""
        observation_id = f"mcp-{next(self._ids)}"
        read = await self.call("ui dump", lambda: self.phone.provider.read(observation_id=observation_id))
        return Seen.of(read, keep=True)

    @property
    def observation(self) -> Observation | None:
        """The last observation (its ids are the valid ones), fresh or not."""
        return self._observation

    def control(self, control_id: str) -> tuple[Control, tuple[int, int]]:
        """Control ``control_id`` of the last observation, and the point to tap it at.

        Raises:
            ElementNotFoundError: no observation yet, or no such id in it (the message lists valid ids).
        """
        observation = self._observation
        if observation is None:
            raise ElementNotFoundError(f"Control with ID '{control_id}' not found: no screen observed yet. "
                                       "Please call get_app_window_controls_target_info first.")
        try:
            index = int(str(control_id).strip())
        except ValueError:
            raise ElementNotFoundError(f"Control with ID '{control_id}' not found: ids are numbers "
                                       "from get_app_window_controls_target_info.") from None
        try:
            control = observation.ui.get_control(index)
        except ElementNotFoundError:
            ids = describe_ids(sorted(c.index for c in observation.ui.elements))
            raise ElementNotFoundError(
                f"Control with ID '{control_id}' not found on the last observed screen (ids: {ids}). "
                "Please call get_app_window_controls_target_info first.") from None
        return control, observation.ui.get_clear_point(index)

    # --- apps ------------------------------------------------------------------------------

    async def apps(self, *, include_system: bool, force: bool = False) -> list[AppInfo]:
        """The launchable apps with their labels; with ``include_system``, every installed package."""
        cache = self._apps[include_system]
        cached: list[AppInfo] | None = None if force else cache.get()
        if cached is not None:
            return cached
        async with self.lock:
            if self.driver.supports("get_apps"):
                launchable = await self.call("list apps", self.driver.get_apps)
            else:
                launchable = [AppInfo(p, "") for p in await self.call("list packages", self.driver.list_packages)]
            apps = launchable
            if include_system and self.driver.supports("list_packages"):
                labels = {app.package: app.label for app in launchable}
                packages = await self.call("list packages", self.driver.list_packages)
                apps = [AppInfo(p, labels.get(p, "")) for p in sorted(set(packages) | set(labels))]
        cache.put(apps)
        return apps

    def list_apps(self, apps: list[AppInfo]) -> list[TargetInfo]:
        """Number ``apps`` from 1 as UFO does; these ids are the ones ``launch_app(id=)`` takes next."""
        self._listed_apps = {str(n): app for n, app in enumerate(apps, 1)}
        return [app_target(n, app) for n, app in enumerate(apps, 1)]

    def listed_app(self, app_id: str) -> AppInfo | None:
        return self._listed_apps.get(str(app_id).strip())

    async def find_app(self, name: str) -> AppInfo | None:
        """The app a user would mean by ``name``: its label, a word of its package, then a part of
        either (case ignored); launchable apps first, then every package."""
        wanted = name.strip().casefold()
        if not wanted:
            return None
        for include_system in (False, True):
            apps = await self.apps(include_system=include_system)
            tests: list[Callable[[AppInfo], bool]] = [
                lambda a: a.label.casefold() == wanted,
                lambda a: wanted in a.package.casefold().split("."),
                lambda a: wanted in a.label.casefold() or wanted in a.package.casefold(),
            ]
            for test in tests:
                found = next((app for app in apps if test(app)), None)
                if found is not None:
                    return found
        return None

    # --- device info and invalidation ------------------------------------------------------

    async def device_info(self, *, force: bool = False) -> tuple[dict[str, str], bool]:
        """UFO's device facts and whether they came from the cache (60 s)."""
        from ufo_mobile.host.mcp.device import read_device_info

        cached: dict[str, str] | None = None if force else self._device_info.get()
        if cached is not None:
            return cached, True
        async with self.lock:
            info = await self.call("device info", lambda: read_device_info(self.driver, self.timeout))
        self._device_info.put(info)
        return info, False

    def invalidate(self, cache_type: str) -> str:
        """Forget one cache (UFO's ``invalidate_cache``); the message to return. The controls and the
        UI tree are one dump here, so either name drops both. Ids stay valid until the next observation.

        Raises:
            ValueError: an unknown ``cache_type``.
        """
        if cache_type not in CACHE_TYPES:
            raise ValueError(f"Invalid cache_type: {cache_type}. Must be 'controls', 'apps', 'ui_tree', "
                             "'device_info', or 'all'")
        if cache_type in ("controls", "ui_tree", "all"):
            self.phone.invalidate()
        if cache_type in ("apps", "all"):
            for cache in self._apps.values():
                cache.clear()
        if cache_type in ("device_info", "all"):
            self._device_info.clear()
        names = {"controls": "Controls", "apps": "Apps", "ui_tree": "UI tree", "device_info": "Device info"}
        return "All caches invalidated" if cache_type == "all" else f"{names[cache_type]} cache invalidated"
