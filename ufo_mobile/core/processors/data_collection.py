"""Phase 1: observe the device.

The screenshot and the UI dump are taken together (concurrently), with the current app and, once
per run, the installed apps. The phase observes through the run's ``Phone`` (``core/phone.py``):
every dump goes through its ``StateProvider``, which re-reads an invalid dump up to
``dump_retries`` times, then the step fails with the parse error. After an action the screen may
still be moving, so the phase checks that a second dump agrees with the first (same controls and
bounds) and otherwise observes again, until the screen is stable or ``settle_timeout_seconds`` has
passed; the wait is recorded.
Parsed controls are cached by the phone for ``control_cache_ttl_seconds``; every action drops the
cache. The phone's provider redacts known secrets from the dump before it is parsed (in their
XML-escaped form too), so a key typed into a visible field reaches neither the prompt nor the run
directory.
The screenshot is decoded once and its set-of-mark drawn once, on the working picture
(``ScreenImages``: the screenshot reduced by a whole factor, a 1080x2400 one halved): the model
gets that drawing shrunk to ``image_longest_side`` and to at most ``image_max_tiles`` of OpenAI's
512 px tiles (3 tiles: a 1080x2400 screen is sent as 512x1139, 595 image tokens), and the run keeps
it as ``annotated.jpg`` (made with the model's picture, before the model is asked, and written by
the recorder). A screen observed again
with the same screenshot and the same cached controls reuses the last pictures as they are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

import structlog

from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.phone import Phone, Seen
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.ui.diff import describe_change, snapshot
from ufo_mobile.core.ui.provider import AndroidStateProvider, DumpFailure
from ufo_mobile.core.ui.screen_images import ScreenImages
from ufo_mobile.core.ui.screenshot import png_size
from ufo_mobile.core.ui.state import UIState, unavailable_ui_state
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DeviceTimeoutError
from ufo_mobile.settings import PerceptionSettings

SCREENSHOT_ONLY = "this run reads the screenshot only (perception.source: screenshot)"
# perception.source: dump takes no screenshot at all: the model reads the screen list alone, the record
# keeps the dump's controls and text, and nothing on the phone is ever captured as a picture


class DataCollection:
    name: ClassVar[str] = "data_collection"
    always: ClassVar[bool] = False

    def __init__(self, phone: Phone, settings: PerceptionSettings, *, logger: Any = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.phone = phone
        self.device: DeviceDriver = phone.driver
        self.provider = phone.provider
        self.settings = settings
        self._clock = phone.clock  # the settle wait is measured with the phone's clock ...
        self._sleep = sleep  # ... and paced with this sleep (both injected by tests)
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.observe")
        self._apps: list[AppInfo] | None = None
        self._reads = 0
        self._refusals: list[str] = []  # of the step being observed
        self._fallback: str | None = None
        self._last: tuple[UIState, ScreenImages] | None = None  # the last screen's pictures

    async def _apps_once(self) -> list[AppInfo]:
        if self._apps is None:
            self._apps = await self.device.get_apps() if self.device.supports("get_apps") else []
        return self._apps

    async def _read(self, ctx: StepContext, size: tuple[int, int] | None,
                    dump: str | DumpFailure | None = None) -> tuple[UIState, int, str | None]:
        """One observation through the provider (``dump``, or a fresh one); the dumps it took and the
        dump it was made from. Refused dumps and fallbacks are kept for the step's record."""
        self._reads += 1
        read = await self.provider.read(observation_id=f"obs-{ctx.step:04d}-{self._reads}", screen_size=size,
                                        dump=dump)
        self._refusals.extend(read.refusals)
        self._fallback = read.fallback
        return read.ui, read.attempts, read.dump

    async def _capture(self, ctx: StepContext) -> tuple[bytes, UIState, int, str | None]:
        if self.settings.source == "dump":  # no screenshot is taken: the screen is its UI dump
            size = await self.device.screen_size() if self.device.supports("screen_size") else None
            ui, attempts, dump = await self._read(ctx, size, await self.provider.fetch())
            return b"", ui, attempts, dump
        if self.settings.source == "screenshot":  # no dump is read: the screen is its screenshot
            png = await self.device.screenshot()
            self._reads += 1
            seen = unavailable_ui_state(f"obs-{ctx.step:04d}-{self._reads}", png_size(png), SCREENSHOT_ONLY)
            return png, seen, 0, None
        png, xml = await asyncio.gather(self.device.screenshot(), self.provider.fetch())
        ui, attempts, dump = await self._read(ctx, png_size(png), xml)
        return png, ui, attempts, dump

    async def _check(self, ctx: StepContext, size: tuple[int, int], ui: UIState,
                     dump: str | None) -> tuple[UIState, int]:
        """A second dump of the screen, read: the screen it shows and the dumps it took. A dump equal
        to the one ``ui`` was made from shows the same screen, so it is not parsed again (when ``ui``
        depended on the dump alone)."""
        fetched = await self.provider.fetch()
        if (dump is not None and fetched == dump and isinstance(self.provider, AndroidStateProvider)
                and self.provider.made_from_dump_alone(ui)):
            self._reads += 1  # numbered as if read: observation ids stay as they were
            return ui, 1
        check, more, _ = await self._read(ctx, size, fetched)
        return check, more

    async def _settle(self, ctx: StepContext) -> tuple[bytes, UIState, int, dict[str, Any]]:
        """Observe until two consecutive dumps agree or the settle timeout passes."""
        png, ui, attempts, dump = await self._capture(ctx)
        timeout = self.settings.settle_timeout_seconds
        if timeout <= 0 or not _after_action(ctx) or self.settings.source == "screenshot":
            return png, ui, attempts, {"checked": False}
        start, dumps, stable = self._clock(), 1, False
        while True:
            check, more = await self._check(ctx, _size(png, ui), ui, dump)
            dumps, attempts = dumps + 1, attempts + more
            if check.formatted_text == ui.formatted_text:
                stable = True
                break
            if self._clock() - start >= timeout:
                break
            await self._sleep(self.settings.settle_interval_seconds)
            png, ui, more, dump = await self._capture(ctx)
            dumps, attempts = dumps + 1, attempts + more
        waited = round(self._clock() - start, 4)
        if not stable:
            self._log.warning("screen_not_stable", step=ctx.step, waited=waited, dumps=dumps)
        return png, ui, attempts, {"checked": True, "stable": stable, "dumps": dumps, "waited_seconds": waited}

    async def _look(self, ctx: StepContext) -> tuple[bytes, Seen, dict[str, Any]]:
        """The screenshot and the screen through the phone (its cache, or a settled fresh read), and
        the stability check's record."""
        settled: dict[str, Any] = {}

        async def read() -> Seen:
            png, ui, attempts, stability = await self._settle(ctx)
            settled.update(png=png, stability=stability)
            # a screen seen in its screenshot alone is not worth keeping
            return Seen(ui, attempts=attempts, fallback=self._fallback,
                        keep=self._fallback is None and self.settings.source != "screenshot")

        seen = await self.phone.observe(read)
        if seen.hit:
            png = b"" if self.settings.source == "dump" else await self.device.screenshot()
            return png, seen, {"checked": False}
        return settled["png"], seen, settled["stability"]

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        self._refusals, self._fallback = [], None
        (png, seen, stability), current, apps = await asyncio.gather(
            self._look(ctx), self._current_app(), self._apps_once())
        ui, attempts, cache = seen.ui, seen.attempts, self.phone.cache
        source = "device"
        if current is None:  # the phone would not say: the app whose window the dump shows
            current, source = CurrentApp(str(ui.phone_state.get("current_app") or "")), "dump"
        self.device.observe(ui.observation_id)  # actions from now on are decided on this observation
        ctx.cache = {"hit": int(seen.hit), "hits": cache.hits, "misses": cache.misses}
        obs = Observation(ui.observation_id, png, ui, current, apps, _size(png, ui),
                          cache_hit=seen.hit, dump_attempts=attempts, stability=stability,
                          dump_refusals=list(self._refusals), fallback=self._fallback, current_app_source=source,
                          images=self._pictures(png, ui) if png else None)
        if obs.images is not None:  # no screenshot (perception.source: dump): no picture for the model either
            await asyncio.to_thread(obs.fit_model_picture, self.settings)  # decodes the screenshot: off the loop
        if obs.screenshot_blocked:
            self._log.warning("screenshot_blocked", step=ctx.step, app=current.package)
        ctx.observation = obs
        return {
            **screen_change(ctx.shared, ui, current.package),
            "formatted_device_state": ui.formatted_text,
            "current_package_name": current.package,
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

    def _pictures(self, png: bytes, ui: UIState) -> ScreenImages:
        """The pictures of this screen: the last ones again when both the screenshot and the
        controls are the same (a control-cache hit on a still screen), so that nothing is decoded,
        drawn or encoded twice."""
        if self._last is not None:
            last_ui, last = self._last
            if last_ui is ui and last.png == png:
                return last
        images = ScreenImages(png, ui.elements)
        self._last = (ui, images)
        return images


def _size(png: bytes, ui: UIState) -> tuple[int, int]:
    """The screen's size: the screenshot's, or the dump's when no screenshot was taken."""
    return png_size(png) if png else (ui.screen_width, ui.screen_height)


def screen_change(shared: SharedState, ui: UIState, app: str) -> dict[str, Any]:
    """The shared-state update that keeps this screen to compare the next one with, and says what
    the last action did to the screen it was decided on (``ui.diff``), by that action's step."""
    now = snapshot(ui, app)
    update: dict[str, Any] = {"last_screen": now}
    before = shared.last_screen
    if not before or before.get("observation_id") == ui.observation_id or not shared.action_history:
        return update
    last = shared.action_history[-1]
    if last.observation_id == before.get("observation_id"):  # the action was decided on that screen
        update["screen_changes"] = {str(last.step): describe_change(before, now)}
    return update


def _after_action(ctx: StepContext) -> bool:
    history = ctx.shared.action_history
    return bool(history) and history[-1].step == ctx.step - 1
