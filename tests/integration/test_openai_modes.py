"""Every mode with the real ``openai`` client over HTTP against the local OpenAI-compatible server:
the demo's replies for that mode (ufo_mobile/config/tasks/scripts/demo_wifi.yaml) are what the server answers,
and the run must turn Wi-Fi on, with every request well formed (the manager's and CodeAct's without
a JSON-schema response_format, the executor's and the flat agent's with one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_time import FakeTime
from tests.integration.test_openai_client import ENV, KEY, assert_no_key_in, model_settings, server  # noqa: F401
from tests.openai_server import OpenAIServer, chat
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.base import Completion
from ufo_mobile.core.llm.openai_chat import OpenAIChatModel
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.session import Session
from ufo_mobile.settings import LimitSettings, LogSettings, Settings, TaskSettings
from ufo_mobile.shipped import CONFIG_DIR

pytestmark = pytest.mark.integration

SCRIPT = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"


async def replies_for(mode: str, settings: Settings) -> list[str]:
    """The demo's replies for ``mode`` as the scripted model sends them on the in-process phone (the
    controls the script names by label get that phone's numbers)."""
    scripted = ScriptedModel(ScriptedModel.from_file(SCRIPT).script.for_mode(mode))
    sent: list[str] = []

    class Recording:
        name = "recording"

        async def complete(self, messages: Any, *, schema: Any = None) -> Completion:
            completion = await scripted.complete(messages, schema=schema)
            sent.append(completion.text)
            return completion

    result = await Session(settings, model=Recording(), device=SimDriver()).run()
    assert result.status == "FINISH", result.reason
    return sent


@pytest.mark.parametrize("mode", ["direct", "reasoning", "codeact"])
async def test_each_mode_runs_the_demo_through_the_openai_client(mode: str, server: OpenAIServer,  # noqa: F811
                                                                tmp_path: Path) -> None:
    settings = Settings(mode=mode, task=TaskSettings(text="Turn on Wi-Fi"), model=model_settings(server),
                        limits=LimitSettings(max_steps=10), logs=LogSettings(dir=tmp_path / "logs"))
    answers = await replies_for(mode, settings.model_copy(update={"logs": LogSettings(dir=tmp_path / "scripted")}))
    server.push(*[chat(text, prompt_tokens=500, completion_tokens=40) for text in answers])
    model = OpenAIChatModel.from_settings(settings.model, ENV, clock=FakeTime([0.5]).clock())
    driver = SimDriver()
    try:
        result = await Session(settings, model=model, device=driver).run()
    finally:
        await model.aclose()
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on."), result.reason
    assert driver.phone.state("com.android.settings")["wifi"] is True
    assert result.model_calls == len(answers) and result.prompt_tokens == 500 * len(answers)
    formats: list[Any] = [request.body.get("response_format") for request in server.requests]
    assert len(formats) == len(answers)
    if mode == "direct":
        assert all(f and f["type"] == "json_schema" for f in formats)
    elif mode == "codeact":
        assert all(f is None for f in formats)
    else:  # the manager plans in tags, the executor answers in JSON
        assert [f is None for f in formats] == [True, False, True, False, True, False, True]
    run_json = json.loads((result.run_dir / "run.json").read_text())
    assert run_json["status"] == "FINISH" and run_json["settings"]["mode"] == mode
    assert_no_key_in(result.run_dir)
    assert KEY not in json.dumps([r.body for r in server.requests])  # the key travels in the header only
