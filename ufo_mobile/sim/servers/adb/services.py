"""The services a host can OPEN on the emulated device.

* ``shell:CMD`` (v1, raw): stdout and stderr merged in execution order, no exit status;
  an empty CMD is a line-by-line interactive shell.
* ``shell,v2,…:CMD``: framed stdin/stdout/stderr/exit packets (``id u8, length u32le, data``);
  close-stdin (id 4) ends the command's stdin, window-size changes (id 5) are ignored.
* ``exec:CMD``: like v1 without a terminal (``adb exec-out``).
* ``sync:``: file transfer, see ``adb_sync``.
* ``tcp:PORT``: the uiautomator2 HTTP server while it runs; anything else is refused (CLSE).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.android.shell import DeviceShell
from ufo_mobile.sim.android.shio import ShellIO
from ufo_mobile.sim.servers.adb.outbox import Outbox
from ufo_mobile.sim.servers.adb.stream import AdbStream, StreamClosed
from ufo_mobile.sim.servers.adb.sync import serve_sync
from ufo_mobile.sim.servers.u2.server import serve_http

Service = Callable[[AdbStream], Awaitable[None]]

ID_STDIN, ID_STDOUT, ID_STDERR, ID_EXIT, ID_CLOSE_STDIN, ID_WINDOW_SIZE = 0, 1, 2, 3, 4, 5
PROMPT = "ufo_sim:/ $ "
MAX_SCRIPT = 1024 * 1024


class RawSink:
    """Bytes written as they are (v1 and exec), through the stream's outbox."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    async def write(self, data: bytes) -> None:
        if data:
            await self._outbox.write(data)


class FrameSink:
    """Bytes written as shell-protocol packets of one id (v2), through the stream's outbox."""

    def __init__(self, outbox: Outbox, ident: int) -> None:
        self._outbox = outbox
        self._ident = ident

    async def write(self, data: bytes) -> None:
        if data:
            await self._outbox.write(frame(self._ident, data))


def frame(ident: int, data: bytes) -> bytes:
    return bytes([ident]) + len(data).to_bytes(4, "little") + data


class RawStdin:
    """The host's bytes as stdin; EOF when the stream closes."""

    def __init__(self, stream: AdbStream, timeout: float) -> None:
        self._stream = stream
        self._timeout = timeout

    async def read(self) -> bytes:
        try:
            return await self._stream.read(self._timeout)
        except TimeoutError:
            return b""


class FramedStdin:
    """stdin packets of the v2 protocol; EOF at close-stdin or when the stream closes."""

    def __init__(self, stream: AdbStream, timeout: float) -> None:
        self._stream = stream
        self._timeout = timeout
        self._buffer = bytearray()
        self._eof = False

    async def read(self) -> bytes:
        while not self._eof:
            if len(self._buffer) >= 5:
                ident, size = self._buffer[0], int.from_bytes(self._buffer[1:5], "little")
                if len(self._buffer) >= 5 + size:
                    data = bytes(self._buffer[5:5 + size])
                    del self._buffer[:5 + size]
                    if ident == ID_CLOSE_STDIN:
                        self._eof = True
                    elif ident == ID_STDIN and data:
                        return data
                    continue
            try:
                chunk = await self._stream.read(self._timeout)
            except TimeoutError:
                chunk = b""
            if not chunk:
                self._eof = True
            self._buffer += chunk
        return b""


async def _shell_v1(device: DeviceState, stream: AdbStream, command: str) -> None:
    outbox = Outbox(stream)
    sink = RawSink(outbox)
    stdin = RawStdin(stream, device.limits.read_timeout)
    shell = DeviceShell(device)
    if command.strip():
        await shell.run(command, ShellIO(sink, sink, stdin))
    else:
        await _line_mode(shell, ShellIO(sink, sink, stdin))
    await outbox.drain()


async def _line_mode(shell: DeviceShell, io: ShellIO) -> int:
    """An interactive shell: a prompt, then each complete line is run; ``exit`` or EOF ends it."""
    buffer = b""
    await io.stdout.write(PROMPT.encode())
    while chunk := await io.stdin.read():
        buffer += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip() in (b"exit", b"logout"):
                return shell.status
            if line.strip():
                await shell.run(line.decode("utf-8", "replace"), ShellIO(io.stdout, io.stderr))
            await io.stdout.write(PROMPT.encode())
    return shell.status


async def _shell_v2(device: DeviceState, stream: AdbStream, command: str, pty: bool) -> None:
    outbox = Outbox(stream)
    io = ShellIO(FrameSink(outbox, ID_STDOUT), FrameSink(outbox, ID_STDERR),
                 FramedStdin(stream, device.limits.read_timeout))
    shell = DeviceShell(device)
    if command.strip():
        status = await shell.run(command, io)
    elif pty:
        status = await _line_mode(shell, io)
    else:  # a script on stdin ("echo ls | adb shell")
        script = bytearray()
        while len(script) <= MAX_SCRIPT and (chunk := await io.stdin.read()):
            script += chunk
        status = await shell.run(script.decode("utf-8", "replace"), ShellIO(io.stdout, io.stderr))
    await outbox.write(frame(ID_EXIT, bytes([status & 0xFF])))
    await outbox.drain()


def resolve(device: DeviceState, name: str) -> Service | None:
    """The handler for an OPEN of service ``name``, or None to refuse it."""
    head, sep, command = name.partition(":")
    if not sep:
        return None
    kind, *options = head.split(",")
    if kind in ("shell", "exec"):
        device.commands.append(command)
    if kind == "shell" and "v2" in options:
        pty = "pty" in options
        return _guarded(lambda stream: _shell_v2(device, stream, command, pty))
    if kind == "shell":
        return _guarded(lambda stream: _shell_v1(device, stream, command))
    if kind == "exec" and not options:
        return _guarded(lambda stream: _shell_v1(device, stream, command or "true"))
    if kind == "sync" and not options:
        return _guarded(lambda stream: serve_sync(device, stream))
    if kind == "tcp" and not options:
        port_text = command.partition(":")[0]
        if port_text.isdigit() and device.u2_running(int(port_text)):
            port = int(port_text)
            return _guarded(lambda stream: serve_http(device, stream, port))
    return None


def _guarded(service: Service) -> Service:
    """A service whose stream vanishing mid-write (host CLSE, dropped connection) is a normal end."""

    async def run(stream: AdbStream) -> None:
        try:
            await service(stream)
        except (StreamClosed, ConnectionError):
            return
        except asyncio.IncompleteReadError:
            return

    return run
