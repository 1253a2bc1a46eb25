"""The emulated adbd's transport, spoken to directly with raw packets (no adb binary needed):
handshake, checksums, flow control, chunking, CLSE echo, refusals, byte-stream sync, shell v2 stdin."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.servers.adb.daemon import EmulatedAdbd
from ufo_mobile.sim.servers.adb.protocol import (
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_VERSION_MIN,
    A_WRTE,
    MAX_PAYLOAD,
    Packet,
    encode,
    read_packet,
)

pytestmark = pytest.mark.integration
HOST_BANNER = b"host::features=shell_v2,cmd,stat_v2,ls_v2\0"


class RawHost:
    """A minimal ADB host: one TCP connection, packets in and out, checksums always sent."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, version: int) -> None:
        self.reader, self.writer, self.version = reader, writer, version
        self.next_id = 100

    @classmethod
    async def dial(cls, port: int, version: int = A_VERSION) -> RawHost:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, version)

    async def handshake(self, maxdata: int = MAX_PAYLOAD) -> Packet:
        await self.send(Packet(A_CNXN, self.version, maxdata, HOST_BANNER))
        return await self.recv()

    async def send(self, packet: Packet) -> None:
        self.writer.write(encode(packet, with_checksum=True))
        await self.writer.drain()

    async def recv(self, within: float = 30.0) -> Packet:  # 30 s: a hang guard, not a requirement
        return await asyncio.wait_for(read_packet(self.reader, max_payload=MAX_PAYLOAD,
                                                  verify_checksum=self.version == A_VERSION_MIN), within)

    async def open(self, service: str) -> tuple[int, Packet]:
        self.next_id += 1
        await self.send(Packet(A_OPEN, self.next_id, 0, service.encode() + b"\0"))
        return self.next_id, await self.recv()

    async def drain_stream(self, local: int, remote: int) -> bytes:
        return (await self.drain({local: remote}))[local]

    async def drain(self, streams: dict[int, int]) -> dict[int, bytes]:
        """Read WRTEs of ``streams`` (local -> remote id), acknowledging each, until every one got
        the device's CLSE (answered)."""
        data = {local: bytearray() for local in streams}
        open_ids = set(streams)
        while open_ids:
            packet = await self.recv()
            local, remote = packet.arg1, packet.arg0
            assert local in open_ids and streams[local] == remote, packet
            if packet.command == A_WRTE:
                data[local] += packet.data
                await self.send(Packet(A_OKAY, local, remote))
            else:
                assert packet.command == A_CLSE, packet
                await self.send(Packet(A_CLSE, local, remote))
                open_ids.discard(local)
        return {local: bytes(chunks) for local, chunks in data.items()}



@pytest.fixture
async def adbd() -> AsyncIterator[EmulatedAdbd]:
    daemon = EmulatedAdbd(SimPhone())
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.stop()


Connect = Callable[..., Awaitable[tuple[RawHost, Packet]]]


@pytest.fixture
async def connect(adbd: EmulatedAdbd) -> AsyncIterator[Connect]:
    """Open raw host connections to ``adbd``; all are closed at the end, even when a test fails."""
    opened: list[RawHost] = []

    async def open_one(version: int = A_VERSION, maxdata: int = MAX_PAYLOAD) -> tuple[RawHost, Packet]:
        host = await RawHost.dial(adbd.port, version)
        opened.append(host)
        return host, await host.handshake(maxdata)

    yield open_one
    for host in opened:
        host.writer.close()
        with contextlib.suppress(ConnectionError):
            await host.writer.wait_closed()


async def test_handshake_checksums_flow_control_and_chunking(adbd: EmulatedAdbd, connect: Connect) -> None:
    host, reply = await connect(version=A_VERSION_MIN, maxdata=4096)
    assert (reply.command, reply.arg0, reply.arg1) == (A_CNXN, A_VERSION_MIN, 4096)
    assert reply.data == (b"device::ro.product.name=ufo_sim;ro.product.model=UFO Sim Phone;"
                          b"ro.product.device=ufo_sim;features=shell_v2,cmd")
    local, okay = await host.open("exec:screencap -p")
    assert (okay.command, okay.arg1) == (A_OKAY, local)
    first = await host.recv()  # checksum verified by recv() for this protocol version
    assert first.command == A_WRTE and len(first.data) == 4096
    # nothing more until the host acknowledges: a negative check, so a slow machine can only make it
    # weaker (a misbehaving device has less time to send), never make it fail
    with pytest.raises(TimeoutError):
        await host.recv(within=0.2)
    await host.send(Packet(A_OKAY, local, okay.arg0))
    png = first.data + await host.drain_stream(local, okay.arg0)
    assert png == adbd.phone.screenshot_png()


async def test_refusals_clse_echo_and_reuse_of_the_connection(adbd: EmulatedAdbd, connect: Connect) -> None:
    host, _ = await connect()
    for service in ("tcp:9008", "localabstract:scrcpy", "reboot:", "framebuffer:"):
        local, refused = await host.open(service)
        assert (refused.command, refused.arg0, refused.arg1) == (A_CLSE, 0, local)
    local, okay = await host.open("shell:sleep 60")  # longer than recv's bound: only the CLSE can end it
    await host.send(Packet(A_CLSE, local, okay.arg0))
    echo = await host.recv()
    assert (echo.command, echo.arg0, echo.arg1) == (A_CLSE, okay.arg0, local)
    local, okay = await host.open("shell:echo still here")
    assert await host.drain_stream(local, okay.arg0) == b"still here\n"


async def test_sync_requests_split_across_packets(adbd: EmulatedAdbd, connect: Connect) -> None:
    adbd.device.fs.write("/sdcard/note.txt", b"abc")
    host, _ = await connect()
    local, okay = await host.open("sync:")
    path = b"/sdcard/note.txt"
    request = b"STAT" + struct.pack("<I", len(path)) + path + b"QUIT" + struct.pack("<I", 0)
    for piece in (request[:3], request[3:11], request[11:]):
        await host.send(Packet(A_WRTE, local, okay.arg0, piece))
        assert (await host.recv()).command == A_OKAY
    reply = await host.drain_stream(local, okay.arg0)
    assert reply[:4] == b"STAT" and struct.unpack("<3I", reply[4:16])[1] == 3


async def test_shell_v2_stdin_and_close_stdin(adbd: EmulatedAdbd, connect: Connect) -> None:
    host, _ = await connect()
    local, okay = await host.open("shell,v2,raw:cat")
    stdin = b"\x00" + struct.pack("<I", 5) + b"hello" + b"\x04" + struct.pack("<I", 0)
    await host.send(Packet(A_WRTE, local, okay.arg0, stdin))
    assert (await host.recv()).command == A_OKAY
    frames = await host.drain_stream(local, okay.arg0)
    assert frames == b"\x01" + struct.pack("<I", 5) + b"hello" + b"\x03" + struct.pack("<I", 1) + b"\x00"


async def test_several_connections_with_concurrent_streams_and_stop_closes_all(adbd: EmulatedAdbd,
                                                                               connect: Connect) -> None:
    hosts = [(await connect())[0] for _ in range(3)]
    outputs = []
    streams: list[dict[int, int]] = [{} for _ in hosts]
    for i, host in enumerate(hosts):
        for j in range(2):
            local, okay = await host.open(f"shell:sleep 0.2; echo {i}-{j}")
            streams[i][local] = okay.arg0
    for host, ids in zip(hosts, streams, strict=True):
        outputs.extend((await host.drain(ids)).values())
    assert outputs == [f"{i}-{j}\n".encode() for i in range(3) for j in range(2)]
    assert adbd.connections == 3
    await adbd.stop()
    for host in hosts:
        try:  # FIN, or RST when our last CLSE answer was still unread
            assert await asyncio.wait_for(host.reader.read(), 30) == b""  # 30 s: a hang guard
        except ConnectionResetError:
            pass


async def test_a_command_s_output_leaves_in_one_packet_as_from_a_pipe(adbd: EmulatedAdbd, connect: Connect) -> None:
    """``pm list packages`` writes a line per package; like adbd reading a pipe, the device sends
    them together (each WRTE waits for the host's OKAY), and the exit frame with them (v2)."""
    host, _ = await connect()
    for service in ("shell:pm list packages", "shell,v2,raw:pm list packages"):
        local, okay = await host.open(service)
        packets: list[Packet] = []
        while (packet := await host.recv()).command == A_WRTE:
            packets.append(packet)
            await host.send(Packet(A_OKAY, local, okay.arg0))
        assert packet.command == A_CLSE
        await host.send(Packet(A_CLSE, local, okay.arg0))
        output = b"".join(p.data for p in packets)
        assert output.count(b"package:") > 10 and b"package:com.android.settings\n" in output
        assert len(packets) == 1, service
