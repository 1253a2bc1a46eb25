"""ControlCache: TTL with a fake clock, invalidation and counters; the package's exports."""

from __future__ import annotations

import pytest

import ufo_mobile.core.ui as ui_pkg
from ufo_mobile.core.ui import ControlCache, UIState, build_ui_state

XML = ('<hierarchy rotation="0"><node class="android.widget.Button" package="p" text="OK" clickable="true" '
       'bounds="[0,0][100,50]"/></hierarchy>')


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _state(obs: str = "o") -> UIState:
    return build_ui_state(XML, observation_id=obs)


def test_entries_expire_after_the_ttl() -> None:
    clock = FakeClock()
    cache = ControlCache(ttl=5.0, clock=clock)
    state = _state()
    assert cache.get("emulator-5554") is None
    cache.put("emulator-5554", state)
    clock.now += 4.9
    assert cache.get("emulator-5554") is state
    clock.now += 0.2
    assert cache.get("emulator-5554") is None  # expired entries are misses
    assert (cache.hits, cache.misses) == (1, 2)
    assert len(cache) == 0


def test_entries_are_per_device_and_invalidate() -> None:
    clock = FakeClock()
    cache = ControlCache(clock=clock)
    a, b = _state("a"), _state("b")
    cache.put("A", a)
    cache.put("B", b)
    assert cache.get("A") is a and cache.get("B") is b
    cache.invalidate("A")
    assert cache.get("A") is None and cache.get("B") is b
    cache.invalidate("unknown")
    cache.invalidate()
    assert cache.get("B") is None
    assert (cache.hits, cache.misses, cache.invalidations) == (3, 2, 3)


def test_zero_ttl_never_hits_and_negative_ttl_is_rejected() -> None:
    cache = ControlCache(ttl=0, clock=FakeClock())
    cache.put("A", _state())
    assert cache.get("A") is None
    with pytest.raises(ValueError):
        ControlCache(ttl=-1)


def test_public_names_are_exported_and_sorted() -> None:
    assert ui_pkg.__all__ == sorted(ui_pkg.__all__)
    for name in ui_pkg.__all__:
        assert getattr(ui_pkg, name) is not None, name
    assert {"UIState", "build_ui_state", "ControlCache", "annotate", "downscale", "render_blank",
            "parse_hierarchy", "extract_controls", "format_ui"} <= set(ui_pkg.__all__)
