"""Decoding a screenshot: an 8-bit RGBA PNG (what ``screencap -p`` sends) is read straight into RGB
(``screenshot.decode_rgba_png``) with the same pixels as opening it and converting, and the pinned
Pillow takes that path; anything else, or a Pillow that answers differently, goes the public way."""

from __future__ import annotations

import io
import random
import re
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from ufo_mobile.core.ui import screenshot
from ufo_mobile.core.ui.screenshot import decode, decode_rgba_png
from ufo_mobile.errors import UIParseError

CONSTRAINTS = Path(__file__).resolve().parents[3] / "constraints.txt"


def _rgba_png(size: tuple[int, int] = (300, 640), **options: object) -> bytes:
    """A UI-like RGBA picture with noise and an alpha channel that is not all opaque, as PNG (Pillow
    picks a filter per row: every PNG filter gets used)."""
    rng = random.Random(7)
    image = Image.new("RGBA", size, (250, 250, 250, 255))
    draw = ImageDraw.Draw(image)
    for top in range(0, size[1], 37):
        draw.rectangle((10, top, size[0] - 10, top + 20), fill=(rng.randrange(256), rng.randrange(256),
                                                                rng.randrange(256), rng.randrange(256)))
        draw.text((15, top + 3), f"row {top}", fill=(0, 0, 0, 128))
    for _ in range(2000):
        image.putpixel((rng.randrange(size[0]), rng.randrange(size[1])), tuple(rng.randrange(256) for _ in range(4)))
    out = io.BytesIO()
    image.save(out, "PNG", **options)
    return out.getvalue()


def _public(png: bytes) -> Image.Image:
    """The public way: open, then convert."""
    return Image.open(io.BytesIO(png)).convert("RGB")


def _opens(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts ``Image.open`` calls made by ``decode``."""
    calls: list[int] = []
    real = screenshot.Image.open

    def counting(*args: object, **kwargs: object) -> Image.Image:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(screenshot.Image, "open", counting)
    return calls


def test_an_rgba_png_is_read_straight_into_rgb_with_the_same_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    png = _rgba_png()
    opens = _opens(monkeypatch)
    image = decode(png)
    assert image.mode == "RGB" and image.size == (300, 640)
    assert image.tobytes() == _public(png).tobytes()
    assert len(opens) == 1  # the public reading, for the comparison alone: decode opened nothing


def test_the_pinned_pillow_takes_the_direct_path() -> None:
    pinned = re.search(r"^pillow==(\S+)", CONSTRAINTS.read_text(), re.MULTILINE | re.IGNORECASE)
    assert pinned is not None, "constraints.txt pins Pillow"
    import PIL
    if PIL.__version__ != pinned.group(1):
        pytest.skip(f"Pillow {PIL.__version__} is not the pinned {pinned.group(1)}")
    assert decode_rgba_png(_rgba_png()) is not None


def test_real_screenshots_decode_to_the_same_pixels_both_ways(corpus: Path) -> None:
    shots = sorted(corpus.glob("*.png"))
    if not shots:
        pytest.skip(f"no screenshots in {corpus}")
    for shot in shots:
        png = shot.read_bytes()
        fast = decode_rgba_png(png)
        assert fast is not None, shot.name
        assert fast.tobytes() == _public(png).tobytes(), shot.name


@pytest.mark.parametrize("mode", ["RGB", "L", "P"])
def test_other_pngs_go_the_public_way_with_the_same_pixels(mode: str) -> None:
    png = _encode(_public(_rgba_png()).convert(mode))
    assert decode_rgba_png(png) is None
    assert decode(png).tobytes() == _public(png).tobytes()


def test_an_interlaced_or_animated_png_is_left_to_pillow() -> None:
    assert decode_rgba_png(_interlaced(_rgba_png())) is None
    frames = [Image.new("RGBA", (40, 40), (255, 0, 0, 255)), Image.new("RGBA", (40, 40), (0, 0, 255, 255))]
    out = io.BytesIO()
    frames[0].save(out, "PNG", save_all=True, append_images=frames[1:])
    assert decode_rgba_png(out.getvalue()) is None
    assert decode(out.getvalue()).getpixel((0, 0)) == (255, 0, 0)


def test_a_pillow_that_answers_differently_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    png = _rgba_png()

    def refusing(*args: object) -> Image.Image:
        raise ValueError("unknown raw mode")

    monkeypatch.setattr(screenshot.Image, "frombytes", refusing)
    opens = _opens(monkeypatch)
    assert decode(png).tobytes() == _public(png).tobytes()
    assert len(opens) == 2  # decode fell back to opening it; then the comparison


@pytest.mark.parametrize("cut", [40, 200, -20])
def test_a_damaged_png_is_still_an_unreadable_screenshot(cut: int) -> None:
    png = _rgba_png()
    broken = png[:cut] if cut > 0 else png[:cut] + b"\0" * 8
    with pytest.raises(UIParseError):
        decode(broken)


def _encode(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _interlaced(png: bytes) -> bytes:
    """``png`` with the interlace flag of its header set (an Adam7 PNG, as far as the header says:
    the direct path must not read it; what Pillow then makes of it does not matter here)."""
    data = bytearray(png)
    data[28] = 1
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)
