"""Sub-agent replies: the TextManipulator's <text> element and the one ```python block of code."""

from __future__ import annotations

import pytest

from ufo_mobile.core.llm.subagent_reply import SubAgentReplyError, parse_code_reply, parse_text_reply
from ufo_mobile.errors import LLMOutputParseError


@pytest.mark.parametrize(("reply", "text"), [
    ("<text>Hi all</text>", "Hi all"),
    ("Here you go:\n<text>\nLine one\n  indented line two\n</text>\nDone.", "Line one\n  indented line two"),
    ("<TEXT>\r\n  spaces kept  \r\n</TEXT>", "  spaces kept  "),
    ("<text></text>", ""),
    ("<text>\n\nblank lines around\n\n</text>", "\nblank lines around\n"),
    ("<text>a < b and <b>tags</b></text>", "a < b and <b>tags</b>"),
])
def test_the_new_text_is_kept_as_written(reply: str, text: str) -> None:
    assert parse_text_reply(reply) == text


@pytest.mark.parametrize(("reply", "fragment"), [
    ("Hi all", "no <text> element"),
    ("<text>one</text><text>two</text>", "2 <text> tags"),
    ("<text>one</text> and </text>", "2 <text> tags"),
    ("<text>never closed", "<text> is never closed"),
    ("</text>backwards<text>", "<text> is never closed"),
])
def test_text_errors(reply: str, fragment: str) -> None:
    with pytest.raises(SubAgentReplyError) as info:
        parse_text_reply(reply)
    assert fragment in str(info.value) and "\n" not in str(info.value) and info.value.raw == reply
    assert isinstance(info.value, ValueError) and isinstance(info.value, LLMOutputParseError)


@pytest.mark.parametrize(("reply", "code"), [
    ("```python\nprint(1)\n```", "print(1)"),
    ("Sure:\n\n```Python\n\nimport json\nif True:\n    print(json.dumps({}))\n\n```\nThat prints {}.",
     "import json\nif True:\n    print(json.dumps({}))"),
    ("```py\nx = 1\n```", "x = 1"),
    ("````python\ns = '''\n```\n'''\n````", "s = '''\n```\n'''"),  # a longer fence holds a shorter one
    ("Output will look like:\n```text\n42\n```\n```python3\nprint(42)\n```", "print(42)"),
])
def test_the_one_python_block(reply: str, code: str) -> None:
    assert parse_code_reply(reply) == code


@pytest.mark.parametrize(("reply", "fragment"), [
    ("print(1)", "no ```python block"),
    ("```\nprint(1)\n```", "not marked as Python"),
    ("```python\na()\n```\nand\n```python\nb()\n```", "2 ```python blocks"),
    ("```python\nprint(1)\n", "never closed"),
    ("```python\n\n   \n```", "is empty"),
])
def test_code_errors(reply: str, fragment: str) -> None:
    with pytest.raises(SubAgentReplyError) as info:
        parse_code_reply(reply)
    assert fragment in str(info.value) and "\n" not in str(info.value) and info.value.raw == reply


def test_megabyte_replies() -> None:
    assert parse_code_reply("```python\n" + "x = 1\n" * 200_000 + "```") .count("\n") == 199_999
    with pytest.raises(SubAgentReplyError):
        parse_code_reply("```\n" * 500_000)
    with pytest.raises(SubAgentReplyError):
        parse_text_reply("<text" * 200_000)
