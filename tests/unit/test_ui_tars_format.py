"""The UI-TARS format's reading of replies: points on the picture the model saw, mapped to screen pixels
within 1 px on phones of several sizes and turned sideways; each action of its Action Space mapped to
the runtime's; a reply it cannot use is a parse error (re-asked once by the model phase)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_tars.action_parser import smart_resize

from ufo_mobile.core.processors.pointing import on_grid
from ufo_mobile.core.processors.ui_tars import parse_ui_tars
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.settings import ModelSettings, Settings

SCREENS = [(1080, 2400), (720, 1600), (2400, 1080)]  # the last: a phone turned sideways


def picture_of(screen: tuple[int, int], scale: float) -> tuple[int, int]:
    return round(screen[0] * scale), round(screen[1] * scale)


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("scale", [1.0, 0.4741, 0.3])
def test_a_point_on_the_picture_lands_on_its_screen_pixel_within_one_pixel(screen: tuple[int, int],
                                                                          scale: float) -> None:
    picture = picture_of(screen, scale)
    height, width = smart_resize(picture[1], picture[0])  # the grid the model's image processor puts it on
    for fx in (0.0, 0.013, 0.25, 0.5, 0.77, 0.999):
        for fy in (0.0, 0.031, 0.5, 0.62, 0.999):
            px, py = round(fx * width), round(fy * height)
            reply = parse_ui_tars(f"Thought: tap it\nAction: click(point='<point>{px} {py}</point>')", picture, screen)
            (action,) = reply.actions
            expected = (px / width * screen[0], py / height * screen[1])
            assert action.name == "click_at"
            assert abs(action.args["x"] - min(expected[0], screen[0] - 1)) <= 1
            assert abs(action.args["y"] - min(expected[1], screen[1] - 1)) <= 1


def test_each_action_of_the_action_space_becomes_the_runtimes() -> None:
    screen = picture = (1000, 2000)
    height, width = smart_resize(2000, 1000)  # 1988 x 1008: the model's points are on that grid
    mid = f"<point>{width // 2} {height // 2}</point>"
    assert (width, height) == (1008, 1988)

    def read(action: str) -> tuple[str, list[tuple[str, dict[str, object]]], str]:
        reply = parse_ui_tars(f"Thought: so.\nAction: {action}", picture, screen)
        return str(reply.status), [(a.name, a.args) for a in reply.actions], reply.result

    assert read(f"long_press(point='{mid}')")[1] == [("long_press_at", {"x": 500, "y": 1000})]
    assert read("type(content='hello')")[1] == [("type", {"text": "hello", "clear": True})]
    assert read("type(content='cats\\n')")[1] == [("type", {"text": "cats", "clear": True}),
                                                   ("system_button", {"button": "enter"})]
    assert read("type(content='\\n')")[1] == [("system_button", {"button": "enter"})]  # not an emptied field
    assert read("type(content='')")[1] == [("type", {"text": "", "clear": True})]
    assert read("infeasible(content='No such network.')") == ("FAIL", [], "No such network.")
    assert read(f"scroll(point='{mid}', direction='down')")[1] == [
        ("swipe", {"coordinate": [500, 1000], "coordinate2": [500, 500], "duration": 0.5})]
    assert read(f"scroll(point='{mid}', direction='left')")[1] == [
        ("swipe", {"coordinate": [500, 1000], "coordinate2": [750, 1000], "duration": 0.5})]
    assert read(f"drag(start_point='<point>0 0</point>', end_point='<point>{width} {height}</point>')")[1] == [
        ("swipe", {"coordinate": [0, 0], "coordinate2": [999, 1999], "duration": 0.5})]
    assert read("open_app(app_name='Settings')")[1] == [("open_app", {"text": "Settings"})]
    assert read("press_home()")[1] == [("system_button", {"button": "home"})]
    assert read("press_back()")[1] == [("system_button", {"button": "back"})]
    assert read("wait()")[1] == [("wait", {"duration": 2.0})]
    assert read("finished(content='Wi-Fi is on.')") == (MobileAgentStatus.FINISH, [], "Wi-Fi is on.")
    assert read("call_user(content='Which Anna?')") == (MobileAgentStatus.PENDING, [], "Which Anna?")


@pytest.mark.parametrize("text", [
    "I would tap the Wi-Fi row.",  # no Action line
    "Thought: x\nAction: click(point='<point>10</point>')",  # half a point
    "Thought: x\nAction: click(point=",  # cut off
    "Thought: x\nAction: click(point=<point>1 2</point>)",  # unquoted (the parser trips on it)
    "Thought: x\nAction: hotkey(key='ctrl c')",  # not a phone's action
    "Thought: x\nAction: scroll(point='<point>5 5</point>', direction='sideways')",
    "Thought: x\nAction: click(point='<point>5000 5</point>')",  # off the picture
])
def test_a_reply_it_cannot_use_is_a_parse_error(text: str) -> None:
    with pytest.raises(LLMOutputParseError):
        parse_ui_tars(text, (540, 1200), (1080, 2400))


def test_the_parser_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(LLMOutputParseError):
        parse_ui_tars("Thought: x\nAction: cl ick()", (540, 1200), (1080, 2400))  # the parser would print it
    assert capsys.readouterr().out == ""  # the model's text never reaches the terminal this way


@pytest.mark.parametrize(("name", "kind", "fmt", "expected"), [
    ("ui-tars-1.5-7b", "openai_compatible", "auto", "ui-tars"),
    ("ByteDance-Seed/UI-TARS-7B-DPO", "openai_compatible", "auto", "ui-tars"),
    ("gpt-4o", "openai", "auto", "json"),
    ("ui-tars-1.5-7b", "openai_compatible", "json", "json"),
    ("my-finetune", "openai_compatible", "ui-tars", "ui-tars"),
])
def test_the_format_is_guessed_from_the_models_name_and_always_overridable(name: str, kind: str, fmt: str,
                                                                         expected: str) -> None:
    settings = ModelSettings.model_validate({"kind": kind, "name": name, "format": fmt,
                                             "base_url": "http://127.0.0.1:1/v1"})
    assert settings.reply_format == expected


def test_a_pointing_format_without_the_screenshot_is_refused() -> None:
    with pytest.raises(ValueError, match="needs model.vision: true"):
        Settings.model_validate({"task": {"text": "Turn on Wi-Fi"},
                                 "model": {"kind": "openai_compatible", "format": "ui-tars", "vision": False,
                                           "base_url": "http://127.0.0.1:1/v1"}})


def test_the_ui_tars_format_is_for_the_direct_mode() -> None:
    with pytest.raises(ValueError, match="mode direct"):
        Settings.model_validate({"mode": "codeact", "task": {"text": "Turn on Wi-Fi"},
                                 "model": {"kind": "openai_compatible", "format": "ui-tars",
                                           "base_url": "http://127.0.0.1:1/v1"}})


def test_the_setup_line_names_a_format_other_than_json() -> None:
    from ufo_mobile.report.setup import describe_model

    base = {"kind": "openai_compatible", "base_url": "http://127.0.0.1:8000/v1"}
    assert describe_model({**base, "name": "ui-tars-1.5-7b", "format": "auto"}) == \
        "openai_compatible ui-tars-1.5-7b at 127.0.0.1:8000 (ui-tars format)"
    assert describe_model({**base, "name": "qwen2.5vl:7b", "format": "auto"}) == \
        "openai_compatible qwen2.5vl:7b at 127.0.0.1:8000"


@pytest.mark.parametrize("size", [(512, 1139), (1080, 2400), (720, 1600), (1139, 512), (300, 280)])
def test_the_picture_is_sent_on_the_models_own_grid(size: tuple[int, int]) -> None:
    width, height = on_grid(size)
    assert (width % 28, height % 28) == (0, 0) and width <= max(size[0], 28) and height <= max(size[1], 28)
    assert smart_resize(height, width) == (height, width)  # what the model sees is what was sent



def test_a_script_without_replies_in_the_format_is_a_one_line_error(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tests.unit.test_cli_runs import run_cli

    script = tmp_path / "s.yaml"
    script.write_text('replies: [{status: FINISH, result: "done"}]\n')
    task = tmp_path / "t.yaml"
    task.write_text("task: {text: Turn on Wi-Fi}\nmodel: {script: s.yaml, format: ui-tars}\n")
    code, _ = run_cli("run", str(task), "--log-dir", str(tmp_path / "logs"))
    assert code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "model.script" in line and "no replies in the ui-tars format" in line
