"""Phase 1: observe the device.

The screenshot and the UI dump are taken together (concurrently), with the current app and, once
per run, the installed apps. Every dump goes through the ``StateProvider`` (by default an
``AndroidStateProvider`` on the phase's device): it re-reads an invalid dump up to
``dump_retries`` times, then the step fails with the parse error. After an action the screen may
still be moving, so the phase checks that a second dump agrees with the first (same controls and
bounds) and otherwise observes again, until the screen is stable or ``settle_timeout_seconds`` has
passed; the wait is recorded.
Parsed controls are cached for ``control_cache_ttl_seconds``; every action drops the cache.
Known secrets are redacted from the dump before it is parsed (in their XML-escaped form too), so a
key typed into a visible field reaches neither the prompt nor the run directory.
The image for the model is downscaled first, to ``image_longest_side`` and to at most
``image_max_tiles`` of OpenAI's 512 px tiles (3 tiles: a 1080x2400 screen is sent as 512x1139, 595
image tokens), and annotated at that size (cheap); the full-size annotated screenshot for the run
directory is drawn later, off the critical path, by the recorder.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

import structlog

from ufo_mobile.device.base import AppInfo, CurrentApp, DeviceDriver
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DeviceTimeoutError
from ufo_mobile.llm.image_tokens import fit_to_tiles
from ufo_mobile.processors.context import Observation, StepContext
from ufo_mobile.settings import PerceptionSettings
from ufo_mobile.ui.annotate import annotate, shrink_to
from ufo_mobile.ui.cache import ControlCache
from ufo_mobile.ui.provider import AndroidStateProvider, DumpFailure, StateProvider
from ufo_mobile.ui.screenshot import is_blank, png_size
from ufo_mobile.ui.state import UIState


class DataCollection:
    name: ClassVar[str] = "data_collection"
    always: ClassVar[bool] = False

    def __init__(self, device: DeviceDriver, cache: ControlCache, settings: PerceptionSettings,
                 *, logger: Any = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 redact: Callable[[str], str] | None = None, provider: StateProvider | None = None) -> None:
        self.device = device
        self.cache = cache
        self.settings = settings
        self._clock = clock  # the settle wait is measured with this clock ...
        self._sleep = sleep  # ... and paced with this sleep (both injected by tests)
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.observe")
        # ``redact``: secrets typed into a visible field never reach the model or the logs; a provider
        # passed in redacts with its own.
        self.provider: StateProvider = provider or AndroidStateProvider(
            device, dump_retries=settings.dump_retries, redact=redact, logger=self._log)
        self._apps: list[AppInfo] | None = None
        self._reads = 0
        self._refusals: list[str] = []  # of the step being observed
        self._fallback: str | None = None

    async def _apps_once(self) -> list[AppInfo]:
        if self._apps is None:
            self._apps = await self.device.get_apps() if self.device.supports("get_apps") else []
        return self._apps

    async def _read(self, ctx: StepContext, size: tuple[int, int],
                    dump: str | DumpFailure | None = None) -> tuple[UIState, int]:
        """One observation through the provider (``dump``, or a fresh one); the dumps it took. Refused
        dumps and fallbacks are kept for the step's record."""
        self._reads += 1
        read = await self.provider.read(observation_id=f"obs-{ctx.step:04d}-{self._reads}", screen_size=size,
                                        dump=dump)
        self._refusals.extend(read.refusals)
        self._fallback = read.fallback
        return read.ui, read.attempts

    async def _capture(self, ctx: StepContext) -> tuple[bytes, UIState, int]:
        png, xml = await asyncio.gather(self.device.screenshot(), self.provider.fetch())
        ui, attempts = await self._read(ctx, png_size(png), xml)
        return png, ui, attempts

    async def _settle(self, ctx: StepContext) -> tuple[bytes, UIState, int, dict[str, Any]]:
        """Observe until two consecutive dumps agree or the settle timeout passes."""
        png, ui, attempts = await self._capture(ctx)
        timeout = self.settings.settle_timeout_seconds
        if timeout <= 0 or not _after_action(ctx):
            return png, ui, attempts, {"checked": False}
        start, dumps, stable = self._clock(), 1, False
        while True:
            check, more = await self._read(ctx, png_size(png))
            dumps, attempts = dumps + 1, attempts + more
            if check.formatted_text == ui.formatted_text:
                stable = True
                break
            if self._clock() - start >= timeout:
                break
            await self._sleep(self.settings.settle_interval_seconds)
            png, ui, more = await self._capture(ctx)
            dumps, attempts = dumps + 1, attempts + more
        waited = round(self._clock() - start, 4)
        if not stable:
            self._log.warning("screen_not_stable", step=ctx.step, waited=waited, dumps=dumps)
        return png, ui, attempts, {"checked": True, "stable": stable, "dumps": dumps, "waited_seconds": waited}

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        self._refusals, self._fallback = [], None
        cached = self.cache.get(self.device.serial)
        if cached is None:
            (png, ui, attempts, stability), current, apps = await asyncio.gather(
                self._settle(ctx), self._current_app(), self._apps_once())
            if self._fallback is None:  # a screen seen in its screenshot alone is not worth keeping
                self.cache.put(self.device.serial, ui)
        else:
            png, current, apps = await asyncio.gather(
                self.device.screenshot(), self._current_app(), self._apps_once())
            ui, attempts, stability = cached, 0, {"checked": False}
        source = "device"
        if current is None:  # the phone would not say: the app whose window the dump shows
            current, source = CurrentApp(str(ui.phone_state.get("current_app") or "")), "dump"
        self.device.observe(ui.observation_id)  # actions from now on are decided on this observation
        ctx.cache = {"hit": int(cached is not None), "hits": self.cache.hits, "misses": self.cache.misses}
        obs = Observation(ui.observation_id, png, ui, current, apps, png_size(png),
                          cache_hit=cached is not None, dump_attempts=attempts, stability=stability,
                          dump_refusals=list(self._refusals), fallback=self._fallback, current_app_source=source)
        await asyncio.to_thread(self._model_image, obs)
        if obs.screenshot_blocked:
            self._log.warning("screenshot_blocked", step=ctx.step, app=current.package)
        ctx.observation = obs
        return {
            "previous_formatted_device_state": ctx.shared.formatted_device_state,
            "formatted_device_state": ui.formatted_text,
            "focused_text": ui.focused_text,
            "current_package_name": current.package,
            "current_activity_name": current.activity,
            "visited_packages": [current.package] if current.package else [],
            "width": obs.screen_size[0],
            "height": obs.screen_size[1],
        }

    async def _current_app(self) -> CurrentApp | None:
        """The app in front, or None when the phone cannot say (the dump's package is used then). A
        phone that does not answer at all is not papered over: its error ends the step."""
        try:
            return await self.device.current_app()
        except (DeviceDisconnectedError, DeviceTimeoutError):
            raise
        except DeviceCommandError as exc:
            self._log.warning("current_app_unknown", error=str(exc))
            return None

    def _model_image(self, obs: Observation) -> None:
        """The screenshot for the model: within the longest side and the tile budget, annotated
        at that size (and, if asked for, the same without the numbers)."""
        p = self.settings
        if is_blank(obs.screenshot):  # FLAG_SECURE: the phone hands out black; say so, send nothing
            obs.screenshot_blocked = True
            return
        width, height = png_size(obs.screenshot)
        budget = p.image_max_tiles if p.image_max_tiles > 0 else 10**6
        small, scale = shrink_to(obs.screenshot, fit_to_tiles(width, height, budget, p.image_longest_side))
        if p.send_clean_screenshot:
            obs.model_image_clean = small
        if p.annotate:
            small = annotate(small, obs.ui_state.elements, screen_size=obs.screen_size)
        obs.model_image, obs.model_image_scale = small, scale


def _after_action(ctx: StepContext) -> bool:
    history = ctx.shared.action_history
    return bool(history) and history[-1].step == ctx.step - 1
