"""The MCP servers' book of sessions: a bound per client address (its least recently used idle session
makes room), a bound for all clients (the biggest holder's idle session makes room), busy sessions
never closed, and the fixed bearer token."""

from __future__ import annotations

import pytest

from ufo_mobile.host.mcp.limits import SessionLimits
from ufo_mobile.host.mcp.sessions import TOKEN_CLIENT, SessionBook, StaticTokenVerifier


def open_session(book: SessionBook, client: str, session_id: str) -> list[str] | None:
    """``client`` opens ``session_id``; the sessions closed to make room (None: refused)."""
    victims = book.admit(client)
    if victims is None:
        return None
    book.opened(client, session_id, [], None)
    return [victim for victim, _ in victims]


def test_a_client_at_its_bound_loses_its_least_recently_used_idle_session() -> None:
    book = SessionBook(SessionLimits(per_client=3, total=10))
    assert [open_session(book, "10.0.0.1", f"a{n}") for n in range(3)] == [[], [], []]
    assert open_session(book, "10.0.0.2", "b0") == []
    assert book.begin("a0")  # a request for a0: now a1 is the least recently used
    book.end("a0")
    assert open_session(book, "10.0.0.1", "a3") == ["a1"]
    assert (book.held("10.0.0.1"), book.held("10.0.0.2"), book.live) == (3, 1, 4)
    assert "a1" not in book.sessions and not book.begin("a1")


def test_busy_sessions_are_never_closed_and_openings_count() -> None:
    book = SessionBook(SessionLimits(per_client=2, total=10))
    open_session(book, "c", "s0")
    open_session(book, "c", "s1")
    assert book.begin("s0") and book.begin("s1")  # both serving a request (a GET stream, say)
    assert book.admit("c") is None
    book.end("s1")
    assert book.admit("c") is not None and book.live == 2  # s1 made room; the opening holds its place
    assert book.admit("c") is None  # s0 busy, the other place taken by the opening still in flight
    book.opened("c", None, [], None)  # that opening failed: no session
    assert book.live == 1 and book.held("c") == 1


def test_at_the_total_bound_the_biggest_holder_makes_room() -> None:
    book = SessionBook(SessionLimits(per_client=4, total=6))
    for n in range(4):
        open_session(book, "flood", f"f{n}")
    open_session(book, "ufo", "u0")
    open_session(book, "ufo", "u1")
    assert open_session(book, "newcomer", "n0") == ["f0"]  # not one of the smaller holder's
    assert open_session(book, "ufo", "u2") == ["f1"]
    assert {c: book.held(c) for c in ("flood", "ufo", "newcomer")} == {"flood": 2, "ufo": 3, "newcomer": 1}
    assert book.live == 6
    book.forget("u2")
    assert book.held("ufo") == 2 and book.live == 5


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="per_client"):
        SessionLimits(per_client=5, total=4)
    with pytest.raises(ValueError, match="idle_seconds"):
        SessionLimits(idle_seconds=0)


async def test_the_token_is_compared_as_a_whole() -> None:
    verifier = StaticTokenVerifier("s3cret-token")
    granted = await verifier.verify_token("s3cret-token")
    assert granted is not None and granted.client_id == TOKEN_CLIENT and "s3cret" not in granted.token
    for wrong in ("", "s3cret", "s3cret-token2", "S3CRET-TOKEN", "s3cret-tokén"):
        assert await verifier.verify_token(wrong) is None
