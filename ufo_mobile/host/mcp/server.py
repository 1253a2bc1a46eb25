"""The MCP device server: UFO's two mobile MCP servers in one process, on the official ``mcp`` SDK.

``build_server(state, groups)`` makes one ``MCPServer`` with the tools of the chosen groups
(``data``: UFO's MobileDataCollector, ``action``: MobileActionExecutor; ``mcp_tools``) over one
shared ``MobileServerState``. ``serve`` runs them until a stop request:

- ``http``: each group on its own port at path ``/mcp`` (streamable HTTP, JSON responses, sessions:
  what UFO's ``config/ufo/mcp.yaml`` points its MobileAgent at), both in one event loop, so a control
  id observed through the data server is clicked through the action server. Sessions are bounded per
  client and in all, and expire when idle (``SessionLimits``, ``mcp_sessions``); with a token, every
  request needs ``Authorization: Bearer <token>``.
- ``stdio``: every tool of the chosen groups on one stdio connection; it ends when the client
  closes standard input. Nothing but protocol is written to standard output.

The listening sockets are bound by the caller (``bind``, or ``bind_host``, which for ``localhost``
listens on both 127.0.0.1 and ::1), so a port in use is found before the phone is touched;
``serve`` closes the phone when it ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import stat
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import uvicorn
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette
from starlette.middleware import Middleware

from ufo_mobile.host.mcp.limits import SessionLimits
from ufo_mobile.host.mcp.sessions import SessionBook, SessionGuard, StaticTokenVerifier
from ufo_mobile.host.mcp.state import MobileServerState
from ufo_mobile.host.mcp.tools import action_tools, data_tools

DATA, ACTION = "data", "action"
GROUPS = (DATA, ACTION)
NAMESPACES = {DATA: "MobileDataCollector", ACTION: "MobileActionExecutor"}  # UFO's config/ufo/mcp.yaml
DEFAULT_PORTS = {DATA: 8020, ACTION: 8021}
PATH = "/mcp"
SHUTDOWN_GRACE = 3  # seconds an HTTP server waits for open requests when asked to stop
_NAMES = {DATA: "Mobile Data Collection MCP Server", ACTION: "Mobile Action MCP Server"}
_INSTRUCTIONS = {
    DATA: "Observes an Android phone: screenshot, UI tree, controls with ids, installed apps, device facts.",
    ACTION: "Acts on an Android phone: tap, swipe, type, keys, launch apps, click controls by id, wait.",
}


def build_server(state: MobileServerState, groups: Sequence[str], *, token: str | None = None,
                 url: str = "http://127.0.0.1") -> MCPServer:
    """One MCP server with the tools of ``groups`` (``data``, ``action``, or both) over ``state``.

    With ``token``, its HTTP app asks every request for ``Authorization: Bearer <token>`` (the SDK's
    bearer authentication; ``url``, where it is served, is named as the token's issuer: the SDK's
    settings need one, and this server runs no OAuth endpoints)."""
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or not groups:
        raise ValueError(f"unknown tool groups {unknown or groups!r}; use {', '.join(GROUPS)}")
    tools = [*(data_tools(state) if DATA in groups else []), *(action_tools(state) if ACTION in groups else [])]
    both = len(set(groups)) == 2
    auth: dict[str, Any] = {}
    if token is not None:
        auth = {"token_verifier": StaticTokenVerifier(token),
                "auth": AuthSettings(issuer_url=cast(Any, url), resource_server_url=None)}
    return MCPServer(name="Mobile MCP Server" if both else _NAMES[groups[0]],
                     instructions=" ".join(_INSTRUCTIONS[g] for g in GROUPS if g in groups),
                     tools=tools, log_level="WARNING", **auth)


def http_app(server: MCPServer, *, host: str, limits: SessionLimits, authenticated: bool = False,
             log: Callable[[str], None] | None = None) -> tuple[Starlette, SessionBook]:
    """``server``'s streamable HTTP app at ``PATH`` (JSON responses), its sessions within ``limits``:
    the SDK's own idle timeout and cap, and a ``SessionGuard`` inside its authentication for the
    bound per client. Returns the app and the guard's book of sessions."""
    app = server.streamable_http_app(streamable_http_path=PATH, json_response=True, host=host,
                                     session_idle_timeout=limits.idle_seconds, max_sessions=limits.total)
    book = SessionBook(limits)
    # last in the list: innermost, after the SDK's authentication has said who the request is from
    app.user_middleware.append(Middleware(SessionGuard, book=book, path=PATH, authenticated=authenticated,
                                          log=log))
    return app, book


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port). Raises ``OSError``."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    if not infos:
        raise OSError(f"cannot resolve {host!r}")
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


LOCALHOST = "localhost"
_BIND_TRIES = 20  # for port 0: how often a free IPv4 port is tried until ::1 has it free too


def bind_host(host: str, port: int) -> list[socket.socket]:
    """The listening sockets for ``host:port``: one, or for ``localhost`` one on 127.0.0.1 and one on
    ::1 with the same port (a client may resolve ``localhost`` to either first: UFO's
    ``config/ufo/mcp.yaml`` says ``localhost``). ::1 is left out where the machine has no IPv6
    loopback. Raises ``OSError``; nothing stays bound when it does."""
    if host.strip().lower() != LOCALHOST:
        return [bind(host, port)]
    for _ in range(_BIND_TRIES if port == 0 else 1):
        first = bind("127.0.0.1", port)
        try:
            second = _bind_ipv6_loopback(first.getsockname()[1])
        except OSError as exc:
            first.close()
            if port == 0 and exc.errno == errno.EADDRINUSE:
                continue  # ::1 has that port taken: another free port
            raise OSError(exc.errno, f"[::1]:{port}: {exc.strerror or exc}") from exc
        return [first] if second is None else [first, second]
    raise OSError(errno.EADDRINUSE, "no port free on both 127.0.0.1 and ::1")


def _bind_ipv6_loopback(port: int) -> socket.socket | None:
    """A socket listening on [::1]:``port`` (IPv6 only), or None where there is no IPv6 loopback."""
    if not socket.has_ipv6:
        return None
    try:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("::1", port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            return None
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{PATH}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class Listening:
    """What ``serve`` reports once it accepts calls: the URL of each group (HTTP) or ``stdio``, and
    over HTTP each group's server, app and book of sessions (for a host embedding it, and for tests)."""

    urls: dict[str, str] = field(default_factory=dict)
    servers: dict[str, MCPServer] = field(default_factory=dict)
    apps: dict[str, Starlette] = field(default_factory=dict)
    sessions: dict[str, SessionBook] = field(default_factory=dict)
    also: dict[str, list[str]] = field(default_factory=dict)
    """Each group's other URLs, on the same port (``localhost``: ``http://[::1]:PORT/mcp``)."""


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that leaves the signals to ``serve`` (two servers share one process)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


Bound = socket.socket | Sequence[socket.socket]
"""What a group listens on: one socket, or several with one port (``localhost``: 127.0.0.1 and ::1)."""


def socket_list(bound: Bound) -> list[socket.socket]:
    """``bound`` as a list of sockets."""
    return [bound] if isinstance(bound, socket.socket) else list(bound)


async def serve_http(state: MobileServerState, sockets: Mapping[str, Bound], *, stop: asyncio.Event,
                     ready: Callable[[Listening], None] | None = None, grace: int = SHUTDOWN_GRACE,
                     limits: SessionLimits | None = None, token: str | None = None,
                     log: Callable[[str], None] | None = None) -> None:
    """Serve each group's tools on its sockets (``{group: socket or sockets}``) until ``stop`` is set,
    sessions within ``limits``, every request needing ``token`` when one is given. ``log`` hears
    refusals. A group's URL is that of its first socket; ``Listening.also`` has the others."""
    bound = {group: socket_list(sockets[group]) for group in sockets}
    host = bound[next(iter(bound))][0].getsockname()[0]
    limits = limits or SessionLimits()
    servers: dict[str, _Uvicorn] = {}
    listening = Listening()
    for group in bound:
        url = url_of(bound[group][0])
        listening.also[group] = [url_of(sock) for sock in bound[group][1:]]
        mcp = build_server(state, [group], token=token, url=url.removesuffix(PATH))
        app, book = http_app(mcp, host=host, limits=limits, authenticated=token is not None, log=log)
        listening.urls[group], listening.servers[group] = url, mcp
        listening.apps[group], listening.sessions[group] = app, book
        config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=grace)
        servers[group] = _Uvicorn(config)
    tasks = [asyncio.create_task(servers[g].serve(sockets=bound[g]), name=f"mcp-{g}") for g in servers]
    stopping = asyncio.create_task(stop.wait())
    try:
        while not all(server.started for server in servers.values()):
            if any(task.done() for task in tasks) or stop.is_set():
                break
            await asyncio.sleep(0.01)  # uvicorn has no "started" event to wait on
        else:
            if ready is not None:
                ready(listening)
        await asyncio.wait([*tasks, stopping], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for server in servers.values():
            server.should_exit = True
        stopping.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)]
    if failed:
        raise failed[0]
    if not stop.is_set():  # a server ended by itself (its startup failed: uvicorn logged why)
        raise RuntimeError("an MCP HTTP server stopped unexpectedly")


class StdinLines:
    """The lines of standard input (a file descriptor). A pipe, socket or terminal is read by the
    event loop itself: a read waiting on a silent client ends with the server, where a read in a
    thread would hold up the interpreter's exit (anyio's file wrapper, and a daemon thread on
    ``sys.stdin``, both do). A file or ``/dev/null``, which the loop cannot watch and whose reads
    never wait, is read on a worker thread."""

    LIMIT = 64 * 1024 * 1024  # the longest message line accepted

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd

    def _watchable(self) -> bool:
        mode = os.fstat(self.fd).st_mode
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(self.fd)

    async def __aiter__(self) -> AsyncIterator[str]:
        stream = os.fdopen(os.dup(self.fd), "rb", buffering=0)
        if not self._watchable():
            with stream:
                while line := await asyncio.to_thread(stream.readline):
                    yield line.decode("utf-8", errors="replace")
            return
        was_blocking = os.get_blocking(self.fd)
        reader = asyncio.StreamReader(limit=self.LIMIT)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), stream)
        try:
            while line := await reader.readline():
                yield line.decode("utf-8", errors="replace")
        finally:
            transport.close()
            with contextlib.suppress(OSError):  # a terminal shared with the shell stays as it was
                os.set_blocking(self.fd, was_blocking)


async def serve_stdio(state: MobileServerState, groups: Sequence[str], *, stop: asyncio.Event,
                      ready: Callable[[Listening], None] | None = None, stdin_fd: int = 0) -> None:
    """Open the phone, serve the tools of ``groups`` on standard input and output until the client
    closes its end or ``stop`` is set, close the phone.

    The phone is opened once the SDK has taken standard output for the protocol (it points file
    descriptor 1 at standard error meanwhile), so nothing a library prints while connecting (adb
    starting its server, uiautomator2 installing its app) can land among the messages.

    Raises:
        DeviceError: the phone could not be opened.
    """
    server = build_server(state, groups)
    lowlevel = server._lowlevel_server  # the SDK's own run loop; MCPServer.run_stdio_async cannot be stopped

    async def run() -> None:
        async with stdio_server(stdin=cast(Any, StdinLines(stdin_fd))) as (read_stream, write_stream):
            await state.open()
            try:
                if ready is not None:
                    ready(Listening())
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            finally:
                await state.close()

    task = asyncio.create_task(run(), name="mcp-stdio")
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([task, stopping], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not task.done():
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except BaseExceptionGroup as group:  # the SDK's task group wraps what the body raised
            raise only_error(group) from None


def only_error(error: BaseException) -> BaseException:
    """The one exception inside nested exception groups of one, else the group as it is."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


async def serve(state: MobileServerState, groups: Sequence[str], transport: Literal["stdio", "http"], *,
                sockets: Mapping[str, Bound] | None = None, stop: asyncio.Event | None = None,
                ready: Callable[[Listening], None] | None = None, limits: SessionLimits | None = None,
                token: str | None = None, log: Callable[[str], None] | None = None) -> None:
    """Open the phone, serve until ``stop`` is set (or the stdio client leaves), close the phone.
    Over HTTP, ``limits`` bound the sessions and ``token`` (when given) is asked of every request;
    stdio has one client and no sessions to bound.

    Raises:
        DeviceError: the phone could not be opened.
    """
    stop = stop if stop is not None else asyncio.Event()
    if transport == "stdio":
        await serve_stdio(state, groups, stop=stop, ready=ready)
        return
    if not sockets:
        raise ValueError("serving over HTTP needs a listening socket per group")
    await state.open()
    try:
        await serve_http(state, sockets, stop=stop, ready=ready, limits=limits, token=token, log=log)
    finally:
        await state.close()
