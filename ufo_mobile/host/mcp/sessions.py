"""Bounds on the MCP HTTP servers' sessions, per client and in all, and the optional bearer token.

The ``mcp`` SDK's streamable HTTP session manager already has an idle timeout
(``session_idle_timeout``) and a cap on the sessions open at once (``max_sessions``); both are set from
``SessionLimits``. What it lacks is a bound per client: at its cap it refuses every new session, so one
client that opens sessions and never closes them locks everyone else out until they expire. The
``SessionGuard`` middleware adds that. Sessions are counted by the client's address (``SessionBook``):
a client at its bound gets its own least recently used idle session closed (a DELETE, as the client
would send) to make room; when all sessions together are at the cap, the idle session used least
recently by the client that holds the most goes. A new session is refused (503) only when every
session it could replace is serving a request right now.

The token is the SDK's bearer authentication (a ``TokenVerifier`` comparing in constant time), so a
request without it is answered 401 by the SDK before the guard counts it for anything.
"""

from __future__ import annotations

import hmac
import json
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ufo_mobile.host.mcp.limits import SessionLimits

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
TOKEN_CLIENT = "ufo_mobile-token"  # the one principal a valid token stands for
NOTE_EVERY = 60.0  # seconds between two log lines about the same client and the same thing


@dataclass
class _Session:
    client: str
    replay: list[tuple[bytes, bytes]]  # the headers a DELETE of it needs (Host, Origin), from its opening
    user: object  # the scope's user when it opened (the SDK binds a session to its credential)
    busy: int = 0  # its requests in flight


@dataclass
class SessionBook:
    """The sessions the guard let open, by client address, least recently used first.

    A session the SDK closed by itself (its idle timeout) stays in the book until a request for it
    answers 404 or it is chosen to make room; closing it then costs a DELETE that answers 404.
    """

    limits: SessionLimits = field(default_factory=SessionLimits)
    sessions: dict[str, _Session] = field(default_factory=dict)
    by_client: dict[str, OrderedDict[str, None]] = field(default_factory=dict)
    opening: Counter[str] = field(default_factory=Counter)  # opening requests in flight, per client

    @property
    def live(self) -> int:
        """Sessions open (or being opened) as far as the guard knows; never more than ``limits.total``."""
        return len(self.sessions) + self.opening.total()

    def held(self, client: str) -> int:
        return len(self.by_client.get(client, ())) + self.opening[client]

    def admit(self, client: str) -> list[tuple[str, _Session]] | None:
        """Reserve room for a session ``client`` is opening: the sessions to close first (taken out of
        the book at once, so concurrent openings never pick the same), or None when there is no room.
        Every reservation ends in ``opened``."""
        victims: list[str] = []
        if self.held(client) >= self.limits.per_client:
            victim = self._oldest_idle(client)
            if victim is None:
                return None
            victims.append(victim)
        elif self.live >= self.limits.total:
            victim = self._idle_of_the_biggest()
            if victim is None:
                return None
            victims.append(victim)
        closing = [(victim, session) for victim in victims if (session := self.forget(victim)) is not None]
        self.opening[client] += 1
        return closing

    def opened(self, client: str, session_id: str | None, replay: list[tuple[bytes, bytes]], user: object) -> None:
        """The opening request of ``client`` ended; ``session_id`` is the session it opened, if any."""
        self.opening[client] -= 1
        if self.opening[client] <= 0:
            del self.opening[client]
        if session_id is not None and session_id not in self.sessions:
            self.sessions[session_id] = _Session(client, replay, user)
            self.by_client.setdefault(client, OrderedDict())[session_id] = None

    def begin(self, session_id: str) -> bool:
        """A request for ``session_id`` starts; False for a session the book does not know."""
        session = self.sessions.get(session_id)
        if session is None:
            return False
        session.busy += 1
        self.by_client[session.client].move_to_end(session_id)
        return True

    def end(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.busy -= 1

    def forget(self, session_id: str) -> _Session | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            mine = self.by_client[session.client]
            del mine[session_id]
            if not mine:
                del self.by_client[session.client]
        return session

    def _oldest_idle(self, client: str) -> str | None:
        return next((sid for sid in self.by_client.get(client, ()) if not self.sessions[sid].busy), None)

    def _idle_of_the_biggest(self) -> str | None:
        for client in sorted(self.by_client, key=lambda c: len(self.by_client[c]), reverse=True):
            victim = self._oldest_idle(client)
            if victim is not None:
                return victim
        return None


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one fixed bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._expected = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.strip().encode("utf-8", "replace"), self._expected):
            return None
        return AccessToken(token="-", client_id=TOKEN_CLIENT, scopes=[])  # the token itself is not kept


def client_of(scope: Scope) -> str:
    where = scope.get("client")
    return str(where[0]) if where else "?"


class SessionGuard:
    """ASGI middleware in front of the SDK's session manager (inside its authentication) that keeps
    ``book`` within its limits. ``log`` hears one line per client and kind of event a minute at most."""

    def __init__(self, app: ASGIApp, *, book: SessionBook, path: str, authenticated: bool = False,
                 log: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.book = book
        self.path = path
        self.authenticated = authenticated
        self.log = log
        self._noted: dict[tuple[str, str], float] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        if self.authenticated and not isinstance(scope.get("user"), AuthenticatedUser):
            self._note(client, "token", f"refused a request from {client}: no valid bearer token")
            await self.app(scope, receive, send)  # the SDK answers 401
            return
        version = _header(scope, VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.app(scope, receive, send)  # the modern protocol, which has no sessions (as the SDK routes it)
            return
        session_id = _header(scope, SESSION_HEADER)
        if session_id is None:
            await self._open(client, scope, receive, send)
            return
        known = self.book.begin(session_id)
        try:
            status, _ = await _forward(self.app, scope, receive, send)
        finally:
            if known:
                self.book.end(session_id)
        if status == 404 or (scope["method"] == "DELETE" and status is not None and status < 300):
            self.book.forget(session_id)

    async def _open(self, client: str, scope: Scope, receive: Receive, send: Send) -> None:
        victims = self.book.admit(client)
        if victims is None:
            limits = self.book.limits
            self._note(client, "full", f"refused a new MCP session from {client}: every session it could "
                                       f"replace is busy ({limits.per_client} per client, {limits.total} in all)")
            await _too_many(send)
            return
        session_id: str | None = None
        try:
            for victim, session in victims:
                await self._close(scope, victim, session)
            status, session_id = await _forward(self.app, scope, receive, send)
            if status is None or status >= 400:
                session_id = None
        finally:
            replay = [(k, v) for k, v in scope["headers"] if k in (b"host", b"origin")]
            self.book.opened(client, session_id, replay, scope.get("user"))

    async def _close(self, scope: Scope, session_id: str, session: _Session) -> None:
        """End ``session_id`` as its client would: a DELETE with its id (and the Host, Origin and
        credential it was opened with), through the SDK."""
        headers = [(SESSION_HEADER, session_id.encode("latin-1")), *session.replay]
        request: Scope = {**scope, "method": "DELETE", "headers": headers, "query_string": b"",
                          "user": session.user}

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            return None

        await self.app(request, receive, send)

    def _note(self, client: str, kind: str, line: str) -> None:
        if self.log is None:
            return
        now = time.monotonic()
        if now - self._noted.get((client, kind), -NOTE_EVERY) < NOTE_EVERY:
            return
        if len(self._noted) > 4096:
            self._noted.clear()
        self._noted[(client, kind)] = now
        self.log(line)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def _forward(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> tuple[int | None, str | None]:
    """Run ``app``; the HTTP status it answered with and the session id it named, if any."""
    status: int | None = None
    session_id: str | None = None

    async def watch(message: Message) -> None:
        nonlocal status, session_id
        if message["type"] == "http.response.start":
            status = int(message["status"])
            for key, value in message.get("headers", ()):
                if bytes(key).lower() == SESSION_HEADER:
                    session_id = bytes(value).decode("latin-1")
        await send(message)

    await app(scope, receive, watch)
    return status, session_id


async def _too_many(send: Send) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32603, "message": "Too many open sessions: every session this client could replace is busy"}})
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", b"5")]})
    await send({"type": "http.response.body", "body": body.encode()})
