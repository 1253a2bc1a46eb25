"""What every pointing format shares: each action it maps a model's reply to is one the runtime's own
tool registry takes, with arguments it accepts (a mapped action the registry refused would be re-asked
in vain), so is every turn the scripted model says in it (an eval's oracle), and the demo runs to
FINISH in it with the scripted model's replies in that format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.llm.test_prompt import registry
from ufo_mobile.core.llm.reply import AgentReply
from ufo_mobile.core.llm.speaking import Move, say
from ufo_mobile.core.processors.autoglm import parse_autoglm
from ufo_mobile.core.processors.qwen_vl import GRID3, parse_qwen_vl
from ufo_mobile.core.processors.ui_tars import parse_ui_tars

SCREEN = PICTURE = (1008, 1988)


def qwen(**arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": "mobile_use", "arguments": arguments}) + "</tool_call>"


def spoken() -> list[tuple[str, Move, AgentReply]]:
    """Every turn the scripted model says in a pointing format, read back by that format."""
    readers = {"ui-tars": parse_ui_tars, "qwen-vl": parse_qwen_vl,
               "qwen3-vl": lambda text, picture, screen: parse_qwen_vl(text, (GRID3, GRID3), screen),
               "autoglm": lambda text, picture, screen: parse_autoglm(text, screen)}
    turns = [Move("tap"), Move("long_press"), Move("type", text="hi"), Move("key", text="back"),
             Move("key", text="home"), Move("key", text="enter"), Move("open", text="Settings"), Move("wait", text="2")]
    found = []
    for fmt, reader in readers.items():
        for move in turns:
            if fmt == "autoglm" and move.text == "enter":
                continue  # it has no enter key
            found.append((fmt, move, reader(say(fmt, move, "t", (10, 10), SCREEN, PICTURE), PICTURE, SCREEN)))
    return found


REPLIES: list[tuple[str, AgentReply]] = [
    *((f"ui-tars {action}", parse_ui_tars(f"Thought: t\nAction: {action}", PICTURE, SCREEN)) for action in [
        "click(point='<point>10 10</point>')", "long_press(point='<point>10 10</point>')", "type(content='hi')",
        "type(content='hi\\n')", "scroll(point='<point>500 900</point>', direction='down')",
        "drag(start_point='<point>10 10</point>', end_point='<point>500 900</point>')",
        "open_app(app_name='Settings')", "press_home()", "press_back()", "wait()"]),
    *((f"qwen-vl {args['action']}", parse_qwen_vl(qwen(**args), PICTURE, SCREEN)) for args in [
        {"action": "click", "coordinate": [10, 10]}, {"action": "long_press", "coordinate": [10, 10], "time": 1},
        {"action": "swipe", "coordinate": [10, 10], "coordinate2": [500, 900]}, {"action": "type", "text": "hi"},
        {"action": "open", "text": "Settings"}, {"action": "system_button", "button": "Enter"},
        {"action": "system_button", "button": "Menu"}, {"action": "key", "text": "volume_up"},
        {"action": "wait", "time": 2}]),
    *((f"autoglm {line}", parse_autoglm(f"<answer>{line}</answer>", SCREEN)) for line in [
        'do(action="Tap", element=[5,5])', 'do(action="Long Press", element=[5,5])',
        'do(action="Swipe", start=[5,5], end=[500,900])', 'do(action="Type", text="hi")',
        'do(action="Launch", app="Settings")', 'do(action="Back")', 'do(action="Home")',
        'do(action="Wait", duration="2 seconds")', 'do(action="Note", message="True")']),
    *((f"speaking {fmt} {move.kind} {move.text}", reply) for fmt, move, reply in spoken()),
]


@pytest.mark.parametrize(("what", "reply"), REPLIES, ids=[what for what, _ in REPLIES])
def test_every_mapped_action_is_one_the_runtime_takes(what: str, reply: AgentReply) -> None:
    tools = registry()
    assert reply.actions
    for action in reply.actions:
        assert tools.check_call(action.name, action.args) is None, (what, action)


@pytest.mark.parametrize("fmt", ["ui-tars", "qwen-vl", "qwen3-vl", "autoglm"])
def test_the_demo_runs_in_each_format_with_its_scripted_replies(fmt: str, tmp_path: Path) -> None:
    from tests.unit.test_cli_runs import DEMO, only_run_dir, run_cli, steps_of

    code, out = run_cli("run", str(DEMO), "--format", fmt, "--log-dir", str(tmp_path))
    assert code == 0, out
    run_dir = only_run_dir(tmp_path)
    assert [s["action"]["name"] if s["action"] else s["status"] for s in steps_of(run_dir)] == [
        "open_app", "click_at", "click_at", "FINISH"]
    assert 'Switch "Use Wi-Fi" click check=on' in (run_dir / "steps" / "0004" / "screen.txt").read_text()
    assert f"scripted model demo_wifi.yaml ({fmt} format)" in (run_dir / "report.html").read_text()
    assert json.loads((run_dir / "run.json").read_text())["settings"]["model"]["format"] == fmt


def test_every_format_is_offered_on_the_command_line_and_has_its_model_phase() -> None:
    from typing import get_args

    from ufo_mobile.cli.common import FORMATS
    from ufo_mobile.core.agents.mobile import POINTING
    from ufo_mobile.settings.model import ReplyFormat

    assert FORMATS == ("auto", *get_args(ReplyFormat))
    assert set(POINTING) == set(get_args(ReplyFormat)) - {"json"}
