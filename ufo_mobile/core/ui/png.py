"""A fast PNG writer for screenshots.

Pillow's PNG encoder picks a filter for every row by trying all five (libpng's heuristic), which
costs more than the compression itself on a phone-sized screenshot: about 25 ms for 1080x2400 at
any zlib level. Screens are mostly flat colour and repeated rows, so one filter for every row does
as well: ``Up`` (each byte minus the one above it, computed with numpy) turns repeated rows and flat
areas into runs of zeros, and zlib at level 1 compresses those about as small as Pillow does at
level 3.

Most rows of a UI screenshot repeat the row above (backgrounds, margins, the space between lines of
text), and zlib spends most of its time on those all-zero filtered rows. So a run of at least
``MIN_ZERO_RUN`` of them is not compressed again: the compressed form of N zero rows (made once per
width and N, for powers of two) is spliced into the stream after a full flush, which is byte-aligned
and forgets the history, so nothing that follows refers back across it; the Adler-32 checksum of
the zeros is worked out arithmetically. The image is filtered in bands of rows, so that no buffer of
the whole image is made (fresh multi-megabyte buffers cost page faults: system time comparable to
the compression). The pixels are exactly the image's: any PNG decoder reads back the same values.

zlib runs with its run-length strategy (``Z_RLE``: matches only at distance 1, no hash search): after
the Up filter a screenshot's redundancy is runs of equal bytes, so on the three real phone
screenshots (``bench/images.py``) it is about 0.9x the CPU of the default strategy at the same
level and 0.9x the size (on the simulated phone's flat screens, 1.1x the CPU and 0.8x the size).

Measured against the libraries in the same run (``bench/images.py``: CPU summed over the three real
screenshots, each marked full size): this writer 105 ms (2,771 KiB) before the run-length strategy;
Pillow's PNG at zlib level 1 221 ms (2,708 KiB) and at level 6 621 ms; OpenCV's PNG at level 1
216 ms (2,714 KiB) and at level 3 291 ms. On the simulated screen: this writer 6 ms, Pillow level 1
25 ms, OpenCV level 1 46 ms. Neither library lets its caller fix the row filter, which is where
they lose, so this writer stays.
"""

from __future__ import annotations

import functools
import struct
import zlib

import numpy as np
from PIL import Image

SIGNATURE = b"\x89PNG\r\n\x1a\n"
LEVEL = 1  # zlib level: the fast end; the Up filter does the rest
STRATEGY = zlib.Z_RLE  # runs of equal bytes only: what the Up filter leaves of a screen
BAND_ROWS = 128
MIN_ZERO_RUN = 8  # shorter runs of repeated rows are compressed with their neighbours
_COLOR_TYPES = {"L": 0, "RGB": 2, "RGBA": 6}  # PNG colour types, 8 bits per sample
_UP = 2  # the PNG filter type "Up"
_ADLER = 65521


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


@functools.lru_cache(maxsize=64)
def _zero_rows(stride: int, count: int, level: int) -> bytes:
    """Raw deflate data of ``count`` Up-filtered rows that repeat the row above (a filter byte and
    ``stride`` zeros each), ending in a full flush: byte-aligned, self-contained, not final."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 8, STRATEGY)
    return compressor.compress((bytes([_UP]) + bytes(stride)) * count) + compressor.flush(zlib.Z_FULL_FLUSH)


class _Stream:
    """The IDAT zlib stream: raw deflate between a zlib header and an Adler-32 kept here."""

    def __init__(self, stride: int, level: int) -> None:
        self.stride = stride
        self.level = level
        self.parts: list[bytes] = [bytes([0x78, 0x01])]  # deflate, 32 KiB window; header checksum ok
        self._compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 8, STRATEGY)
        self._dirty = False  # data given to the compressor since its last full flush
        self._a, self._b = 1, 0  # Adler-32 of everything so far

    def data(self, lines: memoryview) -> None:
        self.parts.append(self._compressor.compress(lines))
        checksum = zlib.adler32(lines, (self._b << 16) | self._a)
        self._a, self._b = checksum & 0xFFFF, checksum >> 16
        self._dirty = True

    def zero_rows(self, count: int) -> None:
        if count < MIN_ZERO_RUN:
            self.data(memoryview((bytes([_UP]) + bytes(self.stride)) * count))
            return
        if self._dirty:  # byte-align and forget the history: nothing after this refers back
            self.parts.append(self._compressor.flush(zlib.Z_FULL_FLUSH))
            self._dirty = False
        remaining, size = count, 1
        while remaining:
            if remaining & 1:
                self.parts.append(_zero_rows(self.stride, size, self.level))
            remaining >>= 1
            size <<= 1
        # Adler-32 of ``count`` rows of [2, 0 * stride]: each adds 2 to A, then A (stride + 1) times to B
        a, n = self._a, count
        self._b = (self._b + (self.stride + 1) * (n * a + n * (n + 1))) % _ADLER
        self._a = (a + 2 * n) % _ADLER

    def finish(self) -> bytes:
        self.parts.append(self._compressor.flush(zlib.Z_FINISH))
        self.parts.append(struct.pack(">I", (self._b << 16) | self._a))
        return b"".join(self.parts)


def _write_band(stream: _Stream, lines: np.ndarray, pending: int) -> int:
    """Write one band of filtered lines: its long runs of repeated (all-zero) rows spliced, the rest
    compressed in as few pieces as possible. ``pending`` repeated rows end the bands before; returns
    how many end this one (the run may go on in the next band)."""
    changed: np.ndarray = np.asarray(lines[:, 1:].any(axis=1))  # rows that differ from the one above
    count = len(changed)
    starts = [0, *(np.flatnonzero(changed[1:] != changed[:-1]) + 1).tolist()]  # where runs begin
    piece = -1  # start of the rows to compress in one piece (-1: none yet)
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else count
        if changed[start]:
            if pending:  # a run of repeated rows from the bands before ends here
                stream.zero_rows(pending)
                pending = 0
            if piece < 0:
                piece = start
        elif end == count:  # the run may go on in the next band: decide there
            if piece >= 0:
                stream.data(lines[piece:start].data)
                piece = -1
            pending += end - start
        elif start == 0 and pending:
            stream.zero_rows(pending + end)
            pending = 0
        elif end - start >= MIN_ZERO_RUN:
            if piece >= 0:
                stream.data(lines[piece:start].data)
                piece = -1
            stream.zero_rows(end - start)
        elif piece < 0:  # a short run: compressed with its neighbours
            piece = start
    if piece >= 0:
        stream.data(lines[piece:].data)
    return pending


def encode_png(image: Image.Image, *, level: int = LEVEL) -> bytes:
    """``image`` as PNG bytes (modes L, RGB and RGBA as they are; any other mode as RGB)."""
    if image.mode not in _COLOR_TYPES:
        image = image.convert("RGB")
    width, height = image.size
    stream: _Stream | None = None
    pending = 0  # repeated rows at the end of the bands so far, not yet written
    above: np.ndarray | None = None  # the last row of the band before (None: zeros, above the image)
    for top in range(0, height, BAND_ROWS):
        band = image.crop((0, top, width, min(height, top + BAND_ROWS)))
        rows = np.asarray(band, dtype=np.uint8).reshape(band.height, -1)  # one row of samples per line
        if stream is None:
            stream = _Stream(rows.shape[1], level)
        lines = np.empty((rows.shape[0], rows.shape[1] + 1), dtype=np.uint8)
        lines[:, 0] = _UP
        if above is None:
            lines[0, 1:] = rows[0]
        else:
            np.subtract(rows[0], above, out=lines[0, 1:])  # modulo 256, as PNG wants
        np.subtract(rows[1:], rows[:-1], out=lines[1:, 1:])
        above = rows[-1]
        pending = _write_band(stream, lines, pending)
    if stream is None:  # an image without rows: nothing to encode
        raise ValueError("cannot encode an empty image")
    if pending:
        stream.zero_rows(pending)
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[image.mode], 0, 0, 0)
    return b"".join((SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", stream.finish()), _chunk(b"IEND", b"")))
