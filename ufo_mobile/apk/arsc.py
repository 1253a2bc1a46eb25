"""``resources.arsc``: resolving one string resource id, choosing among its configurations.

A resource id is ``0xPPTTEEEE``: package, type (1-based) and entry. The table holds a global string
pool for values and one chunk per package; a package holds, for each type, one ``ResTable_type``
chunk per configuration (default, ``fr``, ``en-rGB``, ``night``, ``v21``...), each indexing its entries
densely (32- or 16-bit offsets) or sparsely. References to other resources are followed a few steps.

Which configuration: the default one (no qualifier at all), else one without a locale, else the
preferred locale (exact region, then no region, then any region), else the first one in the file.
"""

from __future__ import annotations

from dataclasses import dataclass

from ufo_mobile.apk.res import (
    REFERENCE_TYPES,
    STRING_POOL,
    TYPE_STRING,
    Chunk,
    StringPool,
    Value,
    children,
    root_chunk,
    u16,
    u32,
)
from ufo_mobile.errors import ApkError

TABLE, TABLE_PACKAGE, TABLE_TYPE = 0x0002, 0x0200, 0x0201
FLAG_SPARSE, FLAG_OFFSET16 = 0x01, 0x02
ENTRY_COMPLEX, ENTRY_COMPACT = 0x0001, 0x0008
MAX_REFERENCE_DEPTH = 8
_TYPE_HEADER = 20  # chunk header, id, flags, reserved, entry count, entries start; the config follows
_PACKAGE_HEADER = 284
_WHAT = "resources.arsc"


@dataclass(frozen=True)
class Locale:
    """A language (``en``) and optional region (``GB``), as written in a configuration or asked for."""

    language: str = ""
    region: str = ""

    @classmethod
    def parse(cls, text: str) -> Locale:
        """``en``, ``en-GB``, ``en_GB`` or Android's ``en-rGB``."""
        parts = text.replace("_", "-").split("-")
        region = parts[1] if len(parts) > 1 else ""
        if len(region) == 3 and region[0] == "r":
            region = region[1:]
        return cls(parts[0].lower(), region.upper())


def _unpack(code: bytes, base: str) -> str:
    """A language or region field: two ASCII letters, or three packed into 15 bits (high bit set)."""
    if not code[0]:
        return ""
    if code[0] & 0x80:
        letters = (code[1] & 0x1F, ((code[1] & 0xE0) >> 5) | ((code[0] & 0x03) << 3), (code[0] & 0x7C) >> 2)
        return "".join(chr(ord(base) + n) for n in letters)
    return code.decode("latin-1").rstrip("\0")


class _Table:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        root = root_chunk(buf, TABLE, _WHAT, min_header=12)
        pool: StringPool | None = None
        self.packages: dict[int, Chunk] = {}
        for chunk in children(buf, root, _WHAT):
            if chunk.type == STRING_POOL and pool is None:
                pool = StringPool(buf, chunk, _WHAT)
            elif chunk.type == TABLE_PACKAGE:
                if chunk.header_size < _PACKAGE_HEADER:
                    raise ApkError(f"{_WHAT}: package header of {chunk.header_size} bytes is too short")
                self.packages.setdefault(u32(buf, chunk.offset + 8), chunk)
        if pool is None:
            raise ApkError(f"{_WHAT}: no global string pool")
        self.pool = pool

    def string(self, res_id: int, prefer: Locale) -> str:
        current = res_id
        for _ in range(MAX_REFERENCE_DEPTH):
            value = self.value(current, prefer)
            if value.type == TYPE_STRING:
                return self.pool.get(value.data)
            if value.type not in REFERENCE_TYPES or not value.data:
                raise ApkError(f"{_WHAT}: resource {current:#010x} is not a string (value type {value.type:#04x})")
            current = value.data
        raise ApkError(f"{_WHAT}: resource {res_id:#010x} starts a chain of over {MAX_REFERENCE_DEPTH} references")

    def value(self, res_id: int, prefer: Locale) -> Value:
        package_id, type_id, index = res_id >> 24, (res_id >> 16) & 0xFF, res_id & 0xFFFF
        package = self.packages.get(package_id)
        if package is None:
            owner = " (a framework resource)" if package_id == 0x01 else ""
            raise ApkError(f"{_WHAT}: no package {package_id:#04x} for resource {res_id:#010x}{owner}")
        best: tuple[int, Value] | None = None
        for chunk in children(self.buf, package, _WHAT):
            if chunk.type != TABLE_TYPE or chunk.header_size < _TYPE_HEADER + 4:
                continue
            if self.buf[chunk.offset + 8] != type_id:
                continue
            offset = self._entry_offset(chunk, index)
            if offset is None:
                continue
            rank = self._rank(chunk, prefer)
            if best is None or rank < best[0]:
                best = (rank, self._entry_value(chunk, offset, res_id))
        if best is None:
            raise ApkError(f"{_WHAT}: resource {res_id:#010x} is not defined")
        return best[1]

    def _entry_offset(self, chunk: Chunk, index: int) -> int | None:
        """The entry's offset from the chunk start, or None when this configuration leaves it out."""
        buf, base = self.buf, chunk.body
        flags, count, entries = buf[chunk.offset + 9], u32(buf, chunk.offset + 12), u32(buf, chunk.offset + 16)
        width = 4 if flags & FLAG_SPARSE or not flags & FLAG_OFFSET16 else 2
        if base + width * count > chunk.end or entries > chunk.size:
            raise ApkError(f"{_WHAT}: type chunk at offset {chunk.offset} indexes {count} entries it cannot hold")
        if flags & FLAG_SPARSE:
            found = self._sparse_find(base, count, index)
            return None if found is None else entries + 4 * found
        if index >= count:
            return None
        if width == 2:
            short = u16(buf, base + 2 * index)
            return None if short == 0xFFFF else entries + 4 * short
        offset = u32(buf, base + 4 * index)
        return None if offset == 0xFFFFFFFF else entries + offset

    def _sparse_find(self, base: int, count: int, index: int) -> int | None:
        """Sparse entries are (index u16, offset/4 u16) pairs sorted by index: binary search."""
        low, high = 0, count
        while low < high:
            mid = (low + high) // 2
            key = u16(self.buf, base + 4 * mid)
            if key == index:
                return u16(self.buf, base + 4 * mid + 2)
            low, high = (mid + 1, high) if key < index else (low, mid)
        return None

    def _entry_value(self, chunk: Chunk, offset: int, res_id: int) -> Value:
        pos = chunk.offset + offset
        if pos + 8 > chunk.end:
            raise ApkError(f"{_WHAT}: entry of resource {res_id:#010x} lies outside its type chunk")
        size, flags = u16(self.buf, pos), u16(self.buf, pos + 2)
        if flags & ENTRY_COMPACT:
            return Value(flags >> 8, u32(self.buf, pos + 4))
        if flags & ENTRY_COMPLEX:
            raise ApkError(f"{_WHAT}: resource {res_id:#010x} is a bag (array, plural or style), not a string")
        if size < 8:
            raise ApkError(f"{_WHAT}: entry of resource {res_id:#010x} has a {size}-byte header")
        return Value.at(self.buf, pos + size, chunk.end, _WHAT)

    def _rank(self, chunk: Chunk, prefer: Locale) -> int:
        """Lower is better; see the module docstring."""
        config = chunk.offset + _TYPE_HEADER
        size = u32(self.buf, config)
        if size < 4 or _TYPE_HEADER + size > chunk.header_size:
            raise ApkError(f"{_WHAT}: configuration of {size} bytes does not fit its type chunk header")
        if not any(self.buf[config + 4:config + size]):
            return 0
        language = _unpack(self.buf[config + 8:config + 10], "a") if size >= 12 else ""
        region = _unpack(self.buf[config + 10:config + 12], "0") if size >= 12 else ""
        if not language:
            return 1
        if language != prefer.language:
            return 5
        if region == prefer.region:
            return 2
        return 3 if not region else 4


def resolve_string(arsc: bytes, res_id: int, prefer_locale: str = "en") -> str:
    """The string that resource ``res_id`` names in the resource table ``arsc``."""
    return _Table(arsc).string(res_id, Locale.parse(prefer_locale))
