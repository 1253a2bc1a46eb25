"""``EmulatedAdbd``: the device side of the ADB transport over TCP on 127.0.0.1, for a ``SimPhone``.

The real ``adb`` server (``adb connect 127.0.0.1:PORT``), adbutils and uiautomator2 talk to it
unchanged. No AUTH is asked for; the banner advertises ``shell_v2,cmd`` only. Connections and
streams run concurrently on one asyncio loop; ``run_in_thread`` hosts that loop for blocking callers.

``profile`` (a ``RealismProfile`` or a preset's name, see ``ufo_mobile.sim.android.profile``) decides how
much the device behaves like a real phone; the default is ``pixel-14`` (refused dumps, no ADB
Keyboard, a denied clipboard, hidden focus lines and all); ``kind`` answers every command kindly.

Fault injection for tests (callable from any thread): ``disconnect()`` drops every connection,
``hang(prefix)`` makes matching shell commands (and JSON-RPC methods) hang until their stream
closes, ``unhang()`` undoes it, ``empty_dumps(n)`` makes the next ``n`` hierarchy dumps empty.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import structlog

from ufo_mobile.sim.android.devstate import AdbdLimits, DeviceState
from ufo_mobile.sim.android.profile import RealismProfile, get_profile
from ufo_mobile.sim.phone.simphone import SimPhone
from ufo_mobile.sim.servers import check_loopback
from ufo_mobile.sim.servers.adb.connection import HostConnection

__all__ = ["AdbdLimits", "AdbdThread", "EmulatedAdbd", "serve"]


class EmulatedAdbd:
    """An ADB device on ``host:port`` (port 0 = any free port) backed by ``phone``."""

    def __init__(self, phone: SimPhone, *, host: str = "127.0.0.1", port: int = 0, serial_name: str | None = None,
                 limits: AdbdLimits | None = None, logger: Any = None,
                 profile: str | RealismProfile | None = None) -> None:
        check_loopback(host, "the emulated adbd")
        self.phone = phone
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.sim.servers.adb.daemon")
        self.host = host
        self.profile = get_profile(profile)
        self.device = DeviceState(phone, serial_name or phone.serial, limits or AdbdLimits(), profile=self.profile)
        self._requested_port = port
        self._port: int | None = None
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: set[HostConnection] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._refuse_until = 0.0

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the emulated adbd is not started")
        return self._port

    @property
    def address(self) -> str:
        """``host:port``, the serial ``adb connect`` gives the device."""
        return f"{self.host}:{self.port}"

    @property
    def connections(self) -> int:
        return len(self._connections)

    @property
    def commands(self) -> deque[str]:
        """Every ``shell:``/``exec:`` command line received, oldest first (clear it at will)."""
        return self.device.commands

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("the emulated adbd is already started")
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._on_client, self.host, self._requested_port)
        self._port = int(self._server.sockets[0].getsockname()[1])

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if time.monotonic() < self._refuse_until:
            writer.transport.abort()
            return
        task = asyncio.current_task()
        connection = HostConnection(self.device, reader, writer, self._log)
        self._connections.add(connection)
        if task is not None:
            self._handlers.add(task)
        try:
            await connection.run()
        finally:
            self._connections.discard(connection)
            if task is not None:
                self._handlers.discard(task)

    async def stop(self) -> None:
        """Stop listening and close every connection (bounded by ``limits.stop_timeout``)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for connection in list(self._connections):
            connection.close()
        timeout = self.device.limits.stop_timeout
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=timeout)
        try:
            await asyncio.wait_for(server.wait_closed(), timeout)
        except TimeoutError:
            pass

    # -- faults -------------------------------------------------------------------------------------

    def disconnect(self, refuse_seconds: float = 0.0) -> None:
        """Drop every connection now; for ``refuse_seconds`` new ones are dropped too."""
        self._refuse_until = time.monotonic() + max(0.0, refuse_seconds)
        self._in_loop(self._drop_all)

    def _drop_all(self) -> None:
        for connection in list(self._connections):
            connection.abort()

    def hang(self, prefix: str) -> None:
        """Shell commands (each simple command's words joined by spaces) starting with ``prefix``,
        and JSON-RPC methods of that name prefix, hang until their stream closes."""
        self.device.faults.hang(prefix)

    def unhang(self, prefix: str | None = None) -> None:
        """Undo ``hang(prefix)``, or every hang when ``prefix`` is None."""
        self.device.faults.unhang(prefix)

    def unauthorized(self, pending: bool = True) -> None:
        """Behave like a phone whose 'Allow USB debugging?' prompt is unanswered: new connections get
        an AUTH challenge and no signature is ever accepted, so the adb server lists it as
        ``unauthorized``. Connections already online are not affected."""
        self.device.unauthorized = pending

    def block_u2(self, blocked: bool = True) -> None:
        """While blocked, ``app_process`` fails to start the uiautomator2 server (it exits with 1)."""
        self.device.u2_blocked = blocked

    def stop_in_thread(self) -> None:
        """Stop the daemon from any thread (the phone goes away): no listener, no connections.

        From another thread this waits (bounded) until it is stopped; from the daemon's own loop
        it schedules the stop and returns."""
        loop = self._own_loop()
        if loop is None:
            return
        if _running_on(loop):
            task = loop.create_task(self.stop())
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return
        timeout = 2 * self.device.limits.stop_timeout
        asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout)

    def empty_dumps(self, count: int) -> None:
        """The next ``count`` dumps (``uiautomator dump``, ``dumpWindowHierarchy``) are empty."""
        self.device.faults.empty_dumps(count)

    def _own_loop(self) -> asyncio.AbstractEventLoop | None:
        """The daemon's event loop while it is alive."""
        loop = self._loop
        return None if loop is None or loop.is_closed() else loop

    def _in_loop(self, func: Callable[[], None]) -> None:
        loop = self._own_loop()
        if loop is None:
            return
        if _running_on(loop):
            func()
            return

        async def call() -> None:
            func()

        asyncio.run_coroutine_threadsafe(call(), loop).result(self.device.limits.stop_timeout)

    # -- threads ------------------------------------------------------------------------------------

    def run_in_thread(self, *, start_timeout: float = 10.0) -> AdbdThread:
        """Start the daemon on its own event loop in a daemon thread; returns once it listens."""
        runner = AdbdThread(self)
        runner.start(start_timeout)
        return runner


class AdbdThread:
    """An ``EmulatedAdbd`` running in a background thread (for blocking callers such as adbutils)."""

    def __init__(self, adbd: EmulatedAdbd) -> None:
        self.adbd = adbd
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name=f"adbd-{id(adbd):x}", daemon=True)

    @property
    def port(self) -> int:
        return self.adbd.port

    @property
    def address(self) -> str:
        return self.adbd.address

    def start(self, timeout: float) -> None:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"the emulated adbd did not start within {timeout:g} s")
        if self._error is not None:
            raise RuntimeError(f"the emulated adbd failed to start: {self._error}") from self._error

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            await self.adbd.start()
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            await self._stop.wait()  # until stop(); the thread's whole lifetime
        finally:
            await self.adbd.stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Close every connection, stop the loop and join the thread (bounded)."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:
                pass
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the emulated adbd thread did not stop within {timeout:g} s")

    def __enter__(self) -> AdbdThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def serve(phone: SimPhone, host: str, port: int, *, ready: Callable[[int], None] | None = None,
                profile: str | RealismProfile | None = None) -> None:
    """Run an emulated adbd for ``phone`` on ``host:port`` until cancelled; ``ready(port)`` once listening."""
    adbd = EmulatedAdbd(phone, host=host, port=port, profile=profile)
    await adbd.start()
    try:
        if ready is not None:
            ready(adbd.port)
        await asyncio.Event().wait()  # until the caller cancels us
    finally:
        await adbd.stop()


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    """True when called from code running on ``loop`` itself."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
