"""Phase 1: observe the device: screenshot and controls concurrently, apps, annotation."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

import structlog

from ufo_mobile.device.base import AppInfo, DeviceDriver
from ufo_mobile.errors import UIParseError
from ufo_mobile.processors.context import Observation, StepContext
from ufo_mobile.settings import PerceptionSettings
from ufo_mobile.ui.annotate import annotate, downscale
from ufo_mobile.ui.cache import ControlCache
from ufo_mobile.ui.state import UIState, build_ui_state


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG header, without decoding the image."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n":
        raise UIParseError("the screenshot is not a PNG image")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


class DataCollection:
    name: ClassVar[str] = "data_collection"
    always: ClassVar[bool] = False

    def __init__(self, device: DeviceDriver, cache: ControlCache, settings: PerceptionSettings,
                 *, logger: Any = None) -> None:
        self.device = device
        self.cache = cache
        self.settings = settings
        self._apps: list[AppInfo] | None = None
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.observe")

    async def _apps_once(self) -> list[AppInfo]:
        if self._apps is None:
            self._apps = await self.device.get_apps() if self.device.supports("get_apps") else []
        return self._apps

    async def _dump(self, ctx: StepContext, size: asyncio.Future[tuple[int, int]]) -> tuple[UIState, int]:
        last: UIParseError | None = None
        for attempt in range(1, self.settings.dump_retries + 2):
            xml = await self.device.get_ui_tree()
            try:
                state = build_ui_state(xml, observation_id=f"obs-{ctx.step:04d}-{attempt}",
                                       screen_size=await size)
                return state, attempt
            except UIParseError as exc:
                last = exc
                self._log.warning("ui_dump_invalid", step=ctx.step, attempt=attempt, error=str(exc))
        assert last is not None
        raise UIParseError(f"UI dump still invalid after {self.settings.dump_retries + 1} attempts: {last}")

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        loop = asyncio.get_running_loop()
        size: asyncio.Future[tuple[int, int]] = loop.create_future()

        async def shot() -> bytes:
            try:
                png = await self.device.screenshot()
                size.set_result(png_size(png))
            except BaseException as exc:
                size.set_exception(exc)
                raise
            return png

        cached = self.cache.get(self.device.serial)
        dump = self._dump(ctx, size) if cached is None else _ready((cached, 0))
        png, (ui, attempts), current, apps = await asyncio.gather(
            shot(), dump, self.device.current_app(), self._apps_once())
        if cached is None:
            self.cache.put(self.device.serial, ui)
        ctx.cache = {"hit": int(cached is not None), "hits": self.cache.hits, "misses": self.cache.misses}
        obs = Observation(ui.observation_id, png, ui, current, apps, size.result(),
                          cache_hit=cached is not None, dump_attempts=attempts)
        await asyncio.to_thread(self._images, obs)
        ctx.observation = obs
        previous = ctx.shared.formatted_device_state
        return {
            "previous_formatted_device_state": previous,
            "formatted_device_state": ui.formatted_text,
            "focused_text": ui.focused_text,
            "current_package_name": current.package,
            "current_activity_name": current.activity,
            "visited_packages": [current.package] if current.package else [],
            "width": obs.screen_size[0],
            "height": obs.screen_size[1],
        }

    def _images(self, obs: Observation) -> None:
        if self.settings.annotate:
            obs.annotated = annotate(obs.screenshot, obs.ui_state.elements)
        source = obs.annotated or obs.screenshot
        obs.model_image, obs.model_image_scale = downscale(source, self.settings.image_longest_side)


async def _ready(value: Any) -> Any:
    return value
