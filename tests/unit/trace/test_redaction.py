"""Secrets are redacted in every form a run writes them, and printed text cannot drive a terminal."""

from __future__ import annotations

import json
import shlex
from xml.sax.saxutils import escape

import pytest

from ufo_mobile.core.trace.writer import REDACTED, Redactor
from ufo_mobile.safe_text import json_printable, printable

SECRETS = ["sk-plain-0123456789abcdef", 'sk-"quoted"\\back\\slash-0123', "sk-ünïcode-ключ-0123", "sk-it's-0123"]


@pytest.mark.parametrize("secret", SECRETS)
def test_escaped_forms_are_redacted(secret: str) -> None:
    redactor = Redactor([secret])
    forms = [secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret),
             shlex.quote(secret), escape(secret, {'"': "&quot;", "'": "&apos;"}), escape(secret, {'"': "&quot;"})]
    for form in forms:
        out = redactor.text(f"before {form} after")
        assert REDACTED in out, form
        for piece in ("0123", "sk-"):
            assert piece not in out, (form, out)


def test_nested_data_is_redacted() -> None:
    redactor = Redactor(["s3cr3t-value"])
    assert redactor.data({"a": ["x s3cr3t-value", {"b": "s3cr3t-value"}], "n": 3}) == {
        "a": [f"x {REDACTED}", {"b": REDACTED}], "n": 3}


@pytest.mark.parametrize(("text", "shown"), [
    ("done.\nFINISH after 9 steps", "done.\\nFINISH after 9 steps"),
    ("\x1b]0;owned\x07title", "\\x1b]0;owned\\x07title"),
    ("\x1b[2J\x1b[Hclear", "\\x1b[2J\\x1b[Hclear"),
    ("csi\x9b31m", "csi\\x9b31m"),
    ("abc\u202edcba", "abc\\u202edcba"),
    ("tab\tand\rcr", "tab\\tand\\rcr"),
    ("日本語 ok 🙂", "日本語 ok 🙂"),
])
def test_printable_escapes_what_a_terminal_would_act_on(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_printable_bounds_the_length_and_says_so() -> None:
    assert printable("x" * 1_000_000, 10) == "x" * 10 + "… [999990 more characters]"


def test_json_stays_valid_json() -> None:
    text = json.dumps({"label": "a\u202eb\x85c\nd"}, ensure_ascii=False)
    safe = json_printable(text)
    assert "\u202e" not in safe and "\x85" not in safe
    assert json.loads(safe) == {"label": "a\u202eb\x85c\nd"}
