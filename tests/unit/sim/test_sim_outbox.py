"""The emulated adbd's outbox: output gathered as a pipe gathers it, sent in order, errors passed on."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from ufo_mobile.sim.servers.adb.outbox import Outbox
from ufo_mobile.sim.servers.adb.stream import AdbStream, StreamClosed


class FakeStream:
    """Records every write; fails every write once ``closed``."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.tried = asyncio.Event()  # set at every write, sent or failed

    async def write(self, data: bytes) -> None:
        await asyncio.sleep(0)  # a real stream waits for the host's OKAY
        self.tried.set()
        if self.closed:
            raise StreamClosed("stream closed")
        self.writes.append(data)

    async def wait_for_a_write(self) -> None:
        await asyncio.wait_for(self.tried.wait(), 30)  # a hang guard, not a requirement


def _outbox(stream: FakeStream, capacity: int = 1024) -> Outbox:
    return Outbox(cast(AdbStream, stream), capacity)


async def test_writes_without_a_wait_between_them_leave_together() -> None:
    stream = FakeStream()
    outbox = _outbox(stream)
    for n in range(5):
        await outbox.write(b"line %d\n" % n)
    await outbox.drain()
    assert stream.writes == [b"line 0\nline 1\nline 2\nline 3\nline 4\n"]


async def test_output_leaves_when_the_command_waits() -> None:
    stream = FakeStream()
    outbox = _outbox(stream)
    await outbox.write(b"prompt $ ")
    await stream.wait_for_a_write()  # the command waits (for stdin, say): what it wrote is sent meanwhile
    assert stream.writes == [b"prompt $ "]


async def test_a_full_pipe_makes_the_writer_wait_and_order_is_kept() -> None:
    stream = FakeStream()
    outbox = _outbox(stream, capacity=10)
    await outbox.write(b"0123456789ab")  # over capacity: sent before write returns
    assert stream.writes == [b"0123456789ab"]
    await outbox.write(b"cd")
    await outbox.write(b"ef")
    await outbox.drain()
    assert b"".join(stream.writes) == b"0123456789abcdef"


async def test_a_closed_stream_fails_the_next_write() -> None:
    stream = FakeStream()
    outbox = _outbox(stream)
    stream.closed = True
    await outbox.write(b"first")  # queued; the send fails in the background
    await stream.wait_for_a_write()
    with pytest.raises(StreamClosed):
        await outbox.write(b"second")
    with pytest.raises(StreamClosed):
        await outbox.drain()
