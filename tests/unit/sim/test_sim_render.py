"""Screenshots: phone-sized, deterministic, and showing what the XML says."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PIL import Image

from ufo_mobile.sim.phone.simphone import SimPhone

if TYPE_CHECKING:
    from conftest import Screen


def _image(phone: SimPhone) -> Image.Image:
    return Image.open(io.BytesIO(phone.screenshot_png()))


def test_png_is_phone_sized(phone: SimPhone) -> None:
    data = phone.screenshot_png()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(data))
    assert image.size == (1080, 2400) and image.mode == "RGB"


def test_same_state_same_bytes(phone: SimPhone) -> None:
    assert phone.screenshot_png() == phone.screenshot_png()


def test_switch_on_and_off_look_different(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.android.settings", "wifi")
    left, top, right, bottom = ui.bounds(ui.node(text="Use Wi-Fi"))
    off = _image(phone).crop((right - 200, top, right, bottom))
    ui.tap(text="Use Wi-Fi")
    on = _image(phone).crop((right - 200, top, right, bottom))
    assert off.tobytes() != on.tobytes()
    accent = (0x1A, 0x73, 0xE8)
    assert accent in {colour for _, colour in on.getcolors(1 << 16) or []}
    assert accent not in {colour for _, colour in off.getcolors(1 << 16) or []}


def test_text_is_drawn_at_its_bounds(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.android.settings")
    left, top, right, bottom = ui.bounds(ui.node(text="Bluetooth"))
    region = _image(phone).crop((left, top, right, bottom)).convert("L")
    darkest = region.getextrema()[0]
    assert isinstance(darkest, int) and darkest < 100  # dark text pixels inside the node's box


def test_scrolled_rows_do_not_paint_over_the_app_bar(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.android.settings")
    bar = ui.bounds(ui.node(rid="id/toolbar"))
    before = _image(phone).crop(bar).tobytes()
    phone.swipe(540, 1500, 540, 1430, 300)  # the first title straddles the bar
    after = _image(phone).crop(bar).tobytes()
    assert before == after
    assert phone.dump_hierarchy() != ""


def test_dark_theme_changes_the_background(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.android.settings", "display")
    light = _image(phone).getpixel((540, 2300))
    ui.tap(text="Dark theme")
    dark = _image(phone).getpixel((540, 2300))
    assert light == (255, 255, 255) and dark != light


def test_focused_field_is_highlighted(phone: SimPhone, ui: Screen) -> None:
    phone.start_app("com.example.notes", "edit")
    box = ui.bounds(ui.node(rid="title_field"))
    before = _image(phone).crop(box).tobytes()
    ui.tap(rid="title_field")
    assert _image(phone).crop(box).tobytes() != before
