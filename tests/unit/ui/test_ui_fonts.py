"""The fonts text is drawn with: which installed face draws what (test-made fonts in a folder named
by ``UFO_MOBILE_FONTS``, fontconfig's list, the missing-font note), and, on a machine with the Noto
fonts, that the wireframe draws Cyrillic and CJK labels as glyphs where Pillow's built-in font draws
the same empty box for every one of them."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFont

from tests.fonts import require_noto, write_font
from ufo_mobile.core.ui import build_ui_state, fonts, render_blank
from ufo_mobile.core.ui.fonts import draw_text, face_for, faces_for, font_faces, font_runs, label_font, pillow_font

NO_GLYPH = "\ue000"  # private use: no font has it, so it is drawn as the font's "missing" box
LATIN = "".join(chr(c) for c in range(0x20, 0x7F))


@pytest.fixture(autouse=True)
def fresh_fonts() -> Iterator[None]:
    """Each test finds the fonts anew (``UFO_MOBILE_FONTS`` may change between tests)."""
    fonts.reset()
    yield
    fonts.reset()


def use_fonts(monkeypatch: pytest.MonkeyPatch, *places: Path) -> None:
    monkeypatch.setenv(fonts.FONTS_ENV, os.pathsep.join(str(p) for p in places))
    fonts.reset()


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


# --- which face draws what (fonts made here) --------------------------------------------------------------


def test_faces_are_picked_by_family_in_fallback_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "fonts"
    write_font(folder, "Noto Sans", LATIN, style="Bold")  # no regular face: not used
    write_font(folder, "DejaVu Sans", LATIN + "ЖЯλ→😀")
    write_font(folder, "Noto Sans CJK SC", "设置日한→" + LATIN)
    write_font(folder / "more", "Noto Sans Arabic", "مرحبا")
    write_font(folder, "Noto Sans Symbols", "→")
    write_font(folder, "Comic Neue", LATIN + "ก")  # a family the fallback list does not name
    use_fonts(monkeypatch, folder)
    assert [face.family for face in font_faces()] == ["DejaVu Sans", "Noto Sans Symbols", "Noto Sans CJK SC",
                                                      "Noto Sans Arabic"]
    expected = {"A": "DejaVu Sans", "Ж": "DejaVu Sans", "设": "Noto Sans CJK SC", "한": "Noto Sans CJK SC",
                "م": "Noto Sans Arabic", "→": "DejaVu Sans", "😀": "DejaVu Sans"}  # the Latin face first
    assert {char: getattr(face_for(char), "family", None) for char in expected} == expected
    assert face_for("ก") is None and face_for("\n") is None and face_for(NO_GLYPH) is None


def test_the_latin_face_goes_first_and_wide_fonts_come_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_font(tmp_path, "Noto Sans", LATIN + "Ж")
    write_font(tmp_path, "DejaVu Sans", LATIN + "Жمر")
    write_font(tmp_path, "Noto Sans Arabic", "مر")
    use_fonts(monkeypatch, tmp_path)
    assert [face.family for face in font_faces()] == ["Noto Sans", "Noto Sans Arabic", "DejaVu Sans"]
    assert getattr(face_for("م"), "family", None) == "Noto Sans Arabic"


def test_no_fonts_at_all_draws_with_pillows_own_and_says_what_is_missing(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    use_fonts(monkeypatch, tmp_path / "empty")
    assert font_faces() == ()
    image = Image.new("RGB", (200, 40), (255, 255, 255))
    assert draw_text(ImageDraw.Draw(image), (2, 20), "Wi-Fi", 20, (0, 0, 0)) > 0
    assert label_font(20) is pillow_font(None, 20, simple=True)
    note = fonts.missing_note("Wi-Fi 设置")
    assert note is not None and "\n" not in note
    assert note.startswith("fonts: no font on this machine draws Chinese/Japanese/Korean (2 characters), Latin "
                           "(4 characters): drawn as boxes; ")
    assert "fonts-noto-cjk" in note and fonts.FONTS_ENV in note


def test_the_note_names_only_what_no_face_draws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_font(tmp_path, "Noto Sans", LATIN + "Ж")
    use_fonts(monkeypatch, tmp_path)
    assert fonts.missing_note("Wi-Fi Ж \n\t" + NO_GLYPH) is None  # spaces, controls, private use: nothing expected
    assert fonts.missing("Wi-Fi 设置 ภาษา ภ 😀") == {"Chinese/Japanese/Korean": 2, "Thai": 3,
                                                    "emoji and symbols": 1}


def test_a_font_file_that_is_not_one_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken.ttf").write_bytes(b"not a font")
    write_font(tmp_path, "Noto Sans", LATIN)
    use_fonts(monkeypatch, tmp_path, tmp_path / "nowhere")
    assert [face.family for face in font_faces()] == ["Noto Sans"]


def test_fontconfigs_list_is_read_when_no_folder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    latin = write_font(tmp_path / "f", "Noto Sans", LATIN)
    cjk = write_font(tmp_path / "f", "Noto Sans CJK SC", "设")
    fake = tmp_path / "bin" / "fc-list"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n"
                    "printf 'Noto Sans\\tBold\\t0\\t/nowhere/NotoSans-Bold.ttf\\n'\n"
                    f"printf 'Noto Sans\\tRegular\\t0\\t{latin}\\n'\n"
                    f"printf 'Noto Sans CJK SC\\tRegular\\t0\\t{cjk}\\n'\n"
                    "printf 'garbage line\\n'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv(fonts.FONTS_ENV, raising=False)
    monkeypatch.setenv("PATH", str(fake.parent))
    fonts.reset()
    assert [(f.family, f.path) for f in font_faces()] == [("Noto Sans", latin), ("Noto Sans CJK SC", cjk)]
    assert getattr(face_for("设"), "family", None) == "Noto Sans CJK SC"


# --- drawing with the machine's Noto fonts ---------------------------------------------------------------


def test_every_script_has_a_noto_face_in_fallback_order() -> None:
    require_noto()
    faces = font_faces()
    assert faces[0].family == "Noto Sans"
    expected = {"A": "Noto Sans", "Ж": "Noto Sans", "λ": "Noto Sans", "设": "Noto Sans CJK SC",
                "日": "Noto Sans CJK SC", "한": "Noto Sans CJK SC", "ع": "Noto Sans Arabic",
                "→": "Noto Sans Symbols"}
    for char, family in expected.items():
        face = face_for(char)
        assert face is not None and face.family == family, (char, face)
    assert face_for("\n") is None and face_for(NO_GLYPH) is None
    assert fonts.missing_note("Привет, 设置! مرحبا ภาษา") is None


def test_faces_for_lists_each_face_once_with_the_characters_it_draws() -> None:
    require_noto()
    found = faces_for("Привет, 设置! مرحبا\n")
    families = [face.family for face, _ in found]
    assert families == ["Noto Sans", "Noto Sans CJK SC", "Noto Sans Arabic"]
    drawn = dict((face.family, chars) for face, chars in found)
    assert set(drawn["Noto Sans CJK SC"]) == set("设置")
    assert "\n" not in "".join(drawn.values())
    assert [(f.family if f else None, run) for f, run in font_runs("Wi-Fi 设置")] == [
        ("Noto Sans", "Wi-Fi "), ("Noto Sans CJK SC", "设置")]


def test_fonts_are_loaded_once() -> None:
    require_noto()
    assert pillow_font(face_for("设"), 30) is pillow_font(face_for("设"), 30)
    assert label_font(24) is label_font(24)


def test_the_cjk_face_is_drawn_at_regular_weight_not_its_thin_default() -> None:
    require_noto()
    font = pillow_font(face_for("设"), 40)
    assert isinstance(font, ImageFont.FreeTypeFont)
    try:
        font.get_variation_axes()
    except OSError:
        pytest.skip("the CJK font here is not a variable font (Debian's is static): no weight to pin")
    thin = ImageFont.truetype(font.path, 40, index=font.index)  # the variable font's default: weight 100
    heavy = Image.new("L", (120, 60), 255)
    light = heavy.copy()
    ImageDraw.Draw(heavy).text((4, 30), "设置", fill=0, font=font, anchor="lm")
    ImageDraw.Draw(light).text((4, 30), "设置", fill=0, font=thin, anchor="lm")
    assert _ink(heavy) > 1.5 * _ink(light)


@pytest.mark.parametrize("char", list("ЖЯ设置"))
def test_glyphs_are_drawn_where_the_built_in_font_draws_a_box(char: str) -> None:
    require_noto()
    built_in, missing = _one(char, "built-in"), _one(NO_GLYPH, "built-in")
    assert built_in.tobytes() == missing.tobytes()  # Pillow's own font: the same box for all of them
    ours = _one(char, "ours")
    assert _ink(ours) > 100
    assert ImageChops.difference(ours, built_in).getbbox() is not None


def test_different_characters_draw_differently() -> None:
    require_noto()
    drawn = [_one(char, "ours").tobytes() for char in "ЖЯ设置"]
    assert len(set(drawn)) == 4


def test_the_wireframe_draws_cyrillic_and_cjk_labels() -> None:
    require_noto()
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
