"""GUI-agent models through the real ``openai`` client over HTTP: the test plays the model, answering in
its own format (UI-TARS's, Qwen-VL's mobile_use) with points on the picture it was sent (on the grid its
image processor would put the picture on), and the run must turn Wi-Fi on with its taps on the controls
the JSON run tapped. A reply it cannot use is asked about once, then the run ends FAIL with the reason."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from ui_tars.action_parser import smart_resize

from tests.fake_time import FakeTime
from tests.faults.conftest import cli, one_line_error
from tests.integration.test_openai_client import ENV, KEY, model_settings, server  # noqa: F401
from tests.openai_server import OpenAIServer, chat
from ufo_mobile.core.device.factory import build_sim_phone
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.base import Completion
from ufo_mobile.core.llm.openai_chat import OpenAIChatModel
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.session import Session
from ufo_mobile.settings import LimitSettings, LogSettings, ModelSettings, Settings, SimSettings, TaskSettings
from ufo_mobile.shipped import CONFIG_DIR

pytestmark = pytest.mark.integration

SCRIPT = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"


NAMES = {"ui-tars": "ui-tars-1.5-7b", "qwen-vl": "gui-owl-7b", "autoglm": "autoglm-phone-9b"}  # guessed by name
SYSTEM = {"ui-tars": "## Action Space", "qwen-vl": '"name": "mobile_use"', "qwen3-vl": "resolution is 999x999",
          "autoglm": 'do(action="Tap"'}
FORMATS = ["ui-tars", "qwen-vl", "qwen3-vl", "autoglm"]


def settings_for(server: OpenAIServer, logs: Path, fmt: str = "ui-tars") -> Settings:  # noqa: F811
    return Settings(mode="direct", task=TaskSettings(text="Turn on Wi-Fi"),
                    model=model_settings(server, **({"name": NAMES[fmt]} if fmt in NAMES else
                                                    {"name": "qwen3-vl-8b-instruct", "format": fmt})),
                    limits=LimitSettings(max_steps=10), logs=LogSettings(dir=logs))


def phone(screen: tuple[int, int]) -> SimDriver:
    return SimDriver(build_sim_phone(SimSettings(width=screen[0], height=screen[1])))


async def demo_actions(logs: Path, screen: tuple[int, int] = (1080, 2400)) -> list[dict[str, Any]]:
    """What the demo's JSON replies do on the in-process phone (actions.jsonl: taps in screen pixels)."""
    settings = Settings(mode="direct", task=TaskSettings(text="Turn on Wi-Fi"), limits=LimitSettings(max_steps=10),
                        model=ModelSettings(script=SCRIPT), logs=LogSettings(dir=logs))
    result = await Session(settings, model=ScriptedModel(ScriptedModel.from_file(SCRIPT).script.for_mode("direct")),
                           device=phone(screen)).run()
    assert result.status == "FINISH", result.reason
    return [json.loads(line) for line in (result.run_dir / "actions.jsonl").read_text().splitlines()]


def text_of(content: Any) -> str:
    """A message's text as sent (its text parts, in order)."""
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def picture_size(messages: Any) -> tuple[int, int]:
    """The size of the screenshot in the last message (the model sees it)."""
    for part in messages[-1].content:
        data = getattr(part, "data", None)
        if data:
            return Image.open(io.BytesIO(data)).size
    raise AssertionError("no screenshot sent")


def qwen(thought: str, **arguments: Any) -> str:
    call = json.dumps({"name": "mobile_use", "arguments": arguments})
    return f"{thought}\n<tool_call>\n{call}\n</tool_call>"


class Pointing:
    """The model: each turn, the next of ``actions`` said as its format says it, its point put on the
    picture it was sent; the answer goes to the local server first, and the real client fetches it."""

    def __init__(self, client: OpenAIChatModel, server: OpenAIServer, actions: list[dict[str, Any]],  # noqa: F811
                 screen: tuple[int, int], fmt: str) -> None:
        self.client, self.server, self.actions, self.screen = client, server, list(actions), screen
        self.fmt = fmt
        self.name = client.name
        self.sent: list[str] = []
        self.pictures: list[tuple[int, int]] = []

    async def complete(self, messages: Any, *, schema: Any = None) -> Completion:
        self.pictures.append(picture_size(messages))
        self.server.push(chat(self.say(self.pictures[-1]), prompt_tokens=900, completion_tokens=30))
        return await self.client.complete(messages, schema=schema)

    def say(self, picture: tuple[int, int]) -> str:
        if self.fmt == "autoglm":
            return self.say_autoglm()
        tars = self.fmt == "ui-tars"
        if not self.actions:
            text = ("Thought: The Use Wi-Fi switch is on.\nAction: finished(content='Wi-Fi is on.')" if tars else
                    qwen("The switch is on.", action="terminate", status="success", text="Wi-Fi is on."))
        else:
            action = self.actions.pop(0)
            if action["action"] == "start_app":
                text = ("Thought: Settings holds Wi-Fi.\nAction: open_app(app_name='Settings')" if tars else
                        qwen("Settings holds Wi-Fi.", action="open", text="Settings"))
            else:
                height, width = smart_resize(picture[1], picture[0]) if self.fmt != "qwen3-vl" else (999, 999)
                x, y = action["args"]["x"], action["args"]["y"]
                px, py = round(x * width / self.screen[0]), round(y * height / self.screen[1])
                text = (f"Thought: Tap it.\nAction: click(point='<point>{px} {py}</point>')" if tars else
                        qwen("Tap it.", action="click", coordinate=[px, py]))
        self.sent.append(text)
        return text

    def say_autoglm(self) -> str:
        """AutoGLM's line: points on its 0-999 grid over the picture (the screen, scaled)."""
        if not self.actions:
            line = 'finish(message="Wi-Fi is on.")'
        elif (action := self.actions.pop(0))["action"] == "start_app":
            line = 'do(action="Launch", app="Settings")'
        else:
            x, y = action["args"]["x"], action["args"]["y"]
            line = f'do(action="Tap", element=[{round(x * 1000 / self.screen[0])}, {round(y * 1000 / self.screen[1])}])'
        return f"<think>Next.</think>\n<answer>{line}</answer>"


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_gui_agent_model_turns_wifi_on_through_the_openai_client(server: OpenAIServer,  # noqa: F811
                                                                         tmp_path: Path, fmt: str) -> None:
    wanted = await demo_actions(tmp_path / "json")
    settings = settings_for(server, tmp_path / "logs", fmt)
    client = OpenAIChatModel.from_settings(settings.model, ENV, clock=FakeTime([0.5]).clock())
    model = Pointing(client, server, wanted, (1080, 2400), fmt)
    driver = SimDriver()
    try:
        result = await Session(settings, model=model, device=driver).run()  # type: ignore[arg-type]
    finally:
        await client.aclose()
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on."), result.reason
    assert driver.phone.state("com.android.settings")["wifi"] is True
    done = [json.loads(line) for line in (result.run_dir / "actions.jsonl").read_text().splitlines()]
    assert [a["action"] for a in done] == [a["action"] for a in wanted]
    for ours, json_run in zip(done, wanted, strict=True):  # the same taps, to within a pixel
        if ours["action"] == "tap":
            assert abs(ours["args"]["x"] - json_run["args"]["x"]) <= 1
            assert abs(ours["args"]["y"] - json_run["args"]["y"]) <= 1
    for request in server.requests:
        body = request.body
        assert "response_format" not in body  # a text reply, no JSON schema
        assert SYSTEM[fmt] in body["messages"][0]["content"]
        assert "Turn on Wi-Fi" in text_of(body["messages"][1]["content"])  # the request first
        roles = [m["role"] for m in body["messages"]]  # then the turns, the model's and the user's in turn
        assert roles[:2] == ["system", "user"] and all(a != b for a, b in zip(roles[1:], roles[2:], strict=False))
        user = body["messages"][-1]["content"]
        assert any(part["type"] == "image_url" for part in user)
        said = json.dumps(body["messages"][1:])  # only the model's own terms: no control numbers or pixels
        assert "[1]" not in said and "click_at" not in said and "x=" not in said
    for (width, height), request in zip(model.pictures, server.requests, strict=True):  # the screen, scaled whole
        assert abs(width / height - 1080 / 2400) < 0.01 and (width % 28, height % 28) == (0, 0)
        said = text_of(request.body["messages"][-1]["content"])  # its size, or the grid it points on
        assert (f"The screenshot: {width} x {height} pixels" in said if fmt in ("ui-tars", "qwen-vl") else
                "on the 0-999 grid, whatever its size" in said)
    steps = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert steps[1]["action"]["name"] == "click_at" and steps[-1]["status"] == "FINISH"
    assert KEY not in json.dumps([r.body for r in server.requests])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("screen", [(720, 1600), (2400, 1080)])  # a smaller phone, and one turned sideways
async def test_the_taps_land_within_a_pixel_on_other_screens(server: OpenAIServer, tmp_path: Path,  # noqa: F811
                                                             fmt: str, screen: tuple[int, int]) -> None:
    wanted = await demo_actions(tmp_path / "json", screen)
    settings = settings_for(server, tmp_path / "logs", fmt)
    client = OpenAIChatModel.from_settings(settings.model, ENV, clock=FakeTime([0.5]).clock())
    driver = phone(screen)
    try:
        result = await Session(settings, model=Pointing(client, server, wanted, screen, fmt),  # type: ignore[arg-type]
                               device=driver).run()
    finally:
        await client.aclose()
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on."), result.reason
    assert driver.phone.state("com.android.settings")["wifi"] is True
    done = [json.loads(line) for line in (result.run_dir / "actions.jsonl").read_text().splitlines()]
    for ours, json_run in zip(done, wanted, strict=True):
        if ours["action"] == "tap":
            assert abs(ours["args"]["x"] - json_run["args"]["x"]) <= 1
            assert abs(ours["args"]["y"] - json_run["args"]["y"]) <= 1


async def test_a_reply_it_cannot_read_is_asked_about_once_then_the_run_fails(server: OpenAIServer,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    settings = settings_for(server, tmp_path / "logs")
    server.push(chat("I would open Settings."), chat("Thought: Settings.\nAction: fly(to='moon')"))
    model = OpenAIChatModel.from_settings(settings.model, ENV, clock=FakeTime([0.5]).clock())
    try:
        result = await Session(settings, model=model, device=SimDriver()).run()
    finally:
        await model.aclose()
    assert result.status == "FAIL" and "invalid twice" in result.reason, result.reason
    reask = server.requests[1].body["messages"][-1]["content"]
    assert 'no "Action:" line' in str(reask) and "Action Space" in str(reask)


def test_the_ui_tars_format_in_another_mode_is_a_one_line_error(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text("task: {text: Turn on Wi-Fi}\nmode: codeact\n"
                    "model: {kind: openai_compatible, base_url: 'http://127.0.0.1:9/v1', format: ui-tars}\n")
    code, _, err = cli("run", str(task), cwd=tmp_path)
    one_line_error(code, err, "t.yaml", "mode direct")

