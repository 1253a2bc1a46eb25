"""The AutoGLM-Phone format's reading of replies: one ``do(...)`` or ``finish(...)`` line (in ``<answer>``
tags or not), its points on the 0-999 grid mapped to screen pixels within 1 px on phones of several
sizes and turned sideways; each of its actions mapped to the runtime's or refused with the reason; a
reply it cannot use is a parse error (re-asked once by the model phase)."""

from __future__ import annotations

import pytest

from ufo_mobile.core.processors.autoglm import parse_autoglm
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.settings import ModelSettings


def answer(line: str) -> str:
    return f"<think>I look at the screen.</think>\n<answer>{line}</answer>"


@pytest.mark.parametrize("screen", [(1080, 2400), (720, 1600), (2400, 1080)])
def test_a_point_on_the_grid_lands_on_its_screen_pixel_within_one_pixel(screen: tuple[int, int]) -> None:
    for gx in (0, 13, 500, 770, 999):
        for gy in (0, 138, 620, 999):
            (action,) = parse_autoglm(answer(f'do(action="Tap", element=[{gx},{gy}])'), screen).actions
            assert action.name == "click_at"
            assert abs(action.args["x"] - gx / 1000 * screen[0]) <= 1
            assert abs(action.args["y"] - gy / 1000 * screen[1]) <= 1


def test_each_action_becomes_the_runtimes_or_a_person_or_the_user() -> None:
    screen = (1000, 2000)

    def read(line: str) -> tuple[str, list[tuple[str, dict[str, object]]], str]:
        reply = parse_autoglm(answer(line), screen)
        return str(reply.status), [(a.name, a.args) for a in reply.actions], reply.result

    assert read('do(action="Long Press", element=[500,500])')[1] == [("long_press_at", {"x": 500, "y": 1000})]
    assert read('do(action="Swipe", start=[500,800], end=[500,200])')[1] == [
        ("swipe", {"coordinate": [500, 1600], "coordinate2": [500, 400]})]
    assert read('do(action="Type", text="cats")')[1] == [("type", {"text": "cats", "clear": True})]
    assert read('do(action="Type_Name", text="Anna")')[1] == [("type", {"text": "Anna", "clear": True})]
    assert read('do(action="Launch", app="Settings")')[1] == [("open_app", {"text": "Settings"})]
    assert read('do(action="Back")')[1] == [("system_button", {"button": "back"})]
    assert read('do(action="Home")')[1] == [("system_button", {"button": "home"})]
    assert read('do(action="Wait", duration="3 seconds")')[1] == [("wait", {"duration": 3.0})]
    assert read('do(action="Note", message="True")')[1] == [("remember", {"information": "I look at the screen."})]
    assert read('finish(message="Wi-Fi is on.")') == (MobileAgentStatus.FINISH, [], "Wi-Fi is on.")
    assert read('fail(message="No such network.")') == (MobileAgentStatus.FAIL, [], "No such network.")
    assert read('do(action="Take_over", message="Log in, please.")') == (
        MobileAgentStatus.TAKEOVER, [], "Log in, please.")
    assert read('do(action="Interact")')[0] == MobileAgentStatus.PENDING
    # without the tags, as the model also answers
    reply = parse_autoglm('Settings is open.\ndo(action="Tap", element=[500,500])', screen)
    assert reply.thought == "Settings is open." and reply.actions[0].name == "click_at"


@pytest.mark.parametrize("line", ['do(action="Double Tap", element=[5,5])', 'do(action="Call_API", instruction="x")'])
def test_an_action_with_no_runtime_action_is_refused_with_the_reason(line: str) -> None:
    with pytest.raises(LLMOutputParseError, match="is not an action here"):
        parse_autoglm(answer(line), (1080, 2400))


@pytest.mark.parametrize("text", [
    "I would tap the Wi-Fi row.",  # no line
    answer('do(action="Tap", element=[5])'),  # half a point
    answer('do(action="Tap", element=[5000, 5])'),  # off the grid
    answer('do(action="Tap", element=__import__("os").getcwd())'),  # not a literal: nothing runs
    answer('do(action="Fly")'),
    answer('do(action="Tap", element=[1,2]'),  # cut off
])
def test_a_reply_it_cannot_use_is_a_parse_error(text: str) -> None:
    with pytest.raises(LLMOutputParseError):
        parse_autoglm(text, (1080, 2400))


def test_the_format_is_guessed_from_the_models_name() -> None:
    settings = ModelSettings.model_validate({"kind": "openai_compatible", "name": "zai-org/AutoGLM-Phone-9B",
                                             "base_url": "http://127.0.0.1:1/v1"})
    assert settings.reply_format == "autoglm"
