"""Set-of-mark annotation, wireframes and downscaling."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from ufo_mobile.core.ui import KIND_COLORS, Bounds, ControlKind, annotate, build_ui_state, downscale, render_blank
from ufo_mobile.core.ui.annotate import layout_labels
from ufo_mobile.errors import UIParseError

LoadDump = Callable[[str], bytes]


def _image(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def _blank(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (255, 255, 255)).save(out, format="PNG")
    return out.getvalue()


def test_every_dump_annotates(dump_name: str, corpus: Path) -> None:
    raw = (corpus / dump_name).read_bytes()
    ui = build_ui_state(raw, observation_id="o")
    shot = corpus / dump_name.replace(".xml", ".png")
    size = (ui.screen_width, ui.screen_height)
    png = shot.read_bytes() if shot.is_file() else render_blank(ui.elements, size)
    out = _image(annotate(png, ui.elements))
    assert out.size == _image(png).size
    assert out.tobytes() != _image(png).tobytes()


def test_label_colour_follows_the_kind(load_dump: LoadDump, corpus: Path) -> None:
    ui = build_ui_state(load_dump("hksmartcompanion__home_current.xml"), observation_id="o")
    png = (corpus / "hksmartcompanion__home_current.png").read_bytes()
    out = _image(annotate(png, ui.elements))
    boxes = layout_labels(ui.elements, out.size)
    for control in ui.elements:
        left, top, _, _ = boxes[control.index]
        assert out.getpixel((left + 1, top + 1)) == KIND_COLORS[control.kind], control.index
    assert {c.kind for c in ui.elements} >= {ControlKind.BUTTON, ControlKind.TOGGLE, ControlKind.TEXT}


def test_labels_of_nested_controls_do_not_pile_up(load_dump: LoadDump) -> None:
    xml = ('<hierarchy rotation="0">'
           '<node class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">'
           + "".join(f'<node class="android.widget.Button" package="p" clickable="true" content-desc="b{i}" '
                     f'bounds="[100,100][900,{300 + i}]">' for i in range(5))
           + "</node>" * 5 + "</node></hierarchy>")
    ui = build_ui_state(xml, observation_id="o")
    boxes = list(layout_labels(ui.elements, (1080, 2400)).values())
    assert len(boxes) == 5
    for i, a in enumerate(boxes):
        assert 0 <= a[0] < a[2] <= 1080 and 0 <= a[1] < a[3] <= 2400
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    real = build_ui_state(load_dump("hksmartcompanion__nav_transit.xml"), observation_id="o")
    placed = list(layout_labels(real.elements, (1080, 2400)).values())
    overlapping = sum(1 for i, a in enumerate(placed) for b in placed[i + 1:]
                      if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])
    assert overlapping == 0


def test_label_size_follows_the_image_size(load_dump: LoadDump) -> None:
    ui = build_ui_state(load_dump("phoneagent__wd.xml"), observation_id="o")
    small = layout_labels(ui.elements[:1], (540, 1097), scale=0.5)
    large = layout_labels(ui.elements[:1], (1080, 2194))
    (s,), (g,) = small.values(), large.values()
    assert 1.6 < (g[3] - g[1]) / (s[3] - s[1]) < 2.4


def test_annotate_scales_bounds_to_a_smaller_screenshot(load_dump: LoadDump) -> None:
    ui = build_ui_state(load_dump("hksmartcompanion__home_current.xml"), observation_id="o")
    small = _blank((540, 1200))
    by_size = _image(annotate(small, ui.elements, screen_size=(1080, 2400)))
    by_scale = _image(annotate(small, ui.elements, scale=0.5))
    assert by_size.tobytes() == by_scale.tobytes()
    deny = ui.get_control(7).bounds  # [133,1752][947,1857]: its right edge lands at x=473 at half size
    assert deny == Bounds(133, 1752, 947, 1857)
    assert by_scale.getpixel((473, (deny.top + deny.bottom) // 4)) == KIND_COLORS[ControlKind.BUTTON]
    assert by_scale.getpixel((480, (deny.top + deny.bottom) // 4)) == (255, 255, 255)


def test_render_blank_draws_a_wireframe(load_dump: LoadDump) -> None:
    ui = build_ui_state(load_dump("webkiosk__window_dump2.xml"), observation_id="o")
    img = _image(render_blank(ui.elements, (1920, 1200)))
    assert img.size == (1920, 1200)
    assert len(img.getcolors(1 << 16) or []) > 2  # more than background and one outline colour
    assert _image(render_blank([], (10, 10))).getcolors() == [(100, (248, 248, 246))]


def test_downscale(corpus: Path) -> None:
    png = (corpus / "hksmartcompanion__live_drive_test.png").read_bytes()
    small, factor = downscale(png, 1280)
    assert _image(small).size == (576, 1280) and factor == pytest.approx(1280 / 2400)
    same, one = downscale(png, 4000)
    assert same is png and one == 1.0
    with pytest.raises(ValueError):
        downscale(png, 0)


def test_unreadable_screenshot_raises() -> None:
    with pytest.raises(UIParseError, match="not a readable image"):
        annotate(b"not a png", [])
    with pytest.raises(UIParseError):
        downscale(b"\x89PNG\r\n\x1a\n broken", 100)
