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


# --- replies that read the screen -------------------------------------------------------------------

SETTINGS_SCREEN = """Step budget: 1 of 8 steps used.

App com.android.settings, screen 1080x2400 px, keyboard hidden.
1 TextView "09:41" [48,0,220,84]
2 LinearLayout "Battery 87 percent." [660,0,1044,84]
3 TextView "Settings" [0,84,1080,252]
4 RecyclerView res=recycler_view scroll [0,252,1080,2334]
  5 LinearLayout click [0,252,1080,412]
    6 TextView "Wi-Fi" [48,260,1032,325]
    7 TextView "Off" [48,325,1032,376]
  8 LinearLayout click [0,600,1080,768]
    9 TextView "Airplane mode" [48,636,852,701]
    10 Switch "Airplane mode" check=off [852,636,1032,732]
  11 EditText desc="Say \\"hi\\"" hint="Search settings" edit focused [0,800,1080,900]
  12 Switch "Use Wi-Fi" click check=on [0,900,1080,1000]

Reply with the JSON object for your next turn.
[image: annotated screenshot obs-0002-2]"""
OLD_SCREEN = ("App com.android.launcher3, screen 1080x2400 px, keyboard hidden.\n"
              '1 TextView "Wi-Fi" [0,0,9,9]')


def seeing(screen: str = SETTINGS_SCREEN) -> list[ChatMessage]:
    """A conversation as the agent sends it: an older screen first, the current one last."""
    return [ChatMessage(role="system", content="App x, screen 1x1 px, the system prompt."),
            ChatMessage(role="user", content=OLD_SCREEN), ChatMessage(role="assistant", content="{}"),
            ChatMessage(role="user", content=screen)]


def tap(index: object, text: str) -> dict[str, object]:
    return {"status": "CONTINUE", "actions": [{"name": "click", "args": {"index": index, "text": text}}]}


async def test_a_label_becomes_the_number_of_its_row_on_the_screen_it_is_sent() -> None:
    model = ScriptedModel(Script(replies=[tap({"label": "Wi-Fi"}, "Wi-Fi"), tap({"label": "wi-fi"}, "Off"),
                                          tap({"label": "Airplane mode", "nth": 2}, "x"),
                                          tap({"label": 'Say "hi"'}, "x"), tap({"label": "Use Wi-Fi"}, "x")]))
    numbers = [json.loads((await model.complete(seeing())).text)["actions"][0]["args"]["index"] for _ in range(5)]
    # the row around a plain label; the switch itself when it is the second one; a field by its
    # description; a tappable control itself
    assert numbers == [5, 5, 8, 11, 12]


async def test_a_label_inside_a_text_reply_becomes_the_number() -> None:
    model = ScriptedModel(Script(replies=['```python\nclick(index={{label: Wi-Fi}}, text="Wi-Fi")\n```',
                                          "<plan>1. Tap {{ label: Search settings }}</plan>"]))
    assert (await model.complete(seeing())).text == '```python\nclick(index=5, text="Wi-Fi")\n```'
    assert (await model.complete(seeing())).text == "<plan>1. Tap 11</plan>"


async def test_a_label_the_screen_does_not_show_stops_with_the_label_and_the_reply() -> None:
    model = ScriptedModel(Script(replies=[tap({"label": "Wi-Fi"}, "Wi-Fi"), tap({"label": "Bluetooth"}, "x")]),
                          name="scripted:demo.yaml")
    await model.complete(seeing())
    with pytest.raises(LLMError) as caught:
        await model.complete(seeing())
    message = str(caught.value)
    assert message.startswith("reply 2 of scripted:demo.yaml ({")
    assert "the screen does not show a control labelled 'Bluetooth'; it shows: '09:41', " in message
    with pytest.raises(LLMError, match="reply 1 of scripted reads the screen, but the prompt has no screen list"):
        await ScriptedModel(Script(replies=[tap({"label": "Wi-Fi"}, "Wi-Fi")])).complete(HELLO)


async def test_a_reply_that_expects_a_screen_is_sent_only_when_the_screen_shows_it() -> None:
    finish = {"expect": {"label": "Use Wi-Fi", "flag": "check=on"}, "reply": {"status": "FINISH", "result": "on"}}
    model = ScriptedModel(Script(replies=[finish], repeat_last=True))
    assert json.loads((await model.complete(seeing())).text) == {"status": "FINISH", "result": "on"}
    with pytest.raises(LLMError, match="does not show a control labelled 'Use Wi-Fi' with check=on"):
        await model.complete(seeing(SETTINGS_SCREEN.replace("click check=on", "click check=off")))
    plain = ScriptedModel(Script(replies=[{"expect": {"label": "Airplane mode"}, "reply": "text"}]))
    assert (await plain.complete(seeing())).text == "text"  # any control with the label, flags not asked
    wrong = ScriptedModel(Script(replies=[{"expect": "Use Wi-Fi", "reply": "text"}]))
    with pytest.raises(LLMError, match=r"reply 1 of scripted: 'expect' must be \{label: \.\.\., flag: \.\.\.\}"):
        await wrong.complete(seeing())


async def test_replies_without_labels_never_read_the_prompt() -> None:
    model = ScriptedModel(Script(replies=[tap(3, "Wi-Fi"), "{{not a label}}"]))
    assert json.loads((await model.complete(HELLO)).text) == tap(3, "Wi-Fi")
    assert (await model.complete(HELLO)).text == "{{not a label}}"
