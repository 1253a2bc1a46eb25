"""One host connection to the emulated adbd: the CNXN handshake, then OPEN/OKAY/WRTE/CLSE.

Streams are served concurrently, each by its own task. A host CLSE is echoed and cancels the
stream's task; when a service ends, the device flushes (bounded) and sends CLSE. Every send is
bounded by ``AdbdLimits.ack_timeout``; a host that stops reading is dropped.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.servers.adb.protocol import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_VERSION_MIN,
    A_WRTE,
    MAX_PAYLOAD,
    MAX_PAYLOAD_V1,
    Packet,
    ProtocolError,
    device_banner,
    encode,
    read_packet,
    service_name,
)
from ufo_mobile.sim.servers.adb.services import Service, resolve
from ufo_mobile.sim.servers.adb.stream import AdbStream

AUTH_TOKEN = 1  # AUTH arg0: the device sends a token to sign
AUTH_SIGNATURE = 2  # AUTH arg0: the host's signature of the token


class HostConnection:
    """One host connection: the handshake, then packets dispatched to streams."""

    def __init__(self, device: DeviceState, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 log: Any) -> None:
        self.device = device
        self.log = log
        self.reader = reader
        self.writer = writer
        self.version = A_VERSION
        self.max_payload = MAX_PAYLOAD_V1
        self.online = False
        self.closing = False
        self.streams: dict[int, AdbStream] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._next_id = 1
        self._send_lock = asyncio.Lock()

    async def send(self, packet: Packet) -> None:
        data = encode(packet, with_checksum=self.version < A_VERSION)
        async with self._send_lock:
            if self.closing or self.writer.is_closing():
                raise ConnectionError("connection closed")
            self.writer.write(data)
            try:
                await asyncio.wait_for(self.writer.drain(), self.device.limits.ack_timeout)
            except TimeoutError:
                self.abort()
                raise ConnectionError("host stopped reading") from None

    def abort(self) -> None:
        """Drop the connection now (RST), as a cable pull or a crashed adbd would."""
        self.closing = True
        self.writer.transport.abort()

    def close(self) -> None:
        """Close the connection after what is already queued (FIN)."""
        self.closing = True
        self.writer.close()

    async def run(self) -> None:
        try:
            while True:
                limit = self.max_payload if self.online else MAX_PAYLOAD
                verify = self.online and self.version < A_VERSION
                await self.handle(await read_packet(self.reader, max_payload=limit, verify_checksum=verify))
        except (asyncio.IncompleteReadError, ConnectionError, ProtocolError, TimeoutError):
            pass
        finally:
            await self.shutdown()

    async def handle(self, packet: Packet) -> None:
        if packet.command == A_CNXN:
            await self._connect(packet)
        elif not self.online:
            if packet.command == A_AUTH and packet.arg0 == AUTH_SIGNATURE and self.device.unauthorized:
                # a rejected signature gets a fresh token; out of keys, the host offers its public
                # key and lists the phone as unauthorized while the user is asked (forever, here)
                await self.send(Packet(A_AUTH, AUTH_TOKEN, 0, os.urandom(20)))
            return  # anything else before the handshake is ignored
        elif packet.command == A_OPEN:
            await self._open(packet)
        elif packet.command == A_OKAY:
            stream = self.streams.get(packet.arg1)
            if stream is not None and stream.remote_id == packet.arg0:
                stream.on_ack()
        elif packet.command == A_WRTE:
            stream = self.streams.get(packet.arg1)
            if stream is not None and not stream.closed.is_set():
                stream.on_data(packet.data)
                await self.send(Packet(A_OKAY, stream.local_id, stream.remote_id))
        elif packet.command == A_CLSE:
            await self._close(packet)

    async def _connect(self, packet: Packet) -> None:
        if packet.arg0 < A_VERSION_MIN:
            raise ProtocolError(f"host protocol version 0x{packet.arg0:08x} is too old")
        if self.online:
            await self._drop_streams()
        self.version = min(packet.arg0, A_VERSION)
        self.max_payload = min(packet.arg1, MAX_PAYLOAD) if packet.arg1 else MAX_PAYLOAD_V1
        if self.device.unauthorized:
            # AUTH(TOKEN): the host signs it; no signature and no public key is ever accepted.
            await self.send(Packet(A_AUTH, AUTH_TOKEN, 0, os.urandom(20)))
            return
        self.online = True
        await self.send(Packet(A_CNXN, self.version, self.max_payload, device_banner(self.device.props)))

    async def _open(self, packet: Packet) -> None:
        if packet.arg0 == 0:
            return
        name = service_name(packet.data)
        service = resolve(self.device, name)
        if service is None:
            await self.send(Packet(A_CLSE, 0, packet.arg0))
            return
        local_id = self._next_id
        self._next_id = self._next_id % 0x7FFFFFFF + 1
        stream = AdbStream(self, local_id, packet.arg0, max_payload=self.max_payload,
                           ack_timeout=self.device.limits.ack_timeout)
        self.streams[local_id] = stream
        await self.send(Packet(A_OKAY, local_id, packet.arg0))
        self.tasks[local_id] = asyncio.create_task(self._serve(stream, service, name))

    async def _serve(self, stream: AdbStream, service: Service, name: str) -> None:
        try:
            await service(stream)
        except Exception as exc:  # a bug in a service must not take the connection down
            self.log.error("adbd_service_failed", service=name, error=repr(exc), exc_info=True)
        finally:
            self.tasks.pop(stream.local_id, None)
            if not self.closing and not stream.clse_sent:
                await stream.close()

    async def _close(self, packet: Packet) -> None:
        stream = self.streams.get(packet.arg1)
        if stream is None or (packet.arg0 and stream.remote_id != packet.arg0):
            return
        del self.streams[stream.local_id]
        if stream.clse_sent:
            return  # the host's answer to our CLSE
        stream.clse_sent = True
        stream.on_remote_close()
        task = self.tasks.pop(stream.local_id, None)
        if task is not None:
            task.cancel()
        await self.send(Packet(A_CLSE, stream.local_id, stream.remote_id))  # real adbd echoes CLSE

    async def _drop_streams(self) -> None:
        tasks = list(self.tasks.values())
        for stream in self.streams.values():
            stream.clse_sent = True
            stream.on_remote_close()
        for task in tasks:
            task.cancel()
        self.streams.clear()
        self.tasks.clear()
        if tasks:
            await asyncio.wait(tasks, timeout=self.device.limits.stop_timeout)

    async def shutdown(self) -> None:
        self.closing = True
        await self._drop_streams()
        self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), self.device.limits.stop_timeout)
        except (ConnectionError, TimeoutError):
            pass
