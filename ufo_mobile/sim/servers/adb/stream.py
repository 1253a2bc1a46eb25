"""One ADB stream (a "local socket" on the device) with its flow control, and a byte reader over it.

The device writes at most one WRTE at a time per stream and waits for the host's OKAY before the
next; every host WRTE is acknowledged at once and queued for the service. A host CLSE is answered
with a CLSE, as real adbd does. Every wait is bounded by ``ack_timeout`` or an explicit timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Protocol

from ufo_mobile.sim.servers.adb.protocol import A_CLSE, A_WRTE, Packet


class StreamClosed(ConnectionError):
    """The stream was closed (by either side) or its peer stopped acknowledging."""


class PacketSender(Protocol):
    def send(self, packet: Packet) -> Awaitable[None]: ...


class AdbStream:
    """The device end of one stream; ``local_id`` is ours, ``remote_id`` the host's."""

    def __init__(self, sender: PacketSender, local_id: int, remote_id: int, *, max_payload: int,
                 ack_timeout: float) -> None:
        self.local_id = local_id
        self.remote_id = remote_id
        self._sender = sender
        self._max_payload = max_payload
        self._ack_timeout = ack_timeout
        self._acked = asyncio.Event()
        self._acked.set()
        self._inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self._eof = False
        self.closed = asyncio.Event()
        self.clse_sent = False

    # -- called by the connection ---------------------------------------------------------------

    def on_ack(self) -> None:
        self._acked.set()

    def on_data(self, data: bytes) -> None:
        if not self.closed.is_set():
            self._inbox.put_nowait(data)

    def on_remote_close(self) -> None:
        self._mark_closed()

    def _mark_closed(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self._acked.set()
            self._inbox.put_nowait(b"")

    # -- used by services ---------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Send ``data`` in WRTE packets of at most max-payload bytes, one unacknowledged at a time."""
        view = memoryview(data)
        for start in range(0, len(view), self._max_payload):
            await self._wait_ack()
            self._acked.clear()
            await self._sender.send(Packet(A_WRTE, self.local_id, self.remote_id,
                                           bytes(view[start:start + self._max_payload])))

    async def _wait_ack(self) -> None:
        if self.closed.is_set():
            raise StreamClosed("stream closed")
        try:
            await asyncio.wait_for(self._acked.wait(), self._ack_timeout)
        except TimeoutError:
            await self.close()
            raise StreamClosed(f"no OKAY from the host within {self._ack_timeout:g} s") from None
        if self.closed.is_set():
            raise StreamClosed("stream closed")

    async def read(self, within: float) -> bytes:
        """The next chunk the host wrote; ``b""`` once the stream is closed (EOF).

        Raises ``TimeoutError`` when nothing arrives within ``within`` seconds.
        """
        if self._eof:
            return b""
        data = await asyncio.wait_for(self._inbox.get(), within)
        if not data:
            self._eof = True
        return data

    async def close(self) -> None:
        """Flush (bounded), then send CLSE once; the stream is closed afterwards."""
        if self.clse_sent:
            return
        if not self.closed.is_set():
            try:
                await asyncio.wait_for(self._acked.wait(), self._ack_timeout)
            except TimeoutError:
                pass
        self.clse_sent = True
        self._mark_closed()
        try:
            await self._sender.send(Packet(A_CLSE, self.local_id, self.remote_id))
        except (ConnectionError, StreamClosed):
            pass


class ByteReader:
    """Exact-length and delimited reads over the chunks of a stream (sync, HTTP are byte streams)."""

    def __init__(self, stream: AdbStream, timeout: float) -> None:
        self._stream = stream
        self._timeout = timeout
        self._buffer = bytearray()

    async def _fill(self) -> bool:
        chunk = await self._stream.read(self._timeout)
        self._buffer += chunk
        return bool(chunk)

    async def read_exactly(self, size: int) -> bytes:
        """``size`` bytes; raises ``EOFError`` if the stream ends first."""
        while len(self._buffer) < size:
            if not await self._fill():
                raise EOFError(f"stream ended after {len(self._buffer)} of {size} bytes")
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def read_until(self, separator: bytes, limit: int) -> bytes:
        """Bytes up to and including ``separator``; ``EOFError`` at EOF, ``ValueError`` past ``limit``."""
        while (index := self._buffer.find(separator)) < 0:
            if len(self._buffer) > limit:
                raise ValueError(f"no {separator!r} within {limit} bytes")
            if not await self._fill():
                raise EOFError("stream ended")
        end = index + len(separator)
        data = bytes(self._buffer[:end])
        del self._buffer[:end]
        return data

    async def at_eof(self) -> bool:
        """True when the stream ended and nothing is buffered (waits for data, bounded)."""
        return not self._buffer and not await self._fill()
