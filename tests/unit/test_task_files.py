"""The shipped task files load, and build their model, with only the variables their header names."""

from __future__ import annotations

import asyncio

import pytest

from ufo_mobile.core.llm.factory import make_model
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import load_settings
from ufo_mobile.shipped import CONFIG_DIR

TASKS = CONFIG_DIR / "tasks"
NEEDS = {
    "openai.yaml": {"OPENAI_API_KEY": "sk-test"},
    "azure.yaml": {"AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com",
                   "OPENAI_API_VERSION": "2024-10-21", "AZURE_OPENAI_DEPLOYMENT": "my-gpt4o"},
    "local.yaml": {},
    "demo.yaml": {},
}


def test_every_task_file_is_listed_here() -> None:
    assert {p.name for p in TASKS.glob("*.yaml")} == set(NEEDS)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_a_task_file_builds_its_model(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION",
                "OPENAI_BASE_URL", "AZURE_OPENAI_DEPLOYMENT"):
        monkeypatch.delenv(var, raising=False)
    for var, value in NEEDS[name].items():
        monkeypatch.setenv(var, value)
    settings = load_settings(TASKS / name)
    model = make_model(settings.model)
    assert model.name
    close = getattr(model, "aclose", None)
    if close is not None:
        asyncio.run(close())


@pytest.mark.parametrize("name", ["openai.yaml", "azure.yaml"])
def test_without_its_variables_a_task_file_names_the_missing_one(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in NEEDS[name]:
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError) as info:
        make_model(load_settings(TASKS / name).model)
    assert any(var in str(info.value) for var in NEEDS[name])
