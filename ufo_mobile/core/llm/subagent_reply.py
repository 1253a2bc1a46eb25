"""Replies of the sub-agents: the TextManipulator's new field text, and the code of the Scripter
and of CodeAct.

The TextManipulator answers with the whole new text of the focused field in one
``<text>...</text>`` element; CodeAct and the Scripter answer with one fenced ```` ```python ````
block. Prose around either is ignored; anything ambiguous (two elements, two blocks, an unclosed
one) is an error whose message is one line saying what to fix, ready for the corrective re-ask.
"""

from __future__ import annotations

import re

from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.safe_text import printable

_TEXT_OPEN = re.compile(r"<text\s*>", re.IGNORECASE)
_TEXT_CLOSE = re.compile(r"</text\s*>", re.IGNORECASE)
_PYTHON = frozenset({"python", "python3", "py"})
_FENCE = re.compile(r"^ {0,3}(`{3,})(.*)$")


class SubAgentReplyError(LLMOutputParseError, ValueError):
    """A sub-agent's reply breaks its format; ``str()`` is one line telling the model what to fix."""


def _error(message: str, raw: str) -> SubAgentReplyError:
    return SubAgentReplyError(printable(message, 400), raw=raw)


def parse_text_reply(reply: str) -> str:
    """The new text of the field: what is inside the one ``<text>...</text>`` of ``reply``.

    The content is kept as written, except for one line break right after ``<text>`` and one right
    before ``</text>`` (models put the tags on lines of their own). An empty element clears the field.

    Raises:
        SubAgentReplyError: no element, more than one, or one that is not closed.
    """
    opens = list(_TEXT_OPEN.finditer(reply))
    closes = list(_TEXT_CLOSE.finditer(reply))
    if not opens:
        raise _error("the reply has no <text> element: answer with the complete new text of the field "
                     "inside <text>...</text>", reply)
    if len(opens) > 1 or len(closes) > 1:
        raise _error(f"the reply has {max(len(opens), len(closes))} <text> tags: give the new text once, "
                     "inside a single <text>...</text>", reply)
    if not closes or closes[0].start() < opens[0].end():
        raise _error("<text> is never closed: end the new text with </text>", reply)
    content = reply[opens[0].end() : closes[0].start()]
    content = content.removeprefix("\r\n") if content.startswith("\r\n") else content.removeprefix("\n")
    content = content.removesuffix("\r\n") if content.endswith("\r\n") else content.removesuffix("\n")
    return content


def _fenced_blocks(reply: str) -> list[tuple[str, list[str], bool]]:
    """Every fenced block as (language, lines, closed), in order (CommonMark-style fences)."""
    blocks: list[tuple[str, list[str], bool]] = []
    lines = reply.splitlines()
    i = 0
    while i < len(lines):
        opener = _FENCE.match(lines[i])
        i += 1
        if opener is None:
            continue
        ticks, info = opener.group(1), opener.group(2).strip()
        language = info.split()[0].lower() if info else ""
        body: list[str] = []
        closed = False
        while i < len(lines):
            line = lines[i]
            i += 1
            closer = _FENCE.match(line)
            if closer is not None and len(closer.group(1)) >= len(ticks) and not closer.group(2).strip():
                closed = True
                break
            body.append(line)
        blocks.append((language, body, closed))
    return blocks


def parse_code_reply(reply: str) -> str:
    """The code of the one ```` ```python ```` block of ``reply`` (```` ```py ```` works too).

    Raises:
        SubAgentReplyError: no Python block, more than one, an unclosed or an empty one.
    """
    blocks = _fenced_blocks(reply)
    python = [block for block in blocks if block[0] in _PYTHON]
    if not python:
        if blocks:
            raise _error("the code block is not marked as Python: start it with ```python on its own line", reply)
        raise _error("the reply has no ```python block: put the code in one block that starts with ```python "
                     "and ends with ```", reply)
    if len(python) > 1:
        raise _error(f"the reply has {len(python)} ```python blocks: put all the code in one block", reply)
    _, lines, closed = python[0]
    if not closed:
        raise _error("the ```python block is never closed: end it with a line of ```", reply)
    code = "\n".join(lines).strip("\n").rstrip()
    if not code.strip():
        raise _error("the ```python block is empty: write the code in it", reply)
    return code
