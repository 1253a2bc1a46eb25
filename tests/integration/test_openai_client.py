"""The real ``openai`` client against a local OpenAI-compatible server (tests/openai_server.py).

Retries wait on ``FakeTime`` (tests/fake_time.py), never on real time; the one timeout case uses a
held request and a short real timeout, bounded by the retry count. The flat agent runs end to end
on the simulated phone, in process and through the command line.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.fake_time import FakeTime
from tests.openai_server import Drop, Hold, OpenAIServer, Reply, chat, error
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.openai_chat import OpenAIChatModel
from ufo_mobile.core.llm.prices import PriceTable
from ufo_mobile.core.llm.reply import AgentReply
from ufo_mobile.core.memory.messages import ChatMessage, ImagePart, TextPart
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.errors import LLMError
from ufo_mobile.settings import (
    LimitSettings,
    LogSettings,
    ModelSettings,
    PerceptionSettings,
    Settings,
    TaskSettings,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-local-0123456789abcdef"
ENV = {"UFO_TEST_KEY": KEY}
FINISH = {"status": "FINISH", "observation": "home screen", "thought": "nothing to do", "result": "done"}
FLY = {"status": "CONTINUE", "thought": "take off", "action": {"name": "fly", "args": {"to": "moon"}}}
OPEN_SETTINGS = {"status": "CONTINUE", "thought": "open it",
                 "action": {"name": "open_app", "args": {"text": "Settings"}}}
HELLO = [ChatMessage(role="system", content="You operate a phone."), ChatMessage(role="user", content="Hi")]
SCHEMA = AgentReply.model_json_schema()


class ListLogger:
    """Records ``(level, event, fields)``; stands in for the run logger in client-level tests."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **fields: self.lines.append((level, event, fields))

    def events(self) -> list[str]:
        return [event for _, event, _ in self.lines]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(key=KEY) as srv:
        yield srv


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime([0.5])


def model_settings(server: OpenAIServer, **over: Any) -> ModelSettings:
    fields: dict[str, Any] = {"kind": "openai_compatible", "base_url": server.url, "name": "gpt-4o",
                              "api_key_env": "UFO_TEST_KEY",
                              "retry": {"max_retries": 3, "budget_seconds": 60, "base_delay_seconds": 1,
                                        "max_delay_seconds": 8}}
    return ModelSettings.model_validate({**fields, **over})


def make_model(server: OpenAIServer, fake: FakeTime, *, env: dict[str, str] | None = None, logger: Any = None,
               **over: Any) -> OpenAIChatModel:
    return OpenAIChatModel.from_settings(model_settings(server, **over), ENV if env is None else env,
                                         clock=fake.clock(), logger=logger)


async def run_agent(tmp_path: Path, server: OpenAIServer, fake: FakeTime, *, env: dict[str, str] | None = None,
                    task: str = "Open Settings", max_steps: int = 5, require_image: bool = True,
                    perception: dict[str, Any] | None = None,
                    **over: Any) -> tuple[RunResult, dict[str, Any], list[dict[str, Any]]]:
    """The flat agent on the simulated phone; returns the result, run.json and the run's log lines.
    The server refuses every request that comes without the screenshot (unless told otherwise)."""
    server.require_image = require_image
    settings = Settings(task=TaskSettings(text=task), model=model_settings(server, **over),
                        limits=LimitSettings(max_steps=max_steps), logs=LogSettings(dir=tmp_path / "logs"),
                        perception=PerceptionSettings.model_validate(perception or {}))
    model = OpenAIChatModel.from_settings(settings.model, ENV if env is None else env, clock=fake.clock())
    try:
        result = await Session(settings, model=model, device=SimDriver()).run()
    finally:
        await model.aclose()
    run_json = json.loads((result.run_dir / "run.json").read_text())
    log = [json.loads(line) for line in (result.run_dir / "run.log").read_text().splitlines()]
    assert_no_key_in(result.run_dir)
    return result, run_json, log


def assert_no_key_in(run_dir: Path) -> None:
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key leaked into {path.name}"


def steps_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]


# --- the client on its own ---------------------------------------------------------------------


async def test_success_sends_the_key_messages_and_image_and_reports_usage(server: OpenAIServer,
                                                                        fake: FakeTime) -> None:
    server.push(chat(FINISH, prompt_tokens=1000, completion_tokens=50, cached_tokens=400))
    model = make_model(server, fake)
    messages = [HELLO[0], ChatMessage(role="user", content=[TextPart(text="Screen"),
                                                            ImagePart(data=b"\x89PNG fake", detail="high")])]
    try:
        completion = await model.complete(messages)
    finally:
        await model.aclose()
    assert json.loads(completion.text) == FINISH
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens, completion.usage.completion_tokens,
            completion.usage.calls) == (1000, 400, 50, 1)
    assert completion.usage.cost_usd == pytest.approx((600 * 2.5 + 400 * 1.25 + 50 * 10.0) / 1e6)
    assert completion.model == "gpt-4o-2024-08-06"
    assert completion.details == {"attempts": 1, "seconds": 0.0, "structured_output": "off", "fell_back": False,
                                  "model": "gpt-4o-2024-08-06", "finish_reason": "stop", "priced_as": "gpt-4o"}
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "gpt-4o" and request.body["max_tokens"] == 1024
    assert request.body["temperature"] == 0.0 and "response_format" not in request.body
    assert request.has_image() and request.image_parts()[0]["image_url"]["detail"] == "high"
    assert request.headers["x-stainless-retry-count"] == "0"  # the SDK's own retries are off


async def test_keyless_server_gets_no_authorization_header(fake: FakeTime) -> None:
    with OpenAIServer() as open_server:
        open_server.push(chat("hi", usage=False))
        model = make_model(open_server, fake, env={}, api_key_env=None, name="llama3.1:8b")
        try:
            completion = await model.complete(HELLO)
        finally:
            await model.aclose()
    assert "authorization" not in open_server.requests[0].headers
    assert completion.usage.cost_usd is None and completion.usage.calls == 1  # no usage reported: unknown


async def test_azure_path_version_and_api_key_header(server: OpenAIServer, fake: FakeTime) -> None:
    server.push(chat("hello"))
    settings = ModelSettings(kind="azure", name="prod-4o", azure_endpoint=server.root, api_version="2024-10-21")
    model = OpenAIChatModel.from_settings(settings, {"AZURE_OPENAI_API_KEY": KEY}, clock=fake.clock())
    try:
        assert (await model.complete(HELLO)).text == "hello"
    finally:
        await model.aclose()
    (request,) = server.requests
    assert request.deployment == "prod-4o" and request.query["api-version"] == ["2024-10-21"]
    assert request.headers["api-key"] == KEY and "authorization" not in request.headers
    assert request.body["max_completion_tokens"] == 1024


async def test_a_timeout_is_retried_then_bounded(server: OpenAIServer, fake: FakeTime) -> None:
    server.push(Hold(), Hold())  # answered only when the server stops: the client must give up by itself
    model = make_model(server, fake, timeout_seconds=0.2, retry={"max_retries": 1})
    try:
        with pytest.raises(LLMError) as info:
            await model.complete(HELLO)
    finally:
        await model.aclose()
    assert str(info.value) == (f"the model endpoint at {server.url} kept failing (timed out after 0.2 s "
                               "(model.timeout_seconds)); gave up after 1 retry (model.retry.max_retries is 1)")
    server.wait_for_requests(2)  # the server's thread may record the timed-out request after the client gave up
    assert len(server.requests) == 2 and fake.slept == [0.5]


async def test_a_dropped_connection_is_retried(server: OpenAIServer, fake: FakeTime) -> None:
    server.push(Drop(), error(503, "overloaded", headers={"retry-after-ms": "1500"}), chat("ok"))
    logger = ListLogger()
    model = make_model(server, fake, logger=logger)
    try:
        completion = await model.complete(HELLO)
    finally:
        await model.aclose()
    assert completion.text == "ok" and completion.details["attempts"] == 3
    assert fake.slept == [0.5, 1.5]  # backoff (cap 1 s, draw 0.5), then the server's retry-after-ms
    retries = [fields for _, event, fields in logger.lines if event == "model_retry"]
    assert [(r["attempt"], r["status"], r["delay_source"]) for r in retries] == [
        (1, None, "backoff"), (2, 503, "retry-after")]
    assert retries[0]["error"].startswith("connection failed (")


@pytest.mark.parametrize(("answer", "expected"), [
    (Reply(200, "<html><body>Open WebUI</body></html>"),
     "answered with something that is not JSON: check model.base_url (an OpenAI-compatible API usually ends in /v1)"),
    (Reply(200, [1, 2]), "answered with something that is not a chat completion (no 'choices' list): check "
                         "model.base_url"),
])
async def test_an_answer_that_is_no_completion_is_an_llm_error(server: OpenAIServer, fake: FakeTime,
                                                               answer: Reply, expected: str) -> None:
    server.push(answer)
    model = make_model(server, fake)
    try:
        with pytest.raises(LLMError) as info:
            await model.complete(HELLO)
    finally:
        await model.aclose()
    assert str(info.value) == f"the model endpoint at {server.url} {expected}"


async def test_structured_output_refused_falls_back_once_and_is_remembered(server: OpenAIServer,
                                                                         fake: FakeTime) -> None:
    server.push(error(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with "
                           "this model.", param="response_format"), chat(FINISH), chat(FINISH))
    logger = ListLogger()
    model = make_model(server, fake, logger=logger)
    try:
        first = await model.complete(HELLO, schema=SCHEMA)
        second = await model.complete(HELLO, schema=SCHEMA)
    finally:
        await model.aclose()
    sent = [r.body.get("response_format") for r in server.requests]
    assert sent[0] == {"type": "json_schema", "json_schema": {"name": "AgentReply", "schema": SCHEMA,
                                                             "strict": False}}
    assert sent[1:] == [None, None]  # the fallback, then every later call: plain JSON
    assert (first.details["fell_back"], first.details["structured_output"], first.details["attempts"]) == (True,
                                                                                                         "off", 2)
    assert (second.details["fell_back"], second.details["attempts"]) == (False, 1)
    assert logger.events().count("structured_output_unsupported") == 1
    assert fake.slept == []  # a fallback is not a retry


async def test_structured_output_forced_or_off(server: OpenAIServer, fake: FakeTime) -> None:
    server.push(error(400, "response_format json_schema is not supported", param="response_format"))
    forced = make_model(server, fake, structured_output="json_schema")
    try:
        with pytest.raises(LLMError, match="does not take a JSON-schema response_format .* set "
                                           "model.structured_output to auto"):
            await forced.complete(HELLO, schema=SCHEMA)
    finally:
        await forced.aclose()
    server.push(chat(FINISH))
    off = make_model(server, fake, structured_output="off")
    try:
        await off.complete(HELLO, schema=SCHEMA)
    finally:
        await off.aclose()
    assert "response_format" not in server.requests[-1].body


# --- the flat agent end to end -----------------------------------------------------------------


async def test_agent_finishes_and_run_json_has_the_usage(tmp_path: Path, server: OpenAIServer,
                                                        fake: FakeTime) -> None:
    server.push(chat(FINISH, prompt_tokens=1234, completion_tokens=56, cached_tokens=1024))
    result, run_json, _ = await run_agent(tmp_path, server, fake, task=f"Open Settings (my key is {KEY})")
    assert (result.status, result.answer, result.steps) == ("FINISH", "done", 1)
    assert "sk-test" not in result.run_id  # the run directory is named after the redacted task
    assert (run_json["prompt_tokens"], run_json["cached_tokens"], run_json["completion_tokens"],
            run_json["model_calls"]) == (1234, 1024, 56, 1)
    request = server.requests[0]
    assert request.has_image()  # the screenshot went to the model
    assert "Open Settings" in request.text() and KEY not in request.text()  # a key from the environment is a secret


def sent_images(request: Any) -> list[tuple[str, tuple[int, int]]]:
    """Each image part of a request: its detail and the size of the JPEG it carries."""
    out = []
    for part in request.image_parts():
        url = part["image_url"]["url"]
        assert url.startswith("data:image/jpeg;base64,")
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as picture:
            assert picture.format == "JPEG"
            out.append((part["image_url"]["detail"], picture.size))
    return out


@pytest.mark.parametrize(("perception", "expected"), [
    ({}, [("high", (512, 1139))]),  # the default: 3 tiles, 595 image tokens
    ({"image_detail": "low", "image_longest_side": 800, "image_max_tiles": 0}, [("low", (360, 800))]),
    ({"send_clean_screenshot": True, "image_max_tiles": 2}, [("high", (461, 1024))] * 2),
])
async def test_the_screenshot_is_sent_at_the_configured_detail_and_size(
        tmp_path: Path, server: OpenAIServer, fake: FakeTime, perception: dict[str, Any],
        expected: list[tuple[str, tuple[int, int]]]) -> None:
    server.push(chat(FINISH))
    result, _, _ = await run_agent(tmp_path, server, fake, perception=perception)
    assert result.status == "FINISH"
    assert sent_images(server.requests[0]) == expected


async def test_vision_off_sends_text_only(tmp_path: Path, server: OpenAIServer, fake: FakeTime) -> None:
    server.push(chat(FINISH))
    result, _, _ = await run_agent(tmp_path, server, fake, require_image=False, vision=False)
    assert result.status == "FINISH"
    (request,) = server.requests
    assert not request.has_image() and "Open Settings" in request.text()
    server.require_image = True  # what every other run here passes: a request without the screenshot fails
    model = make_model(server, fake)
    try:
        with pytest.raises(LLMError, match="no image part in the request"):
            await model.complete(HELLO)
    finally:
        await model.aclose()


async def test_the_agent_sends_its_reply_schema_and_falls_back_for_the_whole_run(
        tmp_path: Path, server: OpenAIServer, fake: FakeTime) -> None:
    server.push(error(400, "response_format json_schema is not supported by this model", param="response_format"),
                chat(OPEN_SETTINGS), chat(FINISH))
    result, _, log = await run_agent(tmp_path, server, fake)
    assert result.status == "FINISH" and result.steps == 2
    sent = [r.body.get("response_format") for r in server.requests]
    schema = sent[0]["json_schema"]["schema"]
    actions = schema["properties"]["actions"]["items"]["properties"]["name"]["enum"]
    assert {"click", "open_app", "type"} <= set(actions)  # the actions this phone supports
    assert not {"complete", "remember"} & set(actions)  # the reply's status and "remember" do that: one way each
    assert sent[1:] == [None, None]  # refused once: plain JSON for the rest of the run
    assert [e["event"] for e in log].count("structured_output_unsupported") == 1
    calls = [c for line in steps_of(result.run_dir) for c in line["model_calls"]]
    assert [(c["structured_output"], c["fell_back"]) for c in calls] == [("off", True), ("off", False)]
    model_json = json.loads((result.run_dir / "steps" / "0001" / "model.json").read_text())
    assert model_json["calls"][0]["attempts"] == 2 and model_json["usage"]["calls"] == 1


async def test_429_with_retry_after_then_success_is_in_the_run_log(tmp_path: Path, server: OpenAIServer,
                                                                   fake: FakeTime) -> None:
    server.push(error(429, "Rate limit reached for gpt-4o", code="rate_limit_exceeded", type_="requests",
                      headers={"retry-after": "2"}), chat(FINISH))
    result, run_json, log = await run_agent(tmp_path, server, fake)
    assert result.status == "FINISH" and run_json["model_calls"] == 1
    assert fake.slept == [2.0]
    (retry,) = [line for line in log if line["event"] == "model_retry"]
    assert (retry["attempt"], retry["status"], retry["delay_seconds"], retry["delay_source"]) == (
        1, 429, 2.0, "retry-after")
    assert retry["level"] == "warning" and retry["error"] == "HTTP 429: Rate limit reached for gpt-4o"


async def test_500_until_the_retry_budget_is_spent_fails_with_the_reason(tmp_path: Path, server: OpenAIServer,
                                                                         fake: FakeTime) -> None:
    server.push(*[error(500, "The server had an error while processing your request.", type_="server_error")] * 4)
    fake.draws = [0.999]
    result, _, log = await run_agent(tmp_path, server, fake, retry={"max_retries": 10, "budget_seconds": 10,
                                                                    "base_delay_seconds": 4,
                                                                    "max_delay_seconds": 4})
    assert result.status == "FAIL" and "\n" not in result.reason
    assert result.reason.endswith(
        f"the model endpoint at {server.url} kept failing (HTTP 500: The server had an error while processing your "
        "request.); gave up after 2 retries in 8.0 s: the next wait is 4.0 s, past the retry budget of 10 s "
        "(model.retry.budget_seconds)")
    assert len(server.requests) == 3 and server.pending == 1
    assert [line["attempt"] for line in log if line["event"] == "model_retry"] == [1, 2]


async def test_a_model_that_never_answers_fails_the_run_with_the_timeout(tmp_path: Path, server: OpenAIServer,
                                                                        fake: FakeTime) -> None:
    server.push(Hold(), Hold())  # answered only when the server stops: the run must not wait for it
    result, _, log = await run_agent(tmp_path, server, fake, timeout_seconds=0.2, retry={"max_retries": 1})
    assert (result.status, result.steps) == ("FAIL", 1) and "\n" not in result.reason
    assert result.reason.endswith(f"the model endpoint at {server.url} kept failing (timed out after 0.2 s "
                                  "(model.timeout_seconds)); gave up after 1 retry (model.retry.max_retries is 1)")
    server.wait_for_requests(2)  # the server's thread may record the timed-out request after the client gave up
    assert len(server.requests) == 2 and fake.slept == [0.5]
    (retry,) = [line for line in log if line["event"] == "model_retry"]
    assert retry["error"] == "timed out after 0.2 s (model.timeout_seconds)" and retry["delay_source"] == "backoff"


async def test_401_fails_at_once_naming_the_variable(tmp_path: Path, server: OpenAIServer, fake: FakeTime) -> None:
    server.push(chat(FINISH))
    result, _, log = await run_agent(tmp_path, server, fake, env={"UFO_TEST_KEY": "sk-wrong-key-4242"})
    assert result.status == "FAIL" and result.steps == 1
    assert result.reason.endswith(f"the model endpoint at {server.url} refused the API key (HTTP 401): check the "
                                  "key in $UFO_TEST_KEY")
    assert len(server.requests) == 1 and fake.slept == []
    assert not any(line["event"] == "model_retry" for line in log)


async def test_malformed_reply_then_a_good_one_after_the_reask(tmp_path: Path, server: OpenAIServer,
                                                             fake: FakeTime) -> None:
    server.push(chat("I think the phone is fine, really."), chat(FINISH))
    result, run_json, _ = await run_agent(tmp_path, server, fake)
    assert (result.status, result.steps, run_json["model_calls"]) == ("FINISH", 1, 2)
    reask = server.requests[1].body["messages"]
    assert reask[-2] == {"role": "assistant", "content": "I think the phone is fine, really."}
    assert reask[-1]["role"] == "user" and "JSON" in json.dumps(reask[-1])


async def test_an_unknown_action_is_re_asked_and_costs_no_step(tmp_path: Path, server: OpenAIServer,
                                                              fake: FakeTime) -> None:
    server.push(chat(FLY), chat(OPEN_SETTINGS), chat(FINISH))
    result, _, _ = await run_agent(tmp_path, server, fake)
    assert (result.status, result.steps) == ("FINISH", 2)  # the open_app and the answer: the fly never ran
    first = steps_of(result.run_dir)[0]
    assert first["result"]["success"] is True and first["action"]["name"] == "open_app"
    told = server.requests[1].text()
    assert "fly" in told and "unknown" in told.lower()


async def test_open_app_settings(tmp_path: Path, server: OpenAIServer, fake: FakeTime) -> None:
    """Needs the renamed tool layer (``open_app(text)``); fails as an unknown action before it lands."""
    server.push(chat(OPEN_SETTINGS), chat(FINISH))
    result, _, _ = await run_agent(tmp_path, server, fake)
    assert result.status == "FINISH"
    first = steps_of(result.run_dir)[0]
    assert first["result"]["success"] is True, first["result"]


async def test_usage_adds_up_exactly_in_run_json(tmp_path: Path, server: OpenAIServer, fake: FakeTime) -> None:
    calls = [(OPEN_SETTINGS, 1000, 50, 200), ("not json", 1100, 30, 500), (FINISH, 1200, 40, 1000)]
    server.push(*[chat(reply, prompt_tokens=p, completion_tokens=c, cached_tokens=k) for reply, p, c, k in calls])
    prices = {"gpt-4o": {"input": 2.0, "cached_input": 0.5, "output": 8.0}}  # the user's prices win
    result, run_json, _ = await run_agent(tmp_path, server, fake, prices=prices)
    assert result.status == "FINISH"
    assert run_json["prompt_tokens"] == 3300 and run_json["completion_tokens"] == 120
    assert run_json["cached_tokens"] == 1700 and run_json["model_calls"] == 3
    cost = sum((p - k) * 2.0 + k * 0.5 + c * 8.0 for _, p, c, k in calls) / 1e6
    assert run_json["cost_usd"] == round(cost, 6) == 0.00501
    steps = steps_of(result.run_dir)  # per call and per step, the same figures
    calls_seen = [(c["prompt_tokens"], c["completion_tokens"], c["cached_tokens"]) for line in steps
                  for c in line["model_calls"]]
    assert calls_seen == [(p, c, k) for _, p, c, k in calls]
    for key in ("prompt_tokens", "completion_tokens", "cached_tokens", "calls"):
        assert sum(line["usage"][key] for line in steps) == run_json["model_calls" if key == "calls" else key]
    assert sum(line["usage"]["cost_usd"] for line in steps) == pytest.approx(cost)


async def test_an_unpriced_model_costs_unknown_not_zero(tmp_path: Path, server: OpenAIServer,
                                                       fake: FakeTime) -> None:
    server.push(chat(FINISH, model="my-local-llama"))
    _, run_json, _ = await run_agent(tmp_path, server, fake, name="my-local-llama")
    assert run_json["prompt_tokens"] == 100 and run_json["cost_usd"] is None


# --- the command line --------------------------------------------------------------------------


def cli(tmp_path: Path, *args: str, env: dict[str, str],
        model: str = "{name: gpt-4o, api_key_env: UFO_TEST_KEY}") -> subprocess.CompletedProcess[str]:
    task = tmp_path / "task.yaml"
    task.write_text(f"task: Open Settings\nmodel: {model}\nlimits: {{max_steps: 3}}\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "ufo_mobile", "run", str(task), "--log-dir", str(tmp_path / "logs"),
                           *args], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**clean, "PYTHONPATH": str(ROOT), **env})


def test_cli_runs_against_a_compatible_server(tmp_path: Path, server: OpenAIServer) -> None:
    server.push(chat(FINISH, prompt_tokens=2000, completion_tokens=100, cached_tokens=0))
    proc = cli(tmp_path, "--provider", "openai_compatible", "--base-url", server.url, "--model", "gpt-4o",
               env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert "FINISH after 1 step" in proc.stdout
    found = PriceTable.builtin().lookup("gpt-4o-2024-08-06")
    assert found is not None
    cost = found[1].cost(2000, 0, 100)
    assert f"tokens: 2000 prompt + 100 completion in 1 model call, cost ${cost:.4f}" in proc.stdout
    assert KEY not in proc.stdout + proc.stderr
    (run_dir,) = (tmp_path / "logs").iterdir()
    assert json.loads((run_dir / "run.json").read_text())["cost_usd"] == round(cost, 6)
    assert_no_key_in(run_dir)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_cli_an_unpriced_model_prints_cost_unknown_not_zero(tmp_path: Path, server: OpenAIServer) -> None:
    server.push(chat(FINISH, prompt_tokens=300, completion_tokens=20, model="my-local-llama"))
    proc = cli(tmp_path, "--provider", "openai_compatible", "--base-url", server.url, "--model", "my-local-llama",
               env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert ("tokens: 300 prompt + 20 completion in 1 model call, cost unknown (no price for this model; see "
            "model.prices)") in proc.stdout
    assert "$0" not in proc.stdout


def test_cli_missing_key_is_one_line_before_any_run_directory(tmp_path: Path) -> None:
    proc = cli(tmp_path, "--provider", "openai", env={}, model="{name: gpt-4o}")
    assert proc.returncode == 2
    assert proc.stderr == ("error: model.api_key: no API key for the openai model: OPENAI_API_KEY is not set "
                           "(export it, or name another variable in model.api_key_env)\n")
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").iterdir())
    proc = cli(tmp_path, "--provider", "openai_compatible", "--base-url", "http://127.0.0.1:9/v1", env={})
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: model.api_key_env: the environment variable UFO_TEST_KEY")
