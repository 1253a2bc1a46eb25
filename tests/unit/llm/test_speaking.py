"""A scripted JSON reply said in another format (``speaking.py``) reads back, through that format's
own reader, as the same action: a point within a pixel of the one meant, on any screen and picture
size; and a reply with several turns is said one turn at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ufo_mobile.core.llm.reply import AgentReply
from ufo_mobile.core.llm.speaking import Move, moves, say
from ufo_mobile.core.processors.autoglm import parse_autoglm
from ufo_mobile.core.processors.pointing import on_grid
from ufo_mobile.core.processors.qwen_vl import GRID3, parse_qwen_vl
from ufo_mobile.core.processors.ui_tars import parse_ui_tars
from ufo_mobile.errors import LLMError

READERS: dict[str, Callable[[str, tuple[int, int], tuple[int, int]], AgentReply]] = {
    "ui-tars": parse_ui_tars,
    "qwen-vl": parse_qwen_vl,
    "qwen3-vl": lambda text, picture, screen: parse_qwen_vl(text, (GRID3, GRID3), screen),
    "autoglm": lambda text, picture, screen: parse_autoglm(text, screen),
}
SCREENS = [(1080, 2400), (720, 1600), (2400, 1080)]


def picture_for(screen: tuple[int, int]) -> tuple[int, int]:
    """The screen shrunk to at most 1280 px on its long side, on the 28-pixel grid (as a run sends it)."""
    scale = min(1.0, 1280 / max(screen))
    return on_grid((round(screen[0] * scale), round(screen[1] * scale)))


def read(fmt: str, move: Move, point: tuple[int, int] | None, screen: tuple[int, int]) -> AgentReply:
    picture = picture_for(screen)
    return READERS[fmt](say(fmt, move, "Next.", point, screen, picture), picture, screen)


@pytest.mark.parametrize("fmt", list(READERS))
@pytest.mark.parametrize("screen", SCREENS)
def test_a_point_reads_back_within_a_pixel(fmt: str, screen: tuple[int, int]) -> None:
    width, height = screen
    for point in [(0, 0), (width - 1, height - 1), (width // 2, height // 3), (137, 911 % height), (width - 5, 7)]:
        for kind, name in (("tap", "click_at"), ("long_press", "long_press_at")):
            action = read(fmt, Move(kind), point, screen).actions[0]
            assert action.name == name
            assert abs(action.args["x"] - point[0]) <= 1 and abs(action.args["y"] - point[1]) <= 1, (point, action)


@pytest.mark.parametrize("fmt", list(READERS))
def test_every_other_turn_reads_back_as_the_same_action(fmt: str) -> None:
    screen = (1080, 2400)

    def actions(move: Move) -> list[tuple[str, dict[str, Any]]]:
        return [(a.name, a.args) for a in read(fmt, move, None, screen).actions]

    text = "It's \"quoted\", and back\\slashed"
    assert actions(Move("type", text=text)) == [("type", {"text": text, "clear": True})]
    assert actions(Move("key", text="back")) == [("system_button", {"button": "back"})]
    assert actions(Move("key", text="home")) == [("system_button", {"button": "home"})]
    assert actions(Move("open", text="Settings")) == [("open_app", {"text": "Settings"})]
    for status in ("FINISH", "FAIL"):
        reply = read(fmt, Move("end", status=status, text="No network named 'x'."), None, screen)
        assert (reply.status, reply.result, reply.actions) == (status, "No network named 'x'.", [])
    if fmt != "autoglm":
        assert actions(Move("key", text="enter")) == [("system_button", {"button": "enter"})]
    else:  # AutoGLM has no enter key: the script says what to do instead (``otherwise``)
        with pytest.raises(LLMError, match="autoglm format has no way to say .* key enter"):
            read(fmt, Move("key", text="enter"), None, screen)


def test_json_without_a_control_list_taps_by_screen_pixels() -> None:
    said = say("json", Move("tap", index=4), "Open it.", (540, 1200), (1080, 2400), None)
    assert AgentReply.model_validate_json(said).actions[0].model_dump() == {
        "name": "click_at", "args": {"x": 540, "y": 1200}, "confirm": False}
    typed = say("json", Move("type", text="hi", clear=False), "Type.", None, (1080, 2400), None)
    assert AgentReply.model_validate_json(typed).actions[0].args == {"text": "hi", "clear": False}


def test_a_reply_becomes_a_turn_for_each_thing_a_pointing_model_does() -> None:
    reply = {"status": "CONTINUE", "thought": "Type and send.",
             "actions": [{"name": "type", "args": {"index": 3, "text": "hello", "clear": True}},
                         {"name": "click", "args": {"index": 4, "text": "Send"}}]}
    turns = moves(reply)
    assert [(m.kind, m.index, m.label, m.text, m.fresh) for m in turns] == [
        ("tap", 3, None, "", True), ("type", None, None, "hello", False), ("tap", 4, "Send", "", False)]
    assert [m.kind for m in moves(reply, focused=lambda index: index == 3)] == ["type", "tap"]  # no tap first
    assert moves({"status": "FINISH", "result": "Sent."}) == [Move("end", status="FINISH", text="Sent.")]
    with pytest.raises(LLMError, match="'run_script' has no turn"):
        moves({"status": "CONTINUE", "action": {"name": "run_script", "args": {}}})
