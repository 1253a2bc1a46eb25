"""The task service's handshake check (``ufo_mobile/host/aip/auth.py``): the token as UFO's server and a
Galaxy constellation carry it (``?token=`` in the URL) or as a bearer header; a refusal is HTTP 403 and
what is logged is the peer and why, never the token; a server without a token refuses a handshake that
carries one."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from ufo_mobile.host.aip.auth import NO_VALID_TOKEN, OPEN_SERVER, token_check

TOKEN = "k3y-7b1e"


class FakeConnection:
    """A handshake's connection as the check uses it: the peer's address and ``respond``."""

    remote_address = ("203.0.113.9", 51000)

    def respond(self, status: HTTPStatus, text: str) -> Response:
        return Response(status.value, status.phrase, Headers(), text.encode())


def handshake(token: str | None, path: str, headers: dict[str, str] | None = None) -> tuple[Any, list[str]]:
    refused: list[str] = []
    check = token_check(token, lambda where, why: refused.append(f"{where}: {why}"))
    answer = check(FakeConnection(), Request(path, Headers(headers or {})))  # type: ignore[arg-type]
    return answer, refused


@pytest.mark.parametrize(("path", "headers"), [
    (f"/ws?token={TOKEN}", None),  # UFO's way, and the only one Galaxy's connection manager has
    (f"/?a=1&token={TOKEN}", None),
    ("/ws", {"Authorization": f"Bearer {TOKEN}"}),
    (f"/ws?token={TOKEN}", {"Authorization": f"bearer {TOKEN}"}),
])
def test_the_token_in_the_url_or_the_header_is_let_in(path: str, headers: dict[str, str] | None) -> None:
    assert handshake(TOKEN, path, headers) == (None, [])


@pytest.mark.parametrize(("path", "headers"), [
    ("/ws", None),
    ("/ws?token=", None),
    ("/ws?token=wrong", None),
    (f"/ws?token={TOKEN}x", None),
    (f"/ws?token={TOKEN}&token=wrong", None),  # every credential given must be the token
    (f"/ws?token={TOKEN}", {"Authorization": "Bearer wrong"}),
    ("/ws", {"Authorization": f"Basic {TOKEN}"}),
    (f"/ws?Token={TOKEN}", None),  # the query key is token, as UFO's server reads it
])
def test_no_valid_token_is_403_and_the_log_says_only_who_and_why(path: str, headers: dict[str, str] | None) -> None:
    answer, refused = handshake(TOKEN, path, headers)
    assert isinstance(answer, Response) and answer.status_code == 403
    assert refused == [f"203.0.113.9:51000: {NO_VALID_TOKEN}"]
    assert b"wrong" not in answer.body and TOKEN.encode() not in answer.body


@pytest.mark.parametrize(("path", "headers"), [
    (f"/ws?token={TOKEN}", None), ("/ws?token=", None), ("/ws", {"Authorization": f"Bearer {TOKEN}"})])
def test_a_server_without_a_token_refuses_one_rather_than_ignore_it(path: str, headers: dict[str, str] | None) -> None:
    answer, refused = handshake(None, path, headers)
    assert isinstance(answer, Response) and answer.status_code == 403
    assert answer.body.decode().startswith("this server runs without a token; connect without one")
    assert refused == [f"203.0.113.9:51000: {OPEN_SERVER}"]


def test_a_server_without_a_token_lets_in_a_handshake_without_one() -> None:
    assert handshake(None, "/ws?client=galaxy") == (None, [])
