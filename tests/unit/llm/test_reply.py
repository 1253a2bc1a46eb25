from __future__ import annotations

import pytest

from ufo_mobile.core.llm.reply import parse_reply
from ufo_mobile.errors import LLMOutputParseError


def test_plain_json() -> None:
    r = parse_reply('{"status": "CONTINUE", "thought": "t", "action": {"name": "click", "args": {"index": 3}}}')
    assert r.status == "CONTINUE" and r.action is not None and r.action.args == {"index": 3}
    assert r.action.render() == "click(index=3)"


def test_fenced_json_with_prose_and_braces_in_strings() -> None:
    text = 'Sure!\n```json\n{"status": "finish", "result": "done {really}", "thought": "a \\"quote\\""}\n```\nbye'
    r = parse_reply(text)
    assert r.status == "FINISH" and r.result == "done {really}"


def test_unknown_status_is_kept_for_the_state_machine() -> None:
    assert parse_reply('{"status": "pause", "result": "x"}').status == "PAUSE"


@pytest.mark.parametrize(("text", "fragment"), [
    ("no json here", "no JSON object"),
    ('{"status": "CONTINUE", ', "not closed"),
    ('{"status": CONTINUE}', "invalid JSON"),
    ('{"status": "CONTINUE", "thought": "x"}', "reply: status CONTINUE needs at least one action in 'actions'"),
    ('{"status": "FINISH"}', "needs a non-empty 'result'"),
    ('{"status": "FAIL", "result": "  "}', "needs a non-empty 'result'"),
    ('{"thought": "x"}', "status: "),  # a field pydantic refused: the path is ours, the words after it pydantic's
    ('{"status": "CONTINUE", "action": {"args": {}}}', "actions.0.name: "),
    ('{"status": "CONTINUE", "action": {"name": "click", "args": [1]}}', "actions.0.args: "),
])
def test_errors_say_what_to_fix(text: str, fragment: str) -> None:
    with pytest.raises(LLMOutputParseError) as info:
        parse_reply(text)
    assert fragment in str(info.value)
    if fragment.endswith(": "):  # the one field named first, then the problem
        assert str(info.value).startswith(fragment) and str(info.value).removeprefix(fragment).strip()
    assert info.value.raw == text
