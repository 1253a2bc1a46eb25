"""Model settings and endpoint resolution: every missing key or URL is a one-line ConfigError naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from ufo_mobile.core.llm.endpoint import OPENAI_URL, Endpoint, resolve_endpoint
from ufo_mobile.core.llm.factory import make_model
from ufo_mobile.core.llm.openai_chat import OpenAIChatModel
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import ModelSettings, load_settings

KEY = "sk-test-0123456789"


def resolve(env: dict[str, str], **settings: object) -> Endpoint:
    return resolve_endpoint(ModelSettings.model_validate(settings), env)


def config_error(env: dict[str, str], **settings: object) -> str:
    with pytest.raises(ConfigError) as info:
        resolve(env, **settings)
    message = str(info.value)
    assert "\n" not in message and KEY not in message
    return message


def test_openai_key_from_its_usual_variable() -> None:
    ep = resolve({"OPENAI_API_KEY": KEY}, kind="openai", name="gpt-4o-mini")
    assert (ep.kind, ep.model, ep.url, ep.key, ep.key_source) == ("openai", "gpt-4o-mini", OPENAI_URL, KEY,
                                                                  "OPENAI_API_KEY")
    assert KEY not in repr(ep)


def test_missing_key_names_the_variable() -> None:
    assert config_error({}, kind="openai") == ("model.api_key: no API key for the openai model: OPENAI_API_KEY is "
                                               "not set (export it, or name another variable in model.api_key_env)")
    assert "OPENAI_API_KEY is empty" in config_error({"OPENAI_API_KEY": ""}, kind="openai")
    assert "AZURE_OPENAI_API_KEY is not set" in config_error({}, kind="azure")


def test_key_from_a_named_variable_or_the_settings() -> None:
    ep = resolve({"MY_KEY": KEY, "OPENAI_API_KEY": "other"}, kind="openai", api_key_env="MY_KEY")
    assert (ep.key, ep.key_source) == (KEY, "MY_KEY")
    ep = resolve({}, kind="openai", api_key=SecretStr(KEY))
    assert (ep.key, ep.key_source) == (KEY, "model.api_key")
    message = config_error({}, kind="openai", api_key_env="MY_KEY")
    assert message.startswith("model.api_key_env: the environment variable MY_KEY")


def test_compatible_server_needs_no_key_and_never_gets_the_openai_one() -> None:
    ep = resolve({"OPENAI_API_KEY": KEY}, kind="openai_compatible", base_url="http://localhost:11434/v1",
                 name="llama3.1:8b")
    assert (ep.url, ep.key, ep.key_source) == ("http://localhost:11434/v1", None, "")
    ep = resolve({"LOCAL_KEY": KEY}, kind="openai_compatible", base_url="http://x/v1", api_key_env="LOCAL_KEY")
    assert ep.key == KEY


def test_openai_base_url_from_settings_or_environment() -> None:
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://proxy/v1"}
    assert resolve(env, kind="openai").url == "http://proxy/v1"
    assert resolve(env, kind="openai", base_url="http://mine/v1").url == "http://mine/v1"


def test_azure_endpoint_deployment_and_version() -> None:
    env = {"AZURE_OPENAI_API_KEY": KEY, "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com",
           "OPENAI_API_VERSION": "2024-10-21"}
    ep = resolve(env, kind="azure", name="gpt-4o")
    assert (ep.url, ep.deployment, ep.api_version, ep.key_source) == ("https://r.openai.azure.com", "gpt-4o",
                                                                     "2024-10-21", "AZURE_OPENAI_API_KEY")
    ep = resolve(env, kind="azure", azure_deployment="prod-4o", azure_endpoint="https://s.openai.azure.com",
                 api_version="2025-01-01")
    assert (ep.url, ep.deployment, ep.api_version) == ("https://s.openai.azure.com", "prod-4o", "2025-01-01")
    assert config_error({"AZURE_OPENAI_API_KEY": KEY, "OPENAI_API_VERSION": "v"}, kind="azure").startswith(
        "model.azure_endpoint: the azure model needs model.azure_endpoint or $AZURE_OPENAI_ENDPOINT")
    assert config_error({"AZURE_OPENAI_API_KEY": KEY, "AZURE_OPENAI_ENDPOINT": "https://e"}, kind="azure").startswith(
        "model.api_version: the azure model needs model.api_version or $OPENAI_API_VERSION")


@pytest.mark.parametrize(("model", "expected"), [
    ("{kind: openai_compatible}", "model: the openai_compatible model needs 'base_url: <server URL>'"),
    ("{kind: azure, base_url: 'http://x'}", "model: azure takes its resource URL as 'azure_endpoint'"),
    ("{kind: openai, structured_output: maybe}", "model.structured_output: "),
    ("{kind: openai, api_key_env: 'not a name'}", "model.api_key_env: "),
    ("{kind: openai, retry: {max_retries: -1}}", "model.retry.max_retries: "),
    ("{kind: openai, prices: {gpt-x: {input: 1}}}", "model.prices.gpt-x.output: "),
    ("{kind: bard}", "model.kind: "),
    ("{kind: openai_compatible, base_url: 'localhost:8000/v1'}",
     "model.base_url: not an http(s) URL: 'localhost:8000/v1' (e.g. http://localhost:11434/v1)"),
    ("{kind: azure, azure_endpoint: 'https://[::1'}", "model.azure_endpoint: not an http(s) URL"),
])
def test_settings_errors(tmp_path: Path, model: str, expected: str) -> None:
    task = tmp_path / "t.yaml"
    task.write_text(f"task: x\nmodel: {model}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(task, env={})
    message = str(info.value)
    assert message.startswith(f"{task}:2: {expected}") and "\n" not in message
    # after a bare 'key: ' comes what pydantic found, in its words (not asserted)
    assert message.removeprefix(f"{task}:2: {expected}").strip() or not expected.endswith(": ")


def test_key_in_the_task_file_comes_through_interpolation(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text("task: x\nmodel: {kind: openai, api_key: '${TEAM_KEY}'}\n")
    settings = load_settings(task, env={"TEAM_KEY": KEY})
    assert settings.secrets() == [KEY]
    assert KEY not in repr(settings.model)


async def test_factory_builds_each_kind(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("replies: [{status: FINISH, result: ok}]\n")
    assert isinstance(make_model(ModelSettings(script=script), env={}), ScriptedModel)
    model = make_model(ModelSettings(kind="openai_compatible", base_url="http://127.0.0.1:9/v1", name="m"), env={})
    assert isinstance(model, OpenAIChatModel) and model.name == "m"
    await model.aclose()
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        make_model(ModelSettings(kind="openai"), env={})


def test_azure_names_everything_missing_in_one_line(tmp_path: Path) -> None:
    """Nothing set: one line names the key, the endpoint and the version; set one, the line names the rest;
    one left: the error is that one's own (its key path first)."""
    task = tmp_path / "t.yaml"
    task.write_text("task: x\nmodel: {kind: azure, name: prod-4o}\n")
    env: dict[str, str] = {}
    with pytest.raises(ConfigError) as info:
        make_model(load_settings(task, env=env).model, env=env)
    message = str(info.value)
    assert message.startswith("model: the azure model lacks 3 settings: ") and "\n" not in message
    for name in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION", "model.api_key",
                 "model.azure_endpoint", "model.api_version"):
        assert name in message
    env = {"AZURE_OPENAI_API_KEY": KEY}
    message = config_error(env, kind="azure")
    assert message.startswith("model: the azure model lacks 2 settings: ")
    assert "AZURE_OPENAI_ENDPOINT" in message and "OPENAI_API_VERSION" in message
    assert "AZURE_OPENAI_API_KEY" not in message
    message = config_error({"AZURE_OPENAI_ENDPOINT": "https://e"}, kind="azure", api_key_env="TEAM_KEY")
    assert message.startswith("model: the azure model lacks 2 settings: model.api_key_env: the environment "
                              "variable TEAM_KEY")
    assert "OPENAI_API_VERSION" in message and "AZURE_OPENAI_ENDPOINT" not in message
    assert config_error({"OPENAI_API_VERSION": "v", "AZURE_OPENAI_ENDPOINT": "https://e"}, kind="azure") == (
        "model.api_key: no API key for the azure model: AZURE_OPENAI_API_KEY is not set (export it, or name "
        "another variable in model.api_key_env)")


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:hunter2@proxy.example:8443/v1?api-key=hunter3#x", "https://proxy.example:8443/v1"),
    ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
    ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
])
def test_messages_name_the_url_without_its_credentials(url: str, shown: str) -> None:
    assert Endpoint("openai_compatible", "m", url).shown == shown


async def test_an_unreachable_server_is_named_without_the_password_in_its_url() -> None:
    from ufo_mobile.core.memory.messages import ChatMessage
    from ufo_mobile.errors import LLMError
    from ufo_mobile.settings import RetrySettings

    settings = ModelSettings(kind="openai_compatible", name="m", base_url="http://user:hunter2@127.0.0.1:9/v1",
                             retry=RetrySettings(max_retries=0, budget_seconds=5))
    model = make_model(settings, env={})
    try:
        with pytest.raises(LLMError) as info:
            await model.complete([ChatMessage(role="user", content="hi")])
    finally:
        await model.aclose()
    assert "127.0.0.1:9" in str(info.value) and "hunter2" not in str(info.value)
