"""The ``sync:`` service (file transfer, protocol version 1) over the device's in-memory file system.

The stream is a byte stream: requests are ``ID(4) LEN(u32) PATH`` and may be split across or packed
into WRTE packets in any way. Supported: STAT, LIST (DENT…DONE), RECV (DATA…DONE or FAIL),
SEND (``path,mode`` then DATA…DONE(mtime), answered OKAY or FAIL) and QUIT.
"""

from __future__ import annotations

import stat
import struct

from ufo_mobile.sim.android.devfs import FsError
from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.servers.adb.stream import AdbStream, ByteReader, StreamClosed

SYNC_DATA_MAX = 64 * 1024
MAX_PATH = 1024
_U32 = struct.Struct("<I")


class SyncFailure(Exception):
    """A request that must be answered with FAIL and end the session."""


def _fail(message: str) -> bytes:
    data = message.encode()
    return b"FAIL" + _U32.pack(len(data)) + data


async def _stat(device: DeviceState, stream: AdbStream, path: str) -> None:
    node = device.fs.stat(path)
    if node is None:
        await stream.write(b"STAT" + struct.pack("<3I", 0, 0, 0))
    else:
        await stream.write(b"STAT" + struct.pack("<3I", node.mode, node.size, node.mtime))


async def _list(device: DeviceState, stream: AdbStream, path: str) -> None:
    out = bytearray()
    try:
        entries = device.fs.listdir(path)
    except FsError:
        entries = []
    node = device.fs.stat(path)
    if node is not None and node.is_dir:
        entries = [(".", node), ("..", node), *entries]
    for name, entry in entries:
        raw = name.encode()
        out += b"DENT" + struct.pack("<4I", entry.mode, entry.size, entry.mtime, len(raw)) + raw
    out += b"DONE" + struct.pack("<4I", 0, 0, 0, 0)
    await stream.write(bytes(out))


async def _recv(device: DeviceState, stream: AdbStream, path: str) -> None:
    try:
        data = device.fs.read(path)
    except FsError as exc:
        raise SyncFailure(exc.reason) from exc
    out = bytearray()
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start:start + SYNC_DATA_MAX]
        out += b"DATA" + _U32.pack(len(chunk)) + chunk
        if len(out) >= 4 * SYNC_DATA_MAX:
            await stream.write(bytes(out))
            out.clear()
    await stream.write(bytes(out) + b"DONE" + _U32.pack(0))


async def _send(device: DeviceState, stream: AdbStream, reader: ByteReader, spec: str) -> None:
    path, _, mode_text = spec.rpartition(",")
    if not path:
        path, mode_text = spec, "33188"
    mode = int(mode_text) if mode_text.isdigit() else 0o100644
    content = bytearray()
    limit = device.limits.max_file_size
    while True:
        ident = await reader.read_exactly(4)
        (size,) = _U32.unpack(await reader.read_exactly(4))
        if ident == b"DONE":
            mtime = size
            break
        if ident != b"DATA" or size > SYNC_DATA_MAX:
            raise SyncFailure("invalid data message" if ident != b"DATA" else "oversize data message")
        content += await reader.read_exactly(size)
        if len(content) > limit:
            raise SyncFailure("File too large")
    if stat.S_ISLNK(mode):
        raise SyncFailure("symlinks are not supported")
    try:
        device.fs.write(path, bytes(content), mode=mode, mtime=mtime or None, make_parents=True)
    except FsError as exc:
        raise SyncFailure(f"{path}: {exc.reason}") from exc
    await stream.write(b"OKAY" + _U32.pack(0))


async def serve_sync(device: DeviceState, stream: AdbStream) -> None:
    """Answer sync requests until QUIT, EOF or a failure."""
    reader = ByteReader(stream, device.limits.read_timeout)
    try:
        while not await reader.at_eof():
            ident = await reader.read_exactly(4)
            (length,) = _U32.unpack(await reader.read_exactly(4))
            if ident == b"QUIT":
                return
            if length > MAX_PATH:
                raise SyncFailure("path too long")
            path = (await reader.read_exactly(length)).decode("utf-8", "replace")
            if ident == b"STAT":
                await _stat(device, stream, path)
            elif ident == b"LIST":
                await _list(device, stream, path)
            elif ident == b"RECV":
                await _recv(device, stream, path)
            elif ident == b"SEND":
                await _send(device, stream, reader, path)
            else:
                raise SyncFailure(f"unknown sync request {ident!r}")
    except SyncFailure as exc:
        await stream.write(_fail(str(exc)))
    except (EOFError, TimeoutError, StreamClosed):
        return
