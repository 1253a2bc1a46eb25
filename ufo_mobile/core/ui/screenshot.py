"""What the runtime reads off a screenshot: its size (from the header alone), its pixels, whether it
is the black image Android hands out for a secure screen, and smaller copies of it.

Phones send ``screencap -p`` PNGs with an alpha channel (8-bit RGBA), which Pillow decodes to RGBA;
the runtime wants RGB, and converting afterwards costs a second full-size image (about 10 MB for a
1080x2400 screen) and a pass over it. ``decode`` reads such a PNG's pixel data straight into an RGB
image instead, with Pillow's public ``Image.frombytes`` and its PNG (``zip``) decoder told to drop
the fourth byte of each pixel (raw mode ``RGBX``): the same pixels as opening and converting, at
0.85-0.87x its CPU and without the second image (``bench/images.py``). Anything this path does not
read exactly (another colour type or depth, interlacing, an animated PNG, a damaged file, a Pillow
that answers differently) goes the public way: ``Image.open`` then ``convert``.
"""

from __future__ import annotations

import io
import struct

from PIL import Image, UnidentifiedImageError

from ufo_mobile.errors import UIParseError

BLANK_MAX_BYTES = 256 * 1024  # a black screen compresses to a few kB; a real one never gets under this
_THUMBNAIL = (32, 72)
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RGBA_8 = (8, 6, 0, 0, 0)  # bit depth, colour type (RGBA), compression, filter method, no interlacing


def decode(png: bytes) -> Image.Image:
    """The screenshot's pixels, as RGB. Raises ``UIParseError`` when it is not a readable image."""
    image = decode_rgba_png(png)
    if image is not None:
        return image
    try:
        image = Image.open(io.BytesIO(png))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise UIParseError(f"the screenshot is not a readable image: {exc}") from exc
    return image if image.mode == "RGB" else image.convert("RGB")


def decode_rgba_png(png: bytes) -> Image.Image | None:
    """An 8-bit RGBA PNG's pixels as RGB, read without an RGBA image in between (module docstring);
    None for anything else, or when the pixel data cannot be read this way."""
    found = _rgba_pixel_data(png)
    if found is None:
        return None
    size, data = found
    try:
        image = Image.frombytes("RGB", size, data, "zip", "RGBX")
    except Exception:  # noqa: BLE001 - whatever the reason, the public way decides (and says why)
        return None
    return image if image.mode == "RGB" and image.size == size else None


def _rgba_pixel_data(png: bytes) -> tuple[tuple[int, int], bytes] | None:
    """The size and the joined IDAT data of an 8-bit RGBA, non-interlaced, single-image PNG; None
    for any other PNG, a damaged one, or one larger than Pillow opens without a warning."""
    if len(png) < 33 or png[:8] != _SIGNATURE or png[12:16] != b"IHDR":
        return None
    width, height, *layout = struct.unpack(">IIBBBBB", png[16:29])
    limit = Image.MAX_IMAGE_PIXELS
    if tuple(layout) != _RGBA_8 or not width or not height or (limit and width * height > limit):
        return None
    view, parts, position = memoryview(png), [], 33
    while position + 12 <= len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        end = position + 12 + length
        if end > len(png) or kind == b"acTL":  # cut short, or an animation: Pillow's own reading
            return None
        if kind == b"IDAT":
            parts.append(view[position + 8:end - 4])
        elif kind == b"IEND":
            return (width, height), b"".join(parts)
        position = end
    return None


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
