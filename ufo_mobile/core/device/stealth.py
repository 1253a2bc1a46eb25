"""``StealthDriver``: human-like input on top of any driver.

Seeded pauses, taps scattered around the target (or inside an element with ``tap_in``), curved
swipes sent as short segments, word-by-word typing. It owns a ``random.Random``; the global RNG is
never touched.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from itertools import pairwise

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ufo_mobile.core.device.base import Box, DeviceDriver, RectLike, box_edges
from ufo_mobile.core.device.wrappers import DriverWrapper, Sleep

__all__ = ["RectLike", "StealthDriver", "StealthSettings"]

_CHUNKS = re.compile(r"\s+|\S+\s*")


class StealthSettings(BaseModel):
    """Knobs of ``StealthDriver``. Ranges are ``(low, high)``; every pause is capped by ``max_pause_s``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action_delay_s: tuple[float, float] = (0.05, 0.25)
    typing_pause_s: tuple[float, float] = (0.08, 0.3)
    max_pause_s: float = Field(2.0, ge=0, le=30)
    tap_radius_px: float = Field(6.0, ge=0, description="taps land within this distance of the target")
    element_margin: float = Field(0.2, ge=0, lt=0.5, description="tap_in keeps off this fraction of each side")
    swipe_endpoint_px: float = Field(8.0, ge=0, description="swipe ends land within this distance")
    swipe_curvature: tuple[float, float] = (0.05, 0.2)
    swipe_segment_px: float = Field(60.0, gt=0, description="shortest segment; keep it above the touch slop")
    swipe_max_segments: int = Field(6, ge=1, le=50)
    long_press_extra: float = Field(0.15, ge=0, le=1, description="long presses last up to this much longer")
    drag_duration_jitter: float = Field(0.1, ge=0, lt=1)

    @model_validator(mode="after")
    def _check_ranges(self) -> StealthSettings:
        for name in ("action_delay_s", "typing_pause_s", "swipe_curvature"):
            low, high = getattr(self, name)
            if not 0 <= low <= high:
                raise ValueError(f"{name}: need 0 <= low <= high, got ({low}, {high})")
        return self


class StealthDriver(DriverWrapper):
    """Human-like input over ``inner``; the same seed gives the same inner calls and pauses.

    A swipe longer than ``swipe_segment_px`` becomes a quadratic Bezier curve sent as up to
    ``swipe_max_segments`` inner swipes (each a separate gesture: on a real phone every segment may
    fling, so use ``swipe_max_segments=1`` where scroll distance matters); their durations add up
    to the requested one, longer at both ends. A drag stays one inner ``drag`` (lifting the finger
    mid-way would drop the dragged item) with jittered ends and duration. A long press is only ever
    lengthened, so it never turns into a tap. Points are clamped at 0; the screen size is not
    queried, so a target at the right or bottom edge may be nudged off by up to the radius.
    """

    def __init__(self, inner: DeviceDriver, settings: StealthSettings | None = None, *,
                 seed: int | None = None, sleep: Sleep = asyncio.sleep) -> None:
        super().__init__(inner)
        self.settings = settings or StealthSettings()
        self._rng = random.Random(seed)  # None seeds from the OS, never from the global RNG
        self._sleep = sleep

    async def _pause(self, bounds: tuple[float, float]) -> None:
        seconds = min(self._rng.uniform(*bounds), self.settings.max_pause_s)
        if seconds > 0:
            await self._sleep(seconds)

    def _near(self, x: int, y: int, radius: float) -> tuple[int, int]:
        """A Gaussian point around (x, y), pulled back onto the circle of ``radius`` if outside."""
        if radius <= 0:
            return x, y
        dx, dy = self._rng.gauss(0.0, radius / 2), self._rng.gauss(0.0, radius / 2)
        distance = math.hypot(dx, dy)
        if distance > radius:
            dx, dy = dx * radius / distance, dy * radius / distance
        return max(0, x + math.trunc(dx)), max(0, y + math.trunc(dy))  # trunc never leaves the circle

    def _inside(self, low: int, high: int) -> int:
        """A Gaussian coordinate around the middle of ``[low, high)``, kept off the edges."""
        last = high - 1
        margin = (last - low) * self.settings.element_margin
        value = self._rng.gauss((low + last) / 2, max((last - low) / 6, 1e-6))
        value = min(max(value, low + margin), last - margin)
        return min(max(round(value), low), last)

    async def tap(self, x: int, y: int) -> None:
        await self._pause(self.settings.action_delay_s)
        await self.inner.tap(*self._near(x, y, self.settings.tap_radius_px))

    async def tap_in(self, bounds: Box) -> None:
        """Tap a random point inside an element's bounds (left, top, right, bottom; right/bottom
        exclusive), kept ``element_margin`` off each side."""
        try:
            left, top, right, bottom = box_edges(bounds)
        except ValueError as exc:
            raise ValueError(f"tap_in: {exc}") from None
        await self._pause(self.settings.action_delay_s)
        await self.inner.tap(self._inside(left, right), self._inside(top, bottom))

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self._pause(self.settings.action_delay_s)
        px, py = self._near(x, y, self.settings.tap_radius_px)
        duration = round(duration_ms * self._rng.uniform(1.0, 1.0 + self.settings.long_press_extra))
        await self.inner.long_press(px, py, duration)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        settings = self.settings
        await self._pause(settings.action_delay_s)
        length = math.hypot(x2 - x1, y2 - y1)
        if length < settings.swipe_segment_px:  # a press or a nudge: move both ends by one offset
            sx, sy = self._near(x1, y1, settings.swipe_endpoint_px)
            await self.inner.swipe(sx, sy, max(0, x2 + sx - x1), max(0, y2 + sy - y1), duration_ms)
            return
        points = self._curve((x1, y1), (x2, y2), length)
        durations = _split_duration(duration_ms, len(points) - 1)
        for ((ax, ay), (bx, by)), ms in zip(pairwise(points), durations, strict=True):
            await self.inner.swipe(ax, ay, bx, by, ms)

    def _curve(self, start: tuple[int, int], end: tuple[int, int], length: float) -> list[tuple[int, int]]:
        """Points along a quadratic Bezier from near ``start`` to near ``end``, bowed to one side."""
        settings = self.settings
        p0 = self._near(*start, settings.swipe_endpoint_px)
        p2 = self._near(*end, settings.swipe_endpoint_px)
        count = max(1, min(settings.swipe_max_segments, int(length // settings.swipe_segment_px)))
        bow = length * self._rng.uniform(*settings.swipe_curvature) * self._rng.choice((-1, 1))
        normal = (-(end[1] - start[1]) / length, (end[0] - start[0]) / length)
        # The curve's midpoint lies half-way between the chord's midpoint and the control point.
        cx = (p0[0] + p2[0]) / 2 + 2 * bow * normal[0]
        cy = (p0[1] + p2[1]) / 2 + 2 * bow * normal[1]
        points = [p0]
        for i in range(1, count):
            t = i / count
            bx = (1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * cx + t * t * p2[0]
            by = (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * cy + t * t * p2[1]
            points.append((max(0, round(bx)), max(0, round(by))))
        points.append(p2)
        return points

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        settings = self.settings
        await self._pause(settings.action_delay_s)
        ax, ay = self._near(x1, y1, settings.swipe_endpoint_px)
        bx, by = self._near(x2, y2, settings.swipe_endpoint_px)
        jitter = settings.drag_duration_jitter
        duration = max(1, round(duration_ms * self._rng.uniform(1.0 - jitter, 1.0 + jitter)))
        await self.inner.drag(ax, ay, bx, by, duration)

    async def input_text(self, text: str, clear: bool = False) -> None:
        """Type word by word (each word with the whitespace after it); ``clear`` applies to the first."""
        await self._pause(self.settings.action_delay_s)
        for index, chunk in enumerate(_CHUNKS.findall(text) or [""]):
            if index:
                await self._pause(self.settings.typing_pause_s)
            await self.inner.input_text(chunk, clear and index == 0)

    async def press_key(self, key: str | int) -> None:
        await self._pause(self.settings.action_delay_s)
        await self.inner.press_key(key)

    async def start_app(self, package: str, activity: str | None = None) -> None:
        await self._pause(self.settings.action_delay_s)
        await self.inner.start_app(package, activity)

    async def install_app(self, apk_path: str) -> None:
        await self._pause(self.settings.action_delay_s)
        await self.inner.install_app(apk_path)


def _split_duration(total_ms: int, parts: int) -> list[int]:
    """Split ``total_ms`` over ``parts`` segments, slower at both ends (ease in and out)."""
    weights = [1.0 + 0.5 * abs(2 * (i + 0.5) / parts - 1) for i in range(parts)]
    scale = total_ms / sum(weights)
    durations = [max(1, round(w * scale)) for w in weights]
    durations[-1] = max(1, total_ms - sum(durations[:-1]))
    return durations
