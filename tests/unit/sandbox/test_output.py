from __future__ import annotations

from ufo_mobile.core.sandbox.output import BoundedOutput


def test_short_output_is_kept_whole() -> None:
    out = BoundedOutput(100)
    out.add(b"hello ")
    out.add("wörld\n".encode())
    assert out.text() == "hello wörld\n"


def test_a_flood_keeps_the_first_and_last_bytes_and_says_how_much_is_left_out() -> None:
    out = BoundedOutput(10)
    for i in range(1000):
        out.add(f"{i:04d}".encode())
    assert out.text() == "00000\n… [3990 bytes left out] …\n80999"  # ...0998 0999
    assert out.total == 4000


def test_undecodable_bytes_are_replaced() -> None:
    out = BoundedOutput(100)
    out.add(b"ok \xff\xfe end")
    assert out.text() == "ok \ufffd\ufffd end"
