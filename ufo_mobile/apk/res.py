"""The pieces shared by Android's binary XML and resource table: chunks, string pools, typed values.

Both files are trees of chunks (``ResChunk_header``: type u16, header size u16, total size u32, little
endian). Every offset and count read here is checked against the enclosing chunk before it is used, so
a hostile file gives one ``ApkError`` and never an ``IndexError`` or a huge allocation.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ufo_mobile.errors import ApkError

STRING_POOL = 0x0001
UTF8_FLAG = 0x100

# Res_value data types that matter here.
TYPE_NULL, TYPE_REFERENCE, TYPE_STRING, TYPE_DYNAMIC_REFERENCE = 0x00, 0x01, 0x03, 0x07
TYPE_INT_DEC, TYPE_INT_HEX, TYPE_INT_BOOLEAN = 0x10, 0x11, 0x12
REFERENCE_TYPES = frozenset({TYPE_REFERENCE, TYPE_DYNAMIC_REFERENCE})
INT_TYPES = frozenset({TYPE_INT_DEC, TYPE_INT_HEX, TYPE_INT_BOOLEAN})

_HEADER = struct.Struct("<HHI")
_POOL = struct.Struct("<IIIII")  # string count, style count, flags, strings start, styles start


def u16(buf: bytes, pos: int) -> int:
    return int.from_bytes(buf[pos:pos + 2], "little")


def u32(buf: bytes, pos: int) -> int:
    return int.from_bytes(buf[pos:pos + 4], "little")


@dataclass(frozen=True)
class Chunk:
    """A chunk of ``buf``: absolute ``offset``, ``header_size`` and ``size`` (both from ``offset``)."""

    type: int
    header_size: int
    size: int
    offset: int

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def body(self) -> int:
        return self.offset + self.header_size


def chunk_at(buf: bytes, offset: int, end: int, what: str, *, min_header: int = 8) -> Chunk:
    """The chunk at ``offset``, which must lie within ``end`` and have a header of ``min_header`` bytes."""
    if offset + _HEADER.size > end:
        raise ApkError(f"{what}: truncated chunk header at offset {offset}")
    ctype, header_size, size = _HEADER.unpack_from(buf, offset)
    if header_size < min_header or size < header_size:
        raise ApkError(f"{what}: malformed chunk {ctype:#06x} at offset {offset} "
                       f"(header {header_size} bytes, size {size})")
    if offset + size > end:
        raise ApkError(f"{what}: chunk {ctype:#06x} at offset {offset} ({size} bytes) runs past its parent")
    return Chunk(ctype, header_size, size, offset)


def children(buf: bytes, parent: Chunk, what: str) -> Iterator[Chunk]:
    """The chunks inside ``parent``, after its header."""
    pos = parent.body
    while pos + _HEADER.size <= parent.end:
        child = chunk_at(buf, pos, parent.end, what)
        yield child
        pos = child.end


def root_chunk(buf: bytes, expected: int, what: str, *, min_header: int = 8) -> Chunk:
    """The chunk that must fill the start of ``buf``; trailing bytes are allowed, as Android allows them."""
    if len(buf) < _HEADER.size:
        raise ApkError(f"{what}: {len(buf)} bytes is too short")
    ctype = u16(buf, 0)
    if ctype != expected:
        raise ApkError(f"{what}: not in Android's binary format (chunk type {ctype:#06x} where {expected:#06x} "
                       f"belongs, first bytes {buf[:4].hex()})")
    return chunk_at(buf, 0, len(buf), what, min_header=min_header)


class StringPool:
    """A ``ResStringPool`` chunk, strings decoded on demand (a resource table can hold 100 000 of them)."""

    def __init__(self, buf: bytes, chunk: Chunk, what: str) -> None:
        if chunk.type != STRING_POOL or chunk.header_size < 8 + _POOL.size:
            raise ApkError(f"{what}: expected a string pool at offset {chunk.offset}")
        count, styles, flags, strings_start, styles_start = _POOL.unpack_from(buf, chunk.offset + 8)
        index_end = chunk.header_size + 4 * (count + styles)
        if index_end > chunk.size or (count and not index_end <= strings_start < chunk.size):
            raise ApkError(f"{what}: string pool of {count} strings does not fit its {chunk.size} bytes")
        self._buf = buf
        self._what = what
        self._count = int(count)
        self._utf8 = bool(flags & UTF8_FLAG)
        self._index = chunk.body
        self._start = chunk.offset + strings_start
        data_end = styles_start if styles and strings_start < styles_start <= chunk.size else chunk.size
        self._end = chunk.offset + data_end

    def __len__(self) -> int:
        return self._count

    @property
    def utf8(self) -> bool:
        return self._utf8

    def get(self, index: int) -> str:
        if not 0 <= index < self._count:
            raise ApkError(f"{self._what}: string index {index} outside a pool of {self._count}")
        pos = self._start + u32(self._buf, self._index + 4 * index)
        if pos >= self._end:
            raise ApkError(f"{self._what}: string {index} starts outside its pool")
        return self._utf8_at(pos, index) if self._utf8 else self._utf16_at(pos, index)

    def _utf8_at(self, pos: int, index: int) -> str:
        _, pos = self._length8(pos, index)  # length in UTF-16 units, unused
        nbytes, pos = self._length8(pos, index)
        if pos + nbytes > self._end:
            raise ApkError(f"{self._what}: string {index} ({nbytes} bytes) runs past its pool")
        return self._buf[pos:pos + nbytes].decode("utf-8", "replace")

    def _utf16_at(self, pos: int, index: int) -> str:
        if pos + 2 > self._end:
            raise ApkError(f"{self._what}: string {index} runs past its pool")
        units = u16(self._buf, pos)
        pos += 2
        if units & 0x8000:
            if pos + 2 > self._end:
                raise ApkError(f"{self._what}: string {index} runs past its pool")
            units = ((units & 0x7FFF) << 16) | u16(self._buf, pos)
            pos += 2
        if pos + 2 * units > self._end:
            raise ApkError(f"{self._what}: string {index} ({units} UTF-16 units) runs past its pool")
        return self._buf[pos:pos + 2 * units].decode("utf-16-le", "replace")

    def _length8(self, pos: int, index: int) -> tuple[int, int]:
        if pos >= self._end:
            raise ApkError(f"{self._what}: string {index} runs past its pool")
        first = self._buf[pos]
        if not first & 0x80:
            return first, pos + 1
        if pos + 1 >= self._end:
            raise ApkError(f"{self._what}: string {index} runs past its pool")
        return ((first & 0x7F) << 8) | self._buf[pos + 1], pos + 2


@dataclass(frozen=True)
class Value:
    """A ``Res_value``: its data type and 32-bit data."""

    type: int
    data: int

    @classmethod
    def at(cls, buf: bytes, pos: int, end: int, what: str) -> Value:
        if pos + 8 > end:
            raise ApkError(f"{what}: value at offset {pos} runs past its chunk")
        return cls(buf[pos + 3], u32(buf, pos + 4))
