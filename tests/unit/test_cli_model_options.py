"""``run --provider/--model/--base-url``: command-line overrides of the model settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from ufo_mobile.cli import build_parser
from ufo_mobile.cli.run_cmd import run_overrides
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import load_settings


def overrides(*args: str) -> dict[str, object]:
    return run_overrides(build_parser().parse_args(["run", "task.yaml", *args]))


def test_provider_model_and_base_url() -> None:
    assert overrides("--provider", "openai_compatible", "--model", "llama3.1:8b",
                     "--base-url", "http://localhost:11434/v1") == {
        "model": {"kind": "openai_compatible", "name": "llama3.1:8b", "base_url": "http://localhost:11434/v1"}}
    assert overrides("--provider", "azure", "--base-url", "https://r.openai.azure.com") == {
        "model": {"kind": "azure", "azure_endpoint": "https://r.openai.azure.com"}}
    assert overrides() == {}


@pytest.mark.parametrize(("args", "message"), [
    (("--base-url", "localhost:8000"), "--base-url: not an http(s) URL: 'localhost:8000'"),
    (("--model", " "), "--model: the model name is empty"),
])
def test_bad_values_are_config_errors(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        overrides(*args)
    assert str(info.value) == message


def test_provider_switches_a_scripted_task_to_a_real_model(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text("task: x\nmodel: {kind: scripted, script: s.yaml}\n")
    settings = load_settings(task, overrides=overrides("--provider", "openai", "--model", "gpt-4.1-mini"), env={})
    assert (settings.model.kind, settings.model.name) == ("openai", "gpt-4.1-mini")
    with pytest.raises(ConfigError, match="model: the openai_compatible model needs 'base_url"):
        load_settings(task, overrides=overrides("--provider", "openai_compatible"), env={})


def test_invalid_provider_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", "t.yaml", "--provider", "bard"])
    assert info.value.code == 2
    assert "--provider: invalid choice: 'bard'" in capsys.readouterr().err
