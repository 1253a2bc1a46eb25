"""A shell command's output on its way to the host, gathered as a pipe gathers it.

On a real phone a command writes into a pipe and does not wait: adbd reads whatever the pipe holds
and sends it in as few WRTE packets as it can. A command here writes into an ``Outbox`` the same
way: the bytes are sent once the command waits for something (or ends), all that came so far in
one go, and a command that writes more than a pipe holds (``PIPE_CAPACITY``) waits until it is
sent, as a full pipe makes a writer wait. So ``pm list packages`` costs one WRTE, not one a line
(each WRTE waits for the host's OKAY: a round trip through the adb server).

A stream that closes under a sending outbox fails the command's next write (or ``drain``) with
the same ``StreamClosed`` a direct write would raise.
"""

from __future__ import annotations

import asyncio

from ufo_mobile.sim.servers.adb.stream import AdbStream

#: What a Linux pipe holds before a writer blocks.
PIPE_CAPACITY = 64 * 1024


class Outbox:
    """The unsent output of the command(s) running on one stream, in the order it was written."""

    def __init__(self, stream: AdbStream, capacity: int = PIPE_CAPACITY) -> None:
        self._stream = stream
        self._capacity = capacity
        self._pending = bytearray()
        self._sending: asyncio.Task[None] | None = None
        self._error: Exception | None = None

    async def write(self, data: bytes) -> None:
        """Queue ``data``; wait only when more than ``capacity`` bytes are unsent."""
        self._raise()
        if not data:
            return
        self._pending += data
        sender = self._sender()
        if len(self._pending) >= self._capacity:
            await sender
            self._raise()

    async def drain(self) -> None:
        """Send everything written so far and wait until it is sent."""
        if self._pending or self._sending is not None:
            await self._sender()
        self._raise()

    def _sender(self) -> asyncio.Task[None]:
        if self._sending is None:
            self._sending = asyncio.get_running_loop().create_task(self._send())
        return self._sending

    async def _send(self) -> None:
        try:
            while self._pending and self._error is None:
                chunk = bytes(self._pending)
                self._pending.clear()
                await self._stream.write(chunk)
        except Exception as exc:  # StreamClosed, ConnectionError: the command's next write raises it
            self._error = exc
        finally:
            self._sending = None

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error
