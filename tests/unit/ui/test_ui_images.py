"""The screen's pictures: the fast PNG writer (exact pixels, a valid zlib stream), ``shrink``, and
``ScreenImages`` making each picture (the model's and the record's JPEGs) once from one decode of
the screenshot."""

from __future__ import annotations

import io
import random
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageStat

from ufo_mobile.core.ui import build_ui_state
from ufo_mobile.core.ui import screen_images as screen_images_module
from ufo_mobile.core.ui.png import BAND_ROWS, MIN_ZERO_RUN, encode_png
from ufo_mobile.core.ui.screen_images import ANNOTATED_SIDE, THUMBNAIL_SIDE, ScreenImages, working_factor
from ufo_mobile.core.ui.screenshot import is_blank, shrink

SCREEN = ('<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">'
          '<node class="android.widget.Button" package="p" clickable="true" text="OK" bounds="[100,300][980,500]"/>'
          '<node class="android.widget.TextView" package="p" text="Hello" bounds="[100,600][980,700]"/>'
          '</node></hierarchy>')


def _idat(png: bytes) -> bytes:
    """The zlib stream of ``png``, every chunk's CRC checked on the way."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, data = 8, b""
    while pos < len(png):
        (size,) = struct.unpack(">I", png[pos:pos + 4])
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + size]
        assert struct.unpack(">I", png[pos + 8 + size:pos + 12 + size])[0] == zlib.crc32(kind + body)
        if kind == b"IDAT":
            data += body
        pos += 12 + size
    return data


def _roundtrip(image: Image.Image) -> bytes:
    png = encode_png(image)
    zlib.decompress(_idat(png))  # strict: the Adler-32 of the spliced zero rows must be right
    with Image.open(io.BytesIO(png)) as back:
        assert back.mode == image.mode and back.size == image.size
        assert back.tobytes() == image.tobytes()
    return png


def _screen(size: tuple[int, int] = (1080, 2400)) -> Image.Image:
    """A UI-like picture: flat background, bars and text, so most rows repeat the row above."""
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0], 90), fill=(30, 30, 30))
    for top in range(200, size[1] - 200, 310):
        draw.rectangle((60, top, size[0] - 60, top + 180), fill=(225, 235, 250), outline=(120, 120, 200), width=3)
        draw.text((90, top + 60), f"Row {top}", fill=(20, 20, 20))
    return image


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L"])
def test_the_png_writer_keeps_every_pixel(mode: str) -> None:
    _roundtrip(_screen().convert(mode))
    _roundtrip(Image.new(mode, (1, 1)))
    _roundtrip(Image.new(mode, (1080, 2400)))  # all black: one long run of repeated rows


def test_runs_of_repeated_rows_of_every_length_and_across_bands() -> None:
    rng = random.Random(7)
    for _ in range(60):
        width, height = rng.randint(1, 30), rng.randint(1, 3 * BAND_ROWS + 5)
        image = Image.new("RGB", (width, height))
        row = 0
        while row < height:
            run = rng.choice([1, 2, MIN_ZERO_RUN - 1, MIN_ZERO_RUN, MIN_ZERO_RUN + 1, BAND_ROWS, 2 * BAND_ROWS])
            colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            for y in range(row, min(height, row + run)):
                for x in range(width):
                    image.putpixel((x, y), colour if x % 3 else (colour[0] ^ 255, 0, 0))
            row += run
        _roundtrip(image)


def test_a_ui_screen_is_smaller_than_pillows_default_png(corpus: Path) -> None:
    for path in sorted(corpus.glob("*.png")):
        with Image.open(path) as opened:
            image = opened.convert("RGB")
        ours = _roundtrip(image)
        theirs = io.BytesIO()
        image.save(theirs, format="PNG")  # Pillow's default: zlib level 6, a filter per row
        assert len(ours) < 1.5 * len(theirs.getvalue()), path.name  # a cheaper format, not a much bigger one


def test_shrink_halves_then_resamples_and_never_copies_for_nothing() -> None:
    image = _screen()
    assert shrink(image, image.size) is image
    assert shrink(image, (512, 1139)).size == (512, 1139)
    assert shrink(image, (270, 600)).tobytes() == image.reduce(2).reduce(2).tobytes()  # exact halvings only


def test_a_black_screenshot_is_blank_and_a_dark_one_with_text_is_not() -> None:
    black = io.BytesIO()
    Image.new("RGB", (1080, 2400)).save(black, format="PNG")
    assert is_blank(black.getvalue())
    dark = Image.new("RGB", (1080, 2400))
    ImageDraw.Draw(dark).rectangle((100, 300, 980, 500), fill=(230, 230, 230))
    assert not is_blank(encode_png(dark))


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the decodes, the drawings and the JPEG encodes ``ScreenImages`` does."""
    calls = {"decode": 0, "marks": 0, "jpeg": 0}

    def counting(name: str, fn: object) -> object:
        def wrapper(*args: object, **kwargs: object) -> object:
            calls[name] += 1
            return fn(*args, **kwargs)  # type: ignore[operator]
        return wrapper

    monkeypatch.setattr(screen_images_module, "decode", counting("decode", screen_images_module.decode))
    monkeypatch.setattr(screen_images_module, "draw_marks", counting("marks", screen_images_module.draw_marks))
    monkeypatch.setattr(screen_images_module, "jpeg", counting("jpeg", screen_images_module.jpeg))
    return calls


def _rgb(data: bytes, kind: str = "JPEG") -> Image.Image:
    with Image.open(io.BytesIO(data)) as opened:
        assert opened.format == kind
        return opened.convert("RGB")


def test_screen_images_decode_once_and_make_each_picture_once(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen()
    png = encode_png(screen)
    ui = build_ui_state(SCREEN, observation_id="o")
    calls = _counting(monkeypatch)
    images = ScreenImages(png, ui.elements)
    assert not images.blank()
    model = images.model_image((512, 1139))
    record = images.record()
    # asked again (the next step on the same screen, the recorder): made already
    assert images.model_image((512, 1139)) is model
    again = images.record()
    assert (again.annotated, again.thumbnail, again.clean) == (record.annotated, record.thumbnail, record.clean)
    assert again.annotated is record.annotated and again.clean is record.clean
    # one decode, one drawing; JPEGs: the model's, annotated.jpg, the report's thumbnail, the clean copy
    assert calls == {"decode": 1, "marks": 1, "jpeg": 4}
    assert model.scale == pytest.approx(512 / 1080) and model.clean is None
    assert record.annotated is not None and record.thumbnail is not None and record.size == (1080, 2400)
    small, annotated = _rgb(model.data), _rgb(record.annotated)
    # annotated.jpg is the working picture: the screenshot halved, keeping ANNOTATED_SIDE on its long side
    assert annotated.size == (540, 1200) and small.size == (512, 1139)
    # the model's picture is that drawing shrunk: the marks were drawn once
    assert _mean_difference(small, shrink(annotated, (512, 1139))) < 2.0
    assert max(_rgb(record.thumbnail).size) == THUMBNAIL_SIDE
    images.release()
    assert not images.holds_pixels
    assert images.record().annotated is record.annotated and calls["decode"] == 1  # made pictures outlive the pixels


@pytest.mark.parametrize(("size", "factor"), [((1080, 2400), 2), ((2400, 1080), 2), ((720, 1600), 1),
                                              ((1440, 3200), 2), ((1200, 1200), 1), ((2560, 3840), 3)])
def test_the_working_picture_is_the_largest_whole_reduction_keeping_the_annotated_side(
        size: tuple[int, int], factor: int) -> None:
    assert working_factor(size) == factor
    assert max(size) // factor >= ANNOTATED_SIDE


def test_a_model_picture_larger_than_the_working_picture_is_drawn_from_full_size_marks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen()
    calls = _counting(monkeypatch)
    images = ScreenImages(encode_png(screen), build_ui_state(SCREEN, observation_id="o").elements)
    large = _rgb(images.model_image((1024, 2276)).data)
    assert large.size == (1024, 2276) and calls == {"decode": 1, "marks": 1, "jpeg": 1}
    clean = shrink(screen, (1024, 2276))
    assert _mean_difference(large, clean) > 1.0  # marked
    # the full-size drawing did not mark the screenshot: the record's clean copy has no marks
    assert _mean_difference(_rgb(images.record().clean), screen.reduce(4)) < 1.0


def test_the_clean_copy_is_the_screenshot_before_the_marks_reduced_by_a_whole_factor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen()
    calls = _counting(monkeypatch)
    images = ScreenImages(encode_png(screen), build_ui_state(SCREEN, observation_id="o").elements)
    images.model_image((512, 1139))  # draws the marks
    clean = images.record(annotated=False)
    assert clean.annotated is None and clean.thumbnail is None
    assert calls["decode"] == 1  # not decoded again
    small = _rgb(clean.clean)
    assert small.size == (270, 600)  # 1080x2400 reduced 4x: >= CLEAN_SIDE
    marked = _rgb(images.model_image((512, 1139)).data)
    assert _mean_difference(small, screen.reduce(4)) < 1.0 < _mean_difference(marked.resize((270, 600)),
                                                                              screen.reduce(4))


def _mean_difference(a: Image.Image, b: Image.Image) -> float:
    """The mean absolute difference of two same-sized pictures' channels (0..255)."""
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 3


def test_the_clean_picture_is_the_screenshot_without_marks() -> None:
    screen = _screen()
    images = ScreenImages(encode_png(screen), build_ui_state(SCREEN, observation_id="o").elements)
    model = images.model_image((512, 1139), clean=True)
    assert model.clean is not None
    clean, marked = _rgb(model.clean), _rgb(model.data)
    expected = shrink(screen, (512, 1139))
    assert _mean_difference(clean, expected) < 1.0 < _mean_difference(marked, expected)
    unmarked = ScreenImages(encode_png(screen), []).model_image((2000, 3000), marks=False)
    assert unmarked.scale == 1.0 and _rgb(unmarked.data).size == screen.size  # never enlarged
    assert _mean_difference(_rgb(unmarked.data), screen) < 1.0
