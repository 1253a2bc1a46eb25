"""A TASK's settings: the service's base, then the task YAML, the options, the task name and the request;
what a client may not set is refused in one line naming the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ufo_mobile.errors import ConfigError
from ufo_mobile.fleet.devices import Phone, sim_phones
from ufo_mobile.host.aip.phones import pick
from ufo_mobile.host.aip.protocol import parse_client_message, task_metadata
from ufo_mobile.host.aip.tasks import settings_of_task
from ufo_mobile.settings import Settings


@pytest.fixture
def base(tmp_path: Path) -> Settings:
    return Settings.model_validate({
        "task": {"text": "-"},
        "model": {"kind": "openai", "name": "gpt-4o", "api_key": SecretStr("sk-server-only")},
        "limits": {"max_steps": 9, "step_timeout_seconds": 30},
        "device": {"kind": "adb", "stealth": True},
        "logs": {"dir": str(tmp_path / "logs")},
    })


def settings(base: Settings, **fields: Any) -> Settings:
    message = parse_client_message(json.dumps({"type": "task", **fields}))
    return settings_of_task(base, message, task_metadata(message))


def refusal(base: Settings, **fields: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        settings(base, **fields)
    text = str(caught.value)
    assert "\n" not in text
    return text


def test_the_request_is_the_task_and_the_base_stays(base: Settings) -> None:
    s = settings(base, request="Turn on Wi-Fi", task_name="wifi")
    assert (s.task.text, s.task.name) == ("Turn on Wi-Fi", "wifi")
    assert s.model == base.model and s.device == base.device and s.limits == base.limits
    assert s.model.api_key is not None and s.model.api_key.get_secret_value() == "sk-server-only"


def test_yaml_then_options_then_name_then_request(base: Settings) -> None:
    yaml_text = "task: {text: from yaml, name: yaml-name}\nlimits: {max_steps: 4}\nmode: reasoning\n"
    s = settings(base, task_name="ignored", metadata={"task_yaml": yaml_text,
                                                       "options": {"limits": {"max_consecutive_failures": 1}}})
    assert (s.task.text, s.task.name, s.mode) == ("from yaml", "yaml-name", "reasoning")
    assert (s.limits.max_steps, s.limits.max_consecutive_failures, s.limits.step_timeout_seconds) == (4, 1, 30)
    s = settings(base, request="from request", metadata={"task_yaml": "task: shorthand text",
                                                          "options": {"limits": {"max_steps": 2}}})
    assert (s.task.text, s.limits.max_steps) == ("from request", 2)


def test_an_inline_output_schema_is_allowed(base: Settings) -> None:
    schema = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
    s = settings(base, request="What does it cost?", metadata={"options": {"task": {"output": {"schema": schema}}}})
    assert s.task.output is not None and s.task.output.json_schema == schema


@pytest.mark.parametrize(("metadata", "error"), [
    ({"options": {"model": {"base_url": "http://attacker.example/v1"}}},
     "metadata.options: model: is the server's to set (serve --config), not a task's"),
    ({"task_yaml": "device: {serial: other-phone}"}, "task_yaml: device: is the server's to set"),
    ({"task_yaml": "logs: {dir: /etc}"}, "task_yaml: logs: is the server's to set"),
    ({"options": {"credentials": {"env": {"pin": "HOME"}}}}, "metadata.options: credentials: is the server's"),
    ({"options": {"tools": {"custom": [{"name": "x", "function": "os:system"}]}}},
     "metadata.options: tools.custom: is the server's to set"),
    ({"options": {"reasoning": {"scripter": {"enabled": True}}}}, "metadata.options: reasoning: is the server's"),
    ({"options": {"task": {"output": {"model": "os:Path"}}}},
     "metadata.options: task.output.model: a task sent over the network gives its output as an inline 'schema'"),
    ({"options": {"colour": "blue"}}, "metadata.options: colour: unknown key"),
])
def test_what_a_client_may_not_set_is_refused(base: Settings, metadata: dict[str, Any], error: str) -> None:
    assert refusal(base, request="x", metadata=metadata).startswith(error)


@pytest.mark.parametrize(("fields", "error"), [
    ({"request": "x", "metadata": {"options": {"limits": {"max_steps": 0}}}},
     "TASK: limits.max_steps: "),  # a bare "key: ": pydantic's words follow (not asserted)
    ({"request": "x", "metadata": {"options": {"limits": {"max_stepz": 3}}}}, "TASK: limits.max_stepz: unknown key"),
    ({"request": "x", "metadata": {"options": {"mode": "yolo"}}}, "TASK: mode: "),
    ({}, "TASK: request: the task has no text: give 'request' (or task.text in metadata.task_yaml)"),
    ({"metadata": {"task_yaml": "task: {name: only-a-name}"}}, "TASK: request: the task has no text"),
    ({"request": "x", "metadata": {"task_yaml": "- a list"}}, "task_yaml: must be a mapping of settings"),
    ({"request": "x", "metadata": {"task_yaml": "limits: {max_steps: 3"}}, "task_yaml:"),
])
def test_a_task_that_does_not_validate_is_one_line(base: Settings, fields: dict[str, Any], error: str) -> None:
    text = refusal(base, **fields)
    assert text.startswith(error) and (text.removeprefix(error).strip() or not error.endswith(": ")), text


def test_a_clients_yaml_never_reads_the_servers_environment(base: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UFO_TEST_SECRET", "do-not-read")
    s = settings(base, metadata={"task_yaml": "task: 'Type ${UFO_TEST_SECRET}'"})
    assert s.task.text == "Type ${UFO_TEST_SECRET}"


def test_which_phone_a_task_asks_for() -> None:
    phones = [*sim_phones(2), Phone("adb", "127.0.0.1:5555")]
    assert pick(phones, "box", None, None) is None
    assert pick(phones, "box", None, "box") is None  # a constellation names the device server itself
    assert pick(phones, "box", None, "127.0.0.1:5555") == "127.0.0.1:5555"
    assert pick(phones, "box", "sim-2", "box") == "sim-2"
    with pytest.raises(ValueError, match=r"^no phone 'sim-9' here \(phones: sim-1, sim-2, 127.0.0.1:5555\)$"):
        pick(phones, "box", "sim-9", None)
    with pytest.raises(ValueError, match=r"^target_id 'other' is neither this device server \('box'\) nor one"):
        pick(phones, "box", None, "other")
