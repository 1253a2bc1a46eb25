"""The factory builds every agent of a run whole, on one shared Phone (ufo_mobile/core/agents/factory.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import FakeDriver, WaitsForever
from ufo_mobile.core.agents.codeact import CodeActAgent
from ufo_mobile.core.agents.factory import build_root
from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.agents.reasoning import ManagerAgent
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.base import Processor
from ufo_mobile.settings import ModelSettings, Settings, TaskSettings


def settings(mode: str = "direct") -> Settings:
    return Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")), mode=mode)


def test_every_agent_of_a_reasoning_run_shares_the_phone_and_has_its_processor() -> None:
    driver = FakeDriver()
    root = build_root(settings("reasoning"), device=driver, model=WaitsForever(["unused"]))
    assert isinstance(root, ManagerAgent) and root.phone is not None and root.phone.driver is driver
    subagents = (root.executor, root.text_manipulator, root.scripter)
    assert all(agent.phone is root.phone for agent in subagents)
    assert all(isinstance(agent.processor, Processor) for agent in (root, *subagents))  # made with the agent
    # each agent offers its own view of the phone's tools: the JSON reply keeps facts and ends the task
    assert "complete" in root.phone.tools and "complete" not in root.executor.tools
    assert "complete" not in root.tools and "click" in root.tools


@pytest.mark.parametrize(("mode", "kind", "complete"),
                         [("direct", MobileAgent, False), ("codeact", CodeActAgent, True)])
def test_a_phone_passed_in_is_the_run_s(mode: str, kind: type[MobileAgent], complete: bool) -> None:
    phone = Phone(FakeDriver(), settings=settings(mode))
    root = build_root(settings(mode), phone=phone, model=WaitsForever(["unused"]))
    assert type(root) is kind and root.phone is phone and ("complete" in root.tools) is complete
    assert isinstance(root, MobileAgent) and root.confirm_processor.phases == root.processor.phases[2:]


def test_an_agent_needs_a_device_or_a_phone() -> None:
    with pytest.raises(TypeError, match="device or a phone"):
        build_root(settings(), model=WaitsForever(["unused"]))
