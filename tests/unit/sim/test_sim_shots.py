"""Screenshots are encoded once per drawn screen, and every change the renderer shows is drawn again."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ufo_mobile.sim.phone import render, shots
from ufo_mobile.sim.phone.render import Renderer
from ufo_mobile.sim.phone.simphone import SimPhone
from ufo_mobile.sim.phone.view import Snapshot

if TYPE_CHECKING:
    from conftest import Screen


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The screens (package/screen) the phones' renderers encode, in order."""
    seen: list[str] = []
    original = Renderer.png

    def counting(self: Renderer, snapshot: Snapshot) -> bytes:
        seen.append(f"{snapshot.package}/{snapshot.screen}")
        return original(self, snapshot)

    monkeypatch.setattr(Renderer, "png", counting)
    return seen


def _fresh(phone: SimPhone) -> bytes:
    """The current screen drawn by a renderer of its own, no cache involved."""
    return Renderer().png(phone.snapshot())


def test_the_same_screen_is_encoded_once(phone: SimPhone, encodes: list[str]) -> None:
    first = phone.screenshot_png()
    assert phone.screenshot_png() == first == _fresh(phone)
    assert len(encodes) == 2  # the phone's one, and _fresh's own


def test_a_screen_seen_again_is_not_encoded_again(phone: SimPhone, encodes: list[str]) -> None:
    home = phone.screenshot_png()
    phone.start_app("com.android.settings")
    settings = phone.screenshot_png()
    phone.home()
    assert phone.screenshot_png() == home != settings
    assert len(encodes) == 2


def test_a_switch_turned_on_is_drawn_again(phone: SimPhone, ui: Screen, encodes: list[str]) -> None:
    phone.start_app("com.android.settings", "wifi")
    off = phone.screenshot_png()
    ui.tap(text="Use Wi-Fi")
    on = phone.screenshot_png()
    assert on != off and on == _fresh(phone)
    ui.tap(text="Use Wi-Fi")
    assert phone.screenshot_png() == off


def test_typed_text_focus_and_the_keyboard_are_drawn(playground: SimPhone, ui: Screen,
                                                     encodes: list[str]) -> None:
    playground.soft_keyboard = True
    shown = [playground.screenshot_png()]
    ui.tap(text="Your name")  # focus: the field's outline and the keyboard
    shown.append(playground.screenshot_png())
    playground.input_text("A")
    shown.append(playground.screenshot_png())
    playground.input_text("b")
    shown.append(playground.screenshot_png())
    assert len(set(shown)) == 4 and shown[-1] == _fresh(playground)


def test_a_toast_and_the_theme_are_drawn(playground: SimPhone, ui: Screen, encodes: list[str]) -> None:
    before = playground.screenshot_png()
    ui.tap(text="Open missing")  # "App not installed"
    toast = playground.screenshot_png()
    assert toast != before and toast == _fresh(playground)
    playground.set_state("com.android.settings", dark_theme=True)
    dark = playground.screenshot_png()
    assert dark not in (before, toast) and dark == _fresh(playground)


def test_the_clock_and_a_scroll_are_drawn(encodes: list[str]) -> None:
    now = [datetime(2030, 7, 4, 18, 5, tzinfo=UTC)]
    phone = SimPhone(clock=lambda: now[0])
    phone.start_app("com.android.settings")
    first = phone.screenshot_png()
    now[0] += timedelta(minutes=1)
    later = phone.screenshot_png()
    assert later != first and later == _fresh(phone)
    phone.swipe(540, 1800, 540, 900)
    scrolled = phone.screenshot_png()
    assert scrolled != later and scrolled == _fresh(phone)


def test_only_the_last_screens_are_kept(encodes: list[str]) -> None:
    now = [datetime(2030, 7, 4, 0, 0, tzinfo=UTC)]
    phone = SimPhone(clock=lambda: now[0])
    for _ in range(shots.KEPT + 1):
        phone.screenshot_png()
        now[0] += timedelta(minutes=1)
    now[0] = datetime(2030, 7, 4, 0, 0, tzinfo=UTC)  # the first screen again: no longer kept
    phone.screenshot_png()
    assert len(encodes) == shots.KEPT + 2


def test_the_key_covers_what_render_reads_of_a_spec() -> None:
    """``drawn_key`` leaves out the spec and scope; the renderer may read only ``DRAWN_SPEC`` of them."""
    source = Path(render.__file__).read_text()
    assert set(re.findall(r"\bspec\.(\w+)", source)) <= set(shots.DRAWN_SPEC)
    assert "scope" not in source and ".item" not in source
