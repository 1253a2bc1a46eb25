from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.errors import ConfigError, LLMError

HELLO = [ChatMessage(role="user", content="hi")]


async def test_replays_in_order_and_records_calls() -> None:
    model = ScriptedModel(Script(replies=[{"status": "FINISH", "result": "ok"}, "raw text"]))
    first = await model.complete(HELLO)
    assert json.loads(first.text) == {"status": "FINISH", "result": "ok"}
    assert (await model.complete(HELLO)).text == "raw text"
    assert first.usage.total_tokens == 0
    assert len(model.calls) == 2
    with pytest.raises(LLMError, match="no reply left"):
        await model.complete(HELLO)


async def test_repeat_last() -> None:
    model = ScriptedModel(Script(replies=["a", "b"], repeat_last=True))
    assert [(await model.complete(HELLO)).text for _ in range(4)] == ["a", "b", "b", "b"]


def test_from_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text("replies: []\n")
    with pytest.raises(ConfigError, match=r"s.yaml: replies"):
        ScriptedModel.from_file(bad)
    bad.write_text("replies: [\n")
    with pytest.raises(ConfigError, match=r"s.yaml:2: invalid YAML"):
        ScriptedModel.from_file(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        ScriptedModel.from_file(tmp_path / "missing.yaml")


async def test_a_reply_held_until_its_file_exists(tmp_path: Path) -> None:
    go = tmp_path / "go"
    model = ScriptedModel(Script(replies=[{"after_file": str(go), "reply": {"status": "FINISH", "result": "ok"}}]))
    reply = asyncio.ensure_future(model.complete(HELLO))
    for _ in range(5):  # the model looks for the file and goes on waiting
        await asyncio.sleep(0)
    assert not reply.done()
    go.touch()
    assert json.loads((await asyncio.wait_for(reply, 60)).text) == {"status": "FINISH", "result": "ok"}
