"""The task service's handshake check: who may open a connection.

A token travels the way UFO's own server takes it, as ``?token=KEY`` in the WebSocket URL (a Galaxy
constellation can send it no other way), or as an ``Authorization: Bearer KEY`` header. With a token
configured, a handshake must carry it, and every credential it carries must be that token (compared in
constant time, as bytes); without one configured, a handshake that carries a token is refused, so a
client that believes it is authenticated learns that the server is open. A refusal is HTTP 403 with a
one-line reason in the body, as a UFO server's own refusal reaches a client (its ``websockets``
connect raises ``InvalidStatus``, which Galaxy's connection manager reports as a failed connection).
``on_refused`` hears the peer's address and why, never what the client sent: the URL's query is never
logged, here or by the ``websockets`` server (its handshake lines are debug ones, which the service
does not pass on).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

QUERY_KEY = "token"
NO_VALID_TOKEN = "no valid token"
OPEN_SERVER = "it carries a token, and this server runs without one"

Check = Callable[[ServerConnection, Request], Response | None]


def credentials(request: Request) -> list[str]:
    """Every token the handshake carries: each ``token`` in the URL's query and the bearer header's."""
    query = urlsplit(request.path).query
    found = [value for key, value in parse_qsl(query, keep_blank_values=True) if key == QUERY_KEY]
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, given = header.partition(" ")
        # a header that is not a bearer token is a credential of a kind this server never accepts
        found.append(given.strip() if scheme.lower() == "bearer" else "\0" + header)
    return found


def peer_address(connection: ServerConnection) -> str:
    where = connection.remote_address
    return f"{where[0]}:{where[1]}" if isinstance(where, tuple) and len(where) >= 2 else "?"


def token_check(token: str | None, on_refused: Callable[[str, str], None]) -> Check:
    """The handshake check for a service with ``token`` (None: without authentication).
    ``on_refused(address, why)`` hears each refusal."""
    expected = token.encode("utf-8") if token is not None else None

    def refuse(connection: ServerConnection, why: str, body: str) -> Response:
        on_refused(peer_address(connection), why)
        return connection.respond(HTTPStatus.FORBIDDEN, body + "\n")

    def check(connection: ServerConnection, request: Request) -> Response | None:
        given = credentials(request)
        if expected is None:
            if not given:
                return None
            return refuse(connection, OPEN_SERVER,
                          "this server runs without a token; connect without one (no ?token= and no "
                          "Authorization header), or ask its operator to set UFO_MOBILE_SERVE_TOKEN")
        # every credential is compared, so the time taken says nothing about which one was wrong
        matches = [hmac.compare_digest(value.encode("utf-8", "replace"), expected) for value in given]
        if given and all(matches):
            return None
        return refuse(connection, NO_VALID_TOKEN,
                      "a valid token is required: ?token=<token> in the URL, or Authorization: Bearer <token>")

    return check
