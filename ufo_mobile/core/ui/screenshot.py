"""What the runtime reads off a screenshot: its size (from the header alone), its pixels, whether it
is the black image Android hands out for a secure screen, and smaller copies of it."""

from __future__ import annotations

import io
import struct

from PIL import Image, UnidentifiedImageError

from ufo_mobile.errors import UIParseError

BLANK_MAX_BYTES = 256 * 1024  # a black screen compresses to a few kB; a real one never gets under this
_THUMBNAIL = (32, 72)


def decode(png: bytes) -> Image.Image:
    """The screenshot's pixels, as RGB. Raises ``UIParseError`` when it is not a readable image."""
    try:
        image = Image.open(io.BytesIO(png))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise UIParseError(f"the screenshot is not a readable image: {exc}") from exc
    return image if image.mode == "RGB" else image.convert("RGB")


def shrink(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """``image`` resized down to exactly ``size``: halved (``Image.reduce(2)``, a 2x2 box average:
    cheap) while it is at least twice as large, then a box resample for the rest (less than 2x). A
    fraction of what a Lanczos resample of a phone-sized screenshot costs, and free of its ringing
    around text. Returns ``image`` itself when it already has that size."""
    width, height = max(1, size[0]), max(1, size[1])
    while image.width >= 2 * width and image.height >= 2 * height:
        image = image.reduce(2)
    if image.size == (width, height):
        return image
    return image.resize((width, height), Image.Resampling.BOX)


def is_blank_image(image: Image.Image) -> bool:
    """True for an all-black picture; judged on a 32x72 grey thumbnail (a box average first)."""
    factor = min(image.width // _THUMBNAIL[0], image.height // _THUMBNAIL[1])
    small = image.reduce(factor) if factor >= 2 else image
    thumbnail = small.convert("L").resize(_THUMBNAIL)
    return max(thumbnail.getextrema()) <= 6  # type: ignore[operator]


def is_blank(png: bytes) -> bool:
    """True for an all-black screenshot: what Android returns for a screen with FLAG_SECURE (banking
    apps, password entry, DRM video). Checked on a thumbnail: a few milliseconds."""
    if len(png) > BLANK_MAX_BYTES:
        return False
    return is_blank_image(decode(png))


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG header, without decoding the image."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n":
        raise UIParseError("the screenshot is not a PNG image")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)
