"""Every environment variable a settings file needs and lacks, named in one line: the ``${VAR}``s no
later file or option replaced and, for an azure model, the variables it falls back on."""

from __future__ import annotations

from pathlib import Path

import pytest

from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import load_settings
from ufo_mobile.shipped import CONFIG_DIR

AZURE = CONFIG_DIR / "tasks" / "azure.yaml"


def error_of(path: Path, env: dict[str, str], **overrides: object) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env=env, overrides=overrides)
    return str(caught.value)


def test_the_azure_task_with_nothing_set_names_all_four_variables_in_one_line() -> None:
    message = error_of(AZURE, {})
    assert message == (f"{AZURE}:12: model.name: environment variables AZURE_OPENAI_DEPLOYMENT, "
                       "AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION are not set")
    partly = error_of(AZURE, {"AZURE_OPENAI_API_KEY": "k", "OPENAI_API_VERSION": "2024-10-21"})
    assert partly.endswith(": environment variables AZURE_OPENAI_DEPLOYMENT, AZURE_OPENAI_ENDPOINT are not set")


def test_settings_given_in_the_model_section_are_not_asked_of_the_environment() -> None:
    message = error_of(AZURE, {}, model={"azure_endpoint": "https://r.openai.azure.com", "api_version": "v",
                                         "api_key_env": "MY_KEY"})
    assert message.endswith("model.name: environment variable AZURE_OPENAI_DEPLOYMENT is not set")


def test_an_option_that_replaces_the_value_makes_the_variable_unneeded() -> None:
    settings = load_settings(AZURE, env={}, overrides={"model": {"name": "my-deployment"}})
    assert settings.model.name == "my-deployment"  # the endpoint's own check names what else is missing
    assert load_settings(AZURE, env={"AZURE_OPENAI_DEPLOYMENT": "d"}).model.name == "d"


def test_a_file_with_several_unset_variables_names_them_all_at_the_first(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("replies: [x]\n", encoding="utf-8")
    task = tmp_path / "t.yaml"
    task.write_text("task: 'a ${ONE}'\nmodel: {script: s.yaml}\nlogs: {dir: '${TWO}/logs'}\n", encoding="utf-8")
    assert error_of(task, {}) == f"{task}:1: task: environment variables ONE, TWO are not set"
    assert error_of(task, {"ONE": "1"}) == f"{task}:3: logs.dir: environment variable TWO is not set"
