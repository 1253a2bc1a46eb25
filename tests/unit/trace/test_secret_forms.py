"""A secret is caught in the encodings code or a model could give it (base64 at any alignment, hex,
URL encoding), and one taken from the environment is gone from it, also from /proc/<pid>/environ."""

from __future__ import annotations

import base64
import binascii
import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from ufo_mobile.core.trace.writer import REDACTED, Redactor

KEY = "sk-test-0123456789abcdefghijKLMNOP"


@pytest.mark.parametrize("prefix", [b"", b"k", b"ke", b"key=", b"Authorization: Bearer "])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_base64_of_a_payload_holding_the_secret_loses_it(prefix: bytes, encode: object) -> None:
    payload = encode(prefix + KEY.encode() + b"&rest")  # type: ignore[operator]
    shown = Redactor([KEY]).text(payload.decode())
    assert REDACTED in shown
    # what is left cannot be decoded back to the key at any alignment
    for offset in range(4):
        try:
            decoded = base64.b64decode(shown.replace(REDACTED, "")[offset:] + "===", altchars=b"-_")
        except (binascii.Error, ValueError):
            continue
        assert KEY.encode()[4:20] not in decoded


@pytest.mark.parametrize("form", [KEY.encode().hex(), KEY.encode().hex().upper(), urllib.parse.quote(KEY, safe=""),
                                  urllib.parse.quote_plus(KEY)])
def test_hex_and_url_encoding(form: str) -> None:
    assert Redactor([KEY]).text(f"sent={form};") == f"sent={REDACTED};"


def test_a_taken_variable_is_gone_from_the_environment_and_from_proc_environ(tmp_path: Path) -> None:
    if not Path("/proc/self/environ").exists():
        pytest.skip("needs /proc to read a process's initial environment")
    ready = tmp_path / "ready"
    child = subprocess.Popen(
        [sys.executable, "-c", "import os, sys, time\nfrom ufo_mobile.secret_env import take, environ\n"
         "value = take('UFO_TEST_KEY')\n"
         "assert 'UFO_TEST_KEY' not in os.environ and environ()['UFO_TEST_KEY'] == value\n"
         f"open({str(ready)!r}, 'w').write(value)\ntime.sleep(60)"],
        env={**os.environ, "UFO_TEST_KEY": KEY, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    try:
        for _ in range(1200):
            if ready.exists() and ready.read_text() == KEY:
                break
            if child.poll() is not None:
                raise AssertionError(f"the child ended with {child.returncode}")
            time.sleep(0.05)
        assert ready.read_text() == KEY  # the runtime still has the value
        assert KEY.encode() not in Path(f"/proc/{child.pid}/environ").read_bytes()
    finally:
        child.kill()
        child.wait()
