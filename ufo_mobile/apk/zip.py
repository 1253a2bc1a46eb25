"""Reading a few entries of a zip (an APK) through ``read_range(offset, length)``, never the whole file.

The end-of-central-directory record sits in the last 64 KiB of a zip; it gives the offset and size of
the central directory, which gives each entry's sizes, CRC and local header offset. So one entry costs
the file size, the tail, the rest of the central directory when it is larger (apps with thousands of
entries), and that entry's own bytes.

Every size read from the file is checked against the file, the central directory and a caller's limit
before anything is read or inflated: a hostile archive cannot make us read or inflate more than the
limits. Zip64, split archives and encrypted entries are refused with a clear error (APKs that the
build tools write are none of these).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ufo_mobile.errors import ApkError
from ufo_mobile.safe_text import printable

ReadRange = Callable[[int, int], bytes]
"""``read_range(offset, length)`` returns exactly ``length`` bytes of the file from ``offset``."""

MAX_CENTRAL_DIRECTORY = 16 * 1024 * 1024  # 65535 entries with long names still fit

_EOCD = struct.Struct("<IHHHHIIH")  # signature, disk, cd disk, entries here, entries, cd size, cd offset, comment
_CDH = struct.Struct("<IHHHHHHIIIHHHHHII")  # central directory file header, 46 bytes
_LFH = struct.Struct("<IHHHHHIIIHH")  # local file header, 30 bytes
_EOCD_SIG, _CDH_SIG, _LFH_SIG, _ZIP64_LOCATOR_SIG = 0x06054B50, 0x02014B50, 0x04034B50, 0x07064B50
_TAIL = 0xFFFF + _EOCD.size  # the longest comment plus the record
_LOCAL_SLACK = 64  # local extra fields (alignment padding) are usually this short or shorter
STORED, DEFLATED = 0, 8


@dataclass(frozen=True)
class ZipEntry:
    """One central directory record."""

    name: str
    method: int
    flags: int
    crc32: int
    compressed_size: int
    size: int
    header_offset: int
    raw_name: bytes


@dataclass(frozen=True)
class CentralDirectory:
    """The entries of an archive by name, and where the central directory starts (entry data ends)."""

    file_size: int
    offset: int
    entries: Mapping[str, ZipEntry]


def shown(name: str) -> str:
    """An entry name from a hostile file, made safe and short for a one-line message."""
    return printable(name, 80)


def read_exact(read_range: ReadRange, offset: int, length: int) -> bytes:
    """``read_range`` with the answer's length checked (a short read is a truncated file or transport)."""
    data = bytes(read_range(offset, length))
    if len(data) != length:
        raise ApkError(f"short read at offset {offset}: wanted {length} bytes, got {len(data)}")
    return data


def _find_eocd(tail: bytes) -> int:
    """The last end record whose comment runs exactly to the end of the file."""
    pos = tail.rfind(b"PK\x05\x06")
    while pos >= 0:
        if pos + _EOCD.size <= len(tail):
            comment_len = struct.unpack_from("<H", tail, pos + 20)[0]
            if pos + _EOCD.size + comment_len == len(tail):
                return pos
        pos = tail.rfind(b"PK\x05\x06", 0, pos)
    raise ApkError("not a zip archive: no end of central directory record")


def read_central_directory(read_range: ReadRange, size: int) -> CentralDirectory:
    """Read and check the central directory of a zip of ``size`` bytes."""
    if size < _EOCD.size:
        raise ApkError(f"not a zip archive: {size} bytes is too short")
    tail_start = max(0, size - _TAIL)
    tail = read_exact(read_range, tail_start, size - tail_start)
    pos = _find_eocd(tail)
    _, disk, cd_disk, here, total, cd_size, cd_offset, _ = _EOCD.unpack_from(tail, pos)
    zip64_locator = pos >= 20 and struct.unpack_from("<I", tail, pos - 20)[0] == _ZIP64_LOCATOR_SIG
    if zip64_locator or 0xFFFF in (here, total) or 0xFFFFFFFF in (cd_size, cd_offset):
        raise ApkError("zip64 archives are not supported")
    if disk or cd_disk or here != total:
        raise ApkError("split (multi-disk) zip archives are not supported")
    eocd_offset = tail_start + pos
    if cd_offset + cd_size > eocd_offset:
        raise ApkError(f"central directory ({cd_size} bytes at {cd_offset}) overruns the end record at {eocd_offset}")
    if cd_size > MAX_CENTRAL_DIRECTORY:
        raise ApkError(f"central directory of {cd_size} bytes is over the limit of {MAX_CENTRAL_DIRECTORY}")
    if cd_size < total * _CDH.size:
        raise ApkError(f"central directory of {cd_size} bytes cannot hold {total} entries")
    if cd_offset >= tail_start:
        cd = tail[cd_offset - tail_start:cd_offset - tail_start + cd_size]
    else:
        cd = read_exact(read_range, cd_offset, cd_size)
    return CentralDirectory(size, cd_offset, _parse_entries(cd, total, cd_offset))


def _parse_entries(cd: bytes, total: int, cd_offset: int) -> dict[str, ZipEntry]:
    entries: dict[str, ZipEntry] = {}
    pos = 0
    for index in range(total):
        if pos + _CDH.size > len(cd):
            raise ApkError(f"central directory ends inside record {index} of {total}")
        (sig, _made, _need, flags, method, _time, _date, crc, csize, usize, name_len, extra_len, comment_len,
         _disk, _internal, _external, offset) = _CDH.unpack_from(cd, pos)
        if sig != _CDH_SIG:
            raise ApkError(f"bad central directory record {index} (signature {sig:#010x})")
        end = pos + _CDH.size + name_len + extra_len + comment_len
        if end > len(cd):
            raise ApkError(f"central directory record {index} runs past the central directory")
        raw = cd[pos + _CDH.size:pos + _CDH.size + name_len]
        name = raw.decode("utf-8", "surrogateescape")
        if 0xFFFFFFFF in (csize, usize, offset):
            raise ApkError(f"zip64 entry {shown(name)} is not supported")
        if offset + _LFH.size + name_len > cd_offset:
            raise ApkError(f"entry {shown(name)} starts at {offset}, past the entry data")
        if name in entries:
            raise ApkError(f"duplicate entry {shown(name)}")
        entries[name] = ZipEntry(name, method, flags, crc, csize, usize, offset, raw)
        pos = end
    return entries


def read_entry(read_range: ReadRange, directory: CentralDirectory, name: str, *, limit: int) -> bytes:
    """The uncompressed bytes of entry ``name`` (stored or deflated), at most ``limit`` bytes, CRC checked."""
    entry = directory.entries.get(name)
    if entry is None:
        raise ApkError(f"{shown(name)} is missing from the archive")
    what = shown(name)
    if entry.flags & 0x41:
        raise ApkError(f"{what} is encrypted")
    if entry.method not in (STORED, DEFLATED):
        raise ApkError(f"{what} uses compression method {entry.method} (only stored and deflated are read)")
    if entry.size > limit:
        raise ApkError(f"{what} declares {entry.size} bytes, over the limit of {limit}")
    if entry.compressed_size > limit + (limit >> 6) + 64:
        raise ApkError(f"{what} declares {entry.compressed_size} compressed bytes, over the limit of {limit}")
    if entry.method == STORED and entry.compressed_size != entry.size:
        raise ApkError(f"stored entry {what} holds {entry.compressed_size} bytes but declares {entry.size}")
    data = _read_data(read_range, directory, entry)
    out = data if entry.method == STORED else _inflate(data, entry.size, what)
    if zlib.crc32(out) != entry.crc32:
        raise ApkError(f"{what} fails its CRC check (a corrupt file or a mangled transfer)")
    return out


def _read_data(read_range: ReadRange, directory: CentralDirectory, entry: ZipEntry) -> bytes:
    """Local header and data in one read when the local extra field is short, as it nearly always is."""
    what = shown(entry.name)
    start = entry.header_offset
    want = min(_LFH.size + len(entry.raw_name) + _LOCAL_SLACK + entry.compressed_size, directory.offset - start)
    head = read_exact(read_range, start, want)
    if len(head) < _LFH.size:
        raise ApkError(f"local header of {what} runs into the central directory")
    sig, _need, flags, method, _time, _date, crc, csize, usize, name_len, extra_len = _LFH.unpack_from(head)
    if sig != _LFH_SIG:
        raise ApkError(f"bad local header for {what} at offset {start} (signature {sig:#010x})")
    if head[_LFH.size:_LFH.size + name_len] != entry.raw_name or method != entry.method:
        raise ApkError(f"local header at offset {start} disagrees with the central directory entry {what}")
    if not flags & 0x08 and (crc, csize, usize) != (entry.crc32, entry.compressed_size, entry.size):
        raise ApkError(f"local header sizes or CRC of {what} disagree with the central directory")
    data_start = _LFH.size + name_len + extra_len
    data_end = data_start + entry.compressed_size
    if start + data_end > directory.offset:
        raise ApkError(f"data of {what} ({entry.compressed_size} bytes) overruns the central directory")
    if data_end <= len(head):
        return head[data_start:data_end]
    have = max(0, len(head) - data_start)
    return head[data_start:data_start + have] + read_exact(read_range, start + data_start + have,
                                                           entry.compressed_size - have)


def _inflate(data: bytes, size: int, what: str) -> bytes:
    """Raw deflate, never producing more than ``size`` + 1 bytes whatever the stream says."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, size + 1)
    except zlib.error as exc:
        raise ApkError(f"{what} holds corrupt deflate data ({exc})") from None
    if len(out) > size or (inflater.unconsumed_tail and not inflater.eof):
        raise ApkError(f"{what} inflates past its declared {size} bytes")
    if not inflater.eof:
        raise ApkError(f"{what} holds a truncated deflate stream ({len(out)} of {size} bytes)")
    if len(out) != size:
        raise ApkError(f"{what} inflates to {len(out)} bytes, not the declared {size}")
    return out
