"""The task service's side of one WebSocket connection, and its access rules.

A ``Peer`` sends its messages in order from one task of its own, so a run's events never wait for a
slow client: step events beyond ``MAX_PENDING`` unsent messages are dropped (and counted), every other
message is kept. ``is_loopback`` says whether an address is only reachable from this host (the
handshake check is ``auth.py``'s).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from ufo_mobile.host.aip.protocol import ClientType, ServerMessage

MAX_PENDING = 1_000  # unsent messages of one connection after which step events are dropped


class Peer:
    """One connection: the client it registered as, and its outgoing messages."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.client_id: str | None = None
        self.client_type = ClientType.DEVICE
        self.closed = False
        self.dropped = 0  # step events not sent because the client was too slow to read them
        self._out: asyncio.Queue[str] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None

    @property
    def address(self) -> str:
        where = self.ws.remote_address
        return f"{where[0]}:{where[1]}" if isinstance(where, tuple) and len(where) >= 2 else "?"

    def start(self) -> None:
        self._pump = asyncio.ensure_future(self._send_all())

    def post(self, message: ServerMessage, *, droppable: bool = False) -> bool:
        """Queue ``message``; False when it is not sent (the connection closed, or a dropped step event)."""
        if self.closed:
            return False
        if droppable and self._out.qsize() >= MAX_PENDING:
            self.dropped += 1
            return False
        self._out.put_nowait(message.to_json())
        return True

    async def _send_all(self) -> None:
        while True:
            text = await self._out.get()
            try:
                await self.ws.send(text)
            except ConnectionClosed:
                self.closed = True
                return
            finally:
                self._out.task_done()

    async def flush(self, limit: float) -> None:
        """Wait (at most ``limit`` seconds) until what was posted is sent."""
        if self.closed or self._pump is None:
            return
        try:
            async with asyncio.timeout(limit):
                await self._out.join()
        except TimeoutError:
            pass

    def close(self) -> None:
        self.closed = True
        if self._pump is not None:
            self._pump.cancel()


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) is reachable from this host only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class LineHandler(logging.Handler):
    """The websockets library's warnings and errors, as one line each through ``write`` (no tracebacks)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.write = write

    def emit(self, record: logging.LogRecord) -> None:
        self.write(f"websockets: {record.getMessage()}")


def library_logger(write: Callable[[str], None]) -> logging.Logger:
    logger = logging.getLogger("ufo_mobile.host.websockets")
    logger.propagate = False
    logger.handlers = [LineHandler(write)]
    return logger
