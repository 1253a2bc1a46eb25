"""What the runtime reads off a screenshot without decoding all of it: its size, and whether it is
the black image Android hands out for a secure screen."""

from __future__ import annotations

import io
import struct

from PIL import Image

from ufo_mobile.errors import UIParseError


def is_blank(png: bytes) -> bool:
    """True for an all-black screenshot: what Android returns for a screen with FLAG_SECURE (banking
    apps, password entry, DRM video). Checked on a thumbnail: a few milliseconds."""
    if len(png) > 256 * 1024:  # a black screen compresses to a few kB; a real one never does
        return False
    with Image.open(io.BytesIO(png)) as image:
        small = image.convert("L").resize((32, 72))
    return max(small.getextrema()) <= 6  # type: ignore[operator]


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG header, without decoding the image."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n":
        raise UIParseError("the screenshot is not a PNG image")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)
