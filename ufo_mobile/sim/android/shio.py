"""Plumbing shared by the device shell and its commands: byte sinks and sources, the per-command
context, and the command signature.

A command is ``async def cmd(ctx: Ctx, args: list[str]) -> int`` (the exit status); it writes
through ``ctx.out`` / ``ctx.err`` in the order things happen, which is the order the host sees.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from ufo_mobile.sim.android.devstate import DeviceState


class Sink(Protocol):
    async def write(self, data: bytes) -> None: ...


class Source(Protocol):
    async def read(self) -> bytes:
        """The next chunk, ``b""`` at end of input."""
        ...


class NullSink:
    async def write(self, data: bytes) -> None:
        return None


class BufferSink:
    def __init__(self) -> None:
        self.data = bytearray()

    async def write(self, data: bytes) -> None:
        self.data += data


class BytesSource:
    def __init__(self, data: bytes = b"") -> None:
        self._data = data

    async def read(self) -> bytes:
        data, self._data = self._data, b""
        return data


@dataclass(slots=True)
class ShellIO:
    stdout: Sink
    stderr: Sink
    stdin: Source = field(default_factory=BytesSource)


class ExitShell(Exception):
    """``exit N``: stop the script with status ``code``."""

    def __init__(self, code: int) -> None:
        self.code = code
        super().__init__(code)


class ScriptRunner(Protocol):
    status: int

    async def run(self, script: str, io: ShellIO) -> int: ...


@dataclass(slots=True)
class Ctx:
    """What a command sees: the device, its streams, its environment and the running shell."""

    device: DeviceState
    io: ShellIO
    name: str
    env: dict[str, str] = field(default_factory=dict)
    shell: ScriptRunner | None = None

    async def out(self, text: str | bytes) -> None:
        await self.io.stdout.write(text.encode() if isinstance(text, str) else text)

    async def err(self, text: str | bytes) -> None:
        await self.io.stderr.write(text.encode() if isinstance(text, str) else text)

    async def read_all(self, limit: int) -> bytes:
        """All of stdin, at most ``limit`` bytes."""
        data = bytearray()
        while len(data) <= limit and (chunk := await self.io.stdin.read()):
            data += chunk
        return bytes(data[:limit])

    async def fail(self, message: str, code: int = 1) -> int:
        """Print ``name: message`` on stderr and return ``code``."""
        await self.err(f"{self.name}: {message}\n")
        return code


Command = Callable[[Ctx, list[str]], Awaitable[int]]


def split_flags(args: list[str], known: str) -> tuple[set[str], list[str]]:
    """Leading single-letter flags (``-rf`` = r, f) among ``known``, and the remaining args."""
    flags: set[str] = set()
    rest = list(args)
    while rest and rest[0].startswith("-") and len(rest[0]) > 1 and rest[0] != "--":
        letters = rest[0][1:]
        if not set(letters) <= set(known):
            break
        flags.update(letters)
        rest.pop(0)
    if rest and rest[0] == "--":
        rest.pop(0)
    return flags, rest
