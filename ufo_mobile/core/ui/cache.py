"""A short-lived cache of observed screens, keyed by device serial.

A dump takes a second or more on a real phone, so a screen observed moments ago is reused while it is
younger than ``ttl`` seconds. Every action changes the screen, so it is dropped after acting: the run's
``Phone`` (``core/phone.py``), which owns the cache, does both. Expired entries count as misses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ufo_mobile.core.ui.state import UIState


class ControlCache:
    """UIState per device, valid for ``ttl`` seconds measured with ``clock``."""

    def __init__(self, ttl: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        if ttl < 0:
            raise ValueError(f"ttl must be >= 0, got {ttl}")
        self.ttl = ttl
        self._clock = clock
        self._entries: dict[str, tuple[float, UIState]] = {}
        self.hits = 0
        self.misses = 0
        self.invalidations = 0

    def get(self, key: str) -> UIState | None:
        """The cached state for ``key`` if it is younger than ``ttl``; otherwise ``None`` (a miss)."""
        entry = self._entries.get(key)
        if entry is not None:
            stored_at, value = entry
            if self._clock() - stored_at < self.ttl:
                self.hits += 1
                return value
            del self._entries[key]
        self.misses += 1
        return None

    def put(self, key: str, value: UIState) -> None:
        self._entries[key] = (self._clock(), value)

    def invalidate(self, key: str | None = None) -> None:
        """Forget ``key``, or every entry when ``key`` is ``None``. Counts one invalidation per call."""
        if key is None:
            self._entries.clear()
        else:
            self._entries.pop(key, None)
        self.invalidations += 1

    def __len__(self) -> int:
        return len(self._entries)
