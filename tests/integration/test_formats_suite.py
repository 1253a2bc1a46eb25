"""The shop, settings and messages suite tasks in every reply format, with the UI dump and with the
screenshot alone, through the real ``openai`` client over HTTP: each task's oracle says its replies as
a model answering in that format would (``core/llm/speaking.py``: the points of the controls it
names, on the picture it was sent), the local server hands each answer to the client, and the run
must pass the task's check on the phone. A run that reads the screenshot alone never reads a dump for
itself: only the oracle looks at the phone's tree, as a model looks at the picture."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fake_time import FakeTime
from tests.integration.test_openai_client import ENV, model_settings, server  # noqa: F401
from tests.openai_server import OpenAIServer, chat
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.base import Completion
from ufo_mobile.core.llm.openai_chat import OpenAIChatModel
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.eval import load_suite, oracle_model, run_task
from ufo_mobile.eval.runner import default_settings
from ufo_mobile.settings import Settings
from ufo_mobile.shipped import CONFIG_DIR
from ufo_mobile.sim.phone.simphone import SimPhone

pytestmark = pytest.mark.integration

TASKS = [task for task in load_suite(CONFIG_DIR / "suite") if task.id.split("-")[0] in ("shop", "settings", "messages")]
SAID = {  # how each format's answers look (the model's own syntax)
    "json": re.compile(r'^\{"status": '),
    "ui-tars": re.compile(r"^Thought: .*\nAction: [a-z_]+\(", re.DOTALL),
    "qwen-vl": re.compile(r'\n<tool_call>\n\{"name": "mobile_use", "arguments": \{"action": "[a-z_]+"'),
    "qwen3-vl": re.compile(r'\n<tool_call>\n\{"name": "mobile_use", "arguments": \{"action": "[a-z_]+"'),
    "autoglm": re.compile(r"^<think>.*</think>\n<answer>(do|finish|fail)\(", re.DOTALL),
}


class Relay:
    """The model: the oracle's answer, put on the local server, fetched by the real client."""

    def __init__(self, oracle: ScriptedModel, client: OpenAIChatModel, server: OpenAIServer) -> None:  # noqa: F811
        self.oracle, self.client, self.server = oracle, client, server
        self.name = client.name
        self.said: list[str] = []

    async def complete(self, messages: Any, *, schema: Any = None) -> Completion:
        answer = (await self.oracle.complete(messages)).text
        self.said.append(answer)
        self.server.push(chat(answer))
        return await self.client.complete(messages, schema=schema)


class CountingDriver(SimDriver):
    dumps = 0

    async def get_ui_tree(self) -> str:
        CountingDriver.dumps += 1
        return await super().get_ui_tree()


def settings_for(server: OpenAIServer, logs: Path, fmt: str, source: str) -> Settings:  # noqa: F811
    base = default_settings()
    return base.model_copy(update={
        "model": model_settings(server, name="my-model", format=fmt),
        "logs": base.logs.model_copy(update={"dir": logs, "report": False}),
        "perception": base.perception.model_copy(update={"source": source, "settle_timeout_seconds": 0.0}),
    })


@pytest.mark.parametrize("source", ["both", "screenshot"])
@pytest.mark.parametrize("fmt", ["json", "ui-tars", "qwen-vl", "qwen3-vl", "autoglm"])
async def test_the_suite_tasks_pass_in_every_format(server: OpenAIServer, tmp_path: Path,  # noqa: F811
                                                    fmt: str, source: str) -> None:
    settings = settings_for(server, tmp_path, fmt, source)
    client = OpenAIChatModel.from_settings(settings.model, ENV, clock=FakeTime([0.5]).clock())
    try:
        for task in TASKS:
            instance = task.instantiate(0)
            oracle = oracle_model(instance, "direct", fmt, source)
            relay = Relay(oracle, client, server)

            def driver(phone: SimPhone, oracle: ScriptedModel = oracle) -> SimDriver:
                device = SimDriver(phone)
                if oracle.speaks is not None:  # the oracle looks at its own driver over the same phone
                    oracle.watch(CountingDriver(phone))
                return device

            before = len(server.requests)
            CountingDriver.dumps = 0
            outcome = await run_task(instance, log_dir=tmp_path, model=relay, settings=settings,  # type: ignore[arg-type]
                                     driver=driver)
            assert outcome.passed, f"{task.id} ({fmt}, {source}): {outcome.why} [{outcome.status}: {outcome.reason}]"
            assert outcome.status == ("FAIL" if task.kind == "impossible" else "FINISH")
            assert outcome.steps <= task.spec.budget
            assert all(SAID[fmt].search(text) for text in relay.said), relay.said
            assert len(server.requests) - before == len(relay.said)  # every answer went through the client
            steps = [json.loads(line) for line in (outcome.run_dir / "steps.jsonl").read_text().splitlines()]
            if source == "screenshot":
                assert all(step["dump_attempts"] == 0 and step["controls"] == 0 for step in steps)
            names = {a["name"] for step in steps for a in (step.get("actions") or [step.get("action")]) if a}
            if fmt != "json" or source == "screenshot":  # the taps are points: no control numbers
                assert not names & {"click", "long_press"}, names
                assert CountingDriver.dumps > 0  # the oracle looked at the phone for them
    finally:
        await client.aclose()
    for request in server.requests:
        body = request.body
        assert ("response_format" in body) == (fmt == "json")  # a pointing format answers in text
        user = body["messages"][-1]["content"]
        assert any(part["type"] == "image_url" for part in user)
