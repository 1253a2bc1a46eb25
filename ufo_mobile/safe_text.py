"""Text from the model, the screen or a file, made safe to print on a terminal.

A model's answer can contain newlines (forging a second "FINISH" line), ESC and OSC sequences
(moving the cursor, setting the window title) or bidirectional overrides (reordering what the
reader sees). ``printable`` escapes every such character visibly (``\\n``, ``\\x1b``, ``\\u202e``)
and bounds the length, saying how much was left out. Apply it after redaction, so a secret is
never partly shown by a cut.
"""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls; line and paragraph separators; bidi embeddings, overrides,
# isolates and marks (a terminal shows none of them, and several change what the rest looks like).
_WIDE = "\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c"
_UNSAFE = re.compile(f"[\x00-\x1f{_WIDE}]")
_UNSAFE_IN_JSON = re.compile(f"[{_WIDE}]")  # JSON already escapes the C0 controls
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cut_to(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out (nothing escaped)."""
    return text if len(text) <= limit else text[:limit] + _cut_note(len(text) - limit)


def _cut_note(left_out: int) -> str:
    return f"… [{left_out} more characters]"


def printable(text: str, limit: int | None = None) -> str:
    """``text`` on one line with control characters escaped, cut to about ``limit`` characters."""
    cut = ""
    if limit is not None and len(text) > limit:
        cut = _cut_note(len(text) - limit)
        text = text[:limit]
    return _UNSAFE.sub(_escape, text) + cut


def printable_lines(text: str) -> str:
    """Multi-line ``text`` with every line made printable (the line breaks themselves are kept)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def json_printable(text: str) -> str:
    """JSON text (from ``json.dumps``) with the characters JSON leaves raw but a terminal acts on
    (DEL, C1 controls, separators, bidi controls) written as ``\\uXXXX`` escapes: still valid JSON."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_UNSAFE_IN_BLOCK = re.compile(f"[\x00-\x08\x0b-\x1f{_WIDE}]")  # keeps \t and \n


def printable_block(text: str, limit: int | None = None) -> str:
    """Multi-line ``text`` for a page: line breaks and tabs kept (CRLF read as LF), every other
    control or bidi character escaped visibly, cut to about ``limit`` characters like ``printable``."""
    text = text.replace("\r\n", "\n")
    cut = ""
    if limit is not None and len(text) > limit:
        cut = _cut_note(len(text) - limit)
        text = text[:limit]
    return _UNSAFE_IN_BLOCK.sub(_escape, text) + cut
