"""The Qwen-VL mobile-use format's reading of replies: one ``mobile_use`` tool call, its coordinates in
pixels of the picture the model saw mapped to screen pixels within 1 px on phones of several sizes and
turned sideways; each of the tool's actions mapped to the runtime's; a reply it cannot use is a parse
error (re-asked once by the model phase)."""

from __future__ import annotations

import json

import pytest

from ufo_mobile.core.processors.pointing import on_grid
from ufo_mobile.core.processors.qwen_vl import parse_qwen_vl
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.settings import ModelSettings


def call(**arguments: object) -> str:
    return "I see the screen.\n<tool_call>\n" + json.dumps({"name": "mobile_use", "arguments": arguments}) + \
        "\n</tool_call>"


@pytest.mark.parametrize("screen", [(1080, 2400), (720, 1600), (2400, 1080)])
def test_a_coordinate_on_the_picture_lands_on_its_screen_pixel_within_one_pixel(screen: tuple[int, int]) -> None:
    picture = on_grid((round(screen[0] * 0.4741), round(screen[1] * 0.4741)))
    for fx in (0.0, 0.013, 0.5, 0.77, 0.999):
        for fy in (0.0, 0.5, 0.62, 0.999):
            px, py = round(fx * picture[0]), round(fy * picture[1])
            (action,) = parse_qwen_vl(call(action="click", coordinate=[px, py]), picture, screen).actions
            assert action.name == "click_at"
            assert abs(action.args["x"] - min(px / picture[0] * screen[0], screen[0] - 1)) <= 1
            assert abs(action.args["y"] - min(py / picture[1] * screen[1], screen[1] - 1)) <= 1


def test_each_action_of_mobile_use_becomes_the_runtimes() -> None:
    screen = picture = (1008, 1988)

    def read(**arguments: object) -> tuple[str, list[tuple[str, dict[str, object]]], str]:
        reply = parse_qwen_vl(call(**arguments), picture, screen)
        return str(reply.status), [(a.name, a.args) for a in reply.actions], reply.result

    assert read(action="long_press", coordinate=[504, 994], time=2)[1] == [("long_press_at", {"x": 504, "y": 994})]
    assert read(action="swipe", coordinate=[504, 1500], coordinate2=[504, 500])[1] == [
        ("swipe", {"coordinate": [504, 1500], "coordinate2": [504, 500]})]
    assert read(action="type", text="cats")[1] == [("type", {"text": "cats", "clear": True})]
    assert read(action="open", text="Settings")[1] == [("open_app", {"text": "Settings"})]
    assert read(action="system_button", button="Back")[1] == [("system_button", {"button": "back"})]
    assert read(action="system_button", button="Menu")[1] == [("system_button", {"button": "app_switch"})]
    assert read(action="key", text="volume_up")[1] == [("system_button", {"button": "volume_up"})]
    assert read(action="wait", time=3)[1] == [("wait", {"duration": 3})]
    assert read(action="terminate", status="success", text="Wi-Fi is on.") == (
        MobileAgentStatus.FINISH, [], "Wi-Fi is on.")
    assert read(action="terminate", status="failure", text="No such app.") == (
        MobileAgentStatus.FAIL, [], "No such app.")
    reply = parse_qwen_vl(call(action="terminate", status="success"), picture, screen)  # no text: its thinking
    assert reply.result == "I see the screen."


@pytest.mark.parametrize("text", [
    "I would tap the Wi-Fi row.",  # no call
    call(action="click", coordinate=[1, 2]) + call(action="click", coordinate=[1, 2]),  # two
    "<tool_call>{'name': 'mobile_use'}</tool_call>",  # not JSON
    '<tool_call>{"name": "computer_use", "arguments": {"action": "click", "coordinate": [1, 2]}}</tool_call>',
    call(action="click", coordinate=[5]),
    call(action="click", coordinate=[5000, 5]),  # off the picture
    call(action="fly"),
    call(action="system_button", button="Power"),
    call(action="key", text="self_destruct"),
    call(action="terminate", status="maybe"),
])
def test_a_reply_it_cannot_use_is_a_parse_error(text: str) -> None:
    with pytest.raises(LLMOutputParseError):
        parse_qwen_vl(text, (504, 1120), (1080, 2400))


@pytest.mark.parametrize(("name", "fmt", "expected"), [
    ("GUI-Owl-7B", "auto", "qwen-vl"),
    ("mPLUG/GUI-Owl-32B", "auto", "qwen-vl"),
    ("qwen2.5vl:7b", "auto", "json"),  # a general model: the json format, unless told
    ("qwen2.5vl:7b", "qwen-vl", "qwen-vl"),
])
def test_the_format_is_guessed_from_the_models_name(name: str, fmt: str, expected: str) -> None:
    settings = ModelSettings.model_validate({"kind": "openai_compatible", "name": name, "format": fmt,
                                             "base_url": "http://127.0.0.1:1/v1"})
    assert settings.reply_format == expected
