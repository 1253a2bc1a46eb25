"""The packaged fonts: which face draws what, and that the wireframe draws Cyrillic and CJK labels as
glyphs where Pillow's built-in font draws the same empty box for every one of them."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFont

from ufo_mobile.ui import build_ui_state, render_blank
from ufo_mobile.ui.fonts import draw_text, face_for, faces_for, font_runs, label_font, packaged_faces, pillow_font

NO_GLYPH = "\ue000"  # private use: no font has it, so it is drawn as the font's "missing" box


def _ink(image: Image.Image) -> int:
    """Dark pixels."""
    return sum(image.convert("L").histogram()[:128])


def _one(text: str, draw_with: str) -> Image.Image:
    image = Image.new("RGB", (220, 64), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    if draw_with == "built-in":
        draw.text((6, 32), text, fill=(0, 0, 0), font=ImageFont.load_default(size=40), anchor="lm")
    else:
        draw_text(draw, (6, 32), text, 40, (0, 0, 0))
    return image.convert("L")


def test_every_script_has_a_face_in_fallback_order() -> None:
    faces = packaged_faces()
    assert faces, "the font packages (manimgx-fonts, manimgx-fonts-cjk) are dependencies"
    assert faces[0].family == "Noto Sans"
    expected = {"A": "Noto Sans", "Ж": "Noto Sans", "λ": "Noto Sans", "设": "Noto Sans CJK SC",
                "日": "Noto Sans CJK SC", "한": "Noto Sans CJK SC", "ع": "Noto Sans Arabic",
                "→": "Noto Sans Symbols", "😀": "Noto Emoji"}
    for char, family in expected.items():
        face = face_for(char)
        assert face is not None and face.family == family, (char, face)
    assert face_for("\n") is None and face_for(NO_GLYPH) is None


def test_faces_for_lists_each_face_once_with_the_characters_it_draws() -> None:
    found = faces_for("Привет, 设置! مرحبا 😀\n")
    families = [face.family for face, _ in found]
    assert families == ["Noto Sans", "Noto Sans Arabic", "Noto Sans CJK SC", "Noto Emoji"]
    drawn = dict((face.family, chars) for face, chars in found)
    assert set(drawn["Noto Sans CJK SC"]) == set("设置")
    assert "\n" not in "".join(drawn.values())
    assert [(f.family if f else None, run) for f, run in font_runs("Wi-Fi 设置")] == [
        ("Noto Sans", "Wi-Fi "), ("Noto Sans CJK SC", "设置")]


def test_fonts_are_loaded_once() -> None:
    assert pillow_font(face_for("设"), 30) is pillow_font(face_for("设"), 30)
    assert label_font(24) is label_font(24)


def test_the_cjk_face_is_drawn_at_regular_weight_not_its_thin_default() -> None:
    font = pillow_font(face_for("设"), 40)
    assert isinstance(font, ImageFont.FreeTypeFont)
    thin = ImageFont.truetype(font.path, 40, index=font.index)  # the variable font's default: weight 100
    heavy = Image.new("L", (120, 60), 255)
    light = heavy.copy()
    ImageDraw.Draw(heavy).text((4, 30), "设置", fill=0, font=font, anchor="lm")
    ImageDraw.Draw(light).text((4, 30), "设置", fill=0, font=thin, anchor="lm")
    assert _ink(heavy) > 1.5 * _ink(light)


@pytest.mark.parametrize("char", list("ЖЯ设置"))
def test_glyphs_are_drawn_where_the_built_in_font_draws_a_box(char: str) -> None:
    built_in, missing = _one(char, "built-in"), _one(NO_GLYPH, "built-in")
    assert built_in.tobytes() == missing.tobytes()  # Pillow's own font: the same box for all of them
    ours = _one(char, "packaged")
    assert _ink(ours) > 100
    assert ImageChops.difference(ours, built_in).getbbox() is not None


def test_different_characters_draw_differently() -> None:
    drawn = [_one(char, "packaged").tobytes() for char in "ЖЯ设置"]
    assert len(set(drawn)) == 4


def test_the_wireframe_draws_cyrillic_and_cjk_labels() -> None:
    label = "Настройки 设置"
    xml = ('<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">'
           f'<node class="android.widget.Button" package="p" clickable="true" text="{label}" '
           'bounds="[40,200][1040,400]"/></node></hierarchy>')
    state = build_ui_state(xml, observation_id="o")
    good = Image.open(io.BytesIO(render_blank(state.elements, (1080, 2400)))).convert("L")
    control = next(c for c in state.elements if c.label == label)
    region = (control.bounds.left + 1, control.bounds.top + 1, control.bounds.right - 1, control.bounds.bottom - 1)
    drawn = good.crop(region)
    # the same wireframe with every letter replaced by a character no font has: boxes only
    boxes_xml = xml.replace(label, "".join(NO_GLYPH if not ch.isspace() else ch for ch in label))
    boxes_state = build_ui_state(boxes_xml, observation_id="o")
    boxes = Image.open(io.BytesIO(render_blank(boxes_state.elements, (1080, 2400)))).convert("L").crop(region)
    assert _ink(drawn) > 200
    difference = ImageChops.difference(drawn, boxes)
    assert sum(difference.histogram()[65:]) > 0.3 * _ink(drawn)
