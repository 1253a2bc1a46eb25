"""After an action the screen is dumped a second time to see that it stopped moving. A second dump
equal to the first shows the same screen: it counts as a dump, but it is not parsed again, unless
the first screen depended on more than its dump (a focused field, where the phone is asked whether
its keyboard is up)."""

from __future__ import annotations

import pytest

from tests.fakes import SCREEN_XML, FakeDriver
from ufo_mobile.core.device.base import KeyboardState
from ufo_mobile.core.memory.state import ActionEntry, SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.ui import provider as provider_module
from ufo_mobile.settings import PerceptionSettings

FOCUSED_XML = SCREEN_XML.replace('class="android.widget.EditText"\n package="com.example.app" content-desc="" '
                                 'checkable="false" checked="false" clickable="true" enabled="true"\n focusable="true" '
                                 'focused="false"', 'class="android.widget.EditText"\n package="com.example.app" '
                                 'content-desc="" checkable="false" checked="false" clickable="true" enabled="true"\n '
                                 'focusable="true" focused="true"')


class KeyboardPhone(FakeDriver):
    supported = FakeDriver.supported | {"keyboard_state"}

    def __init__(self, xml: str) -> None:
        super().__init__(xml)
        self.keyboard_asked = 0

    async def keyboard_state(self) -> KeyboardState:
        self.keyboard_asked += 1
        return KeyboardState(False, None)


def _after_action() -> StepContext:
    shared = SharedState(action_history=[ActionEntry(id="a", step=1, name="click")])
    return StepContext(run_id="r", step=2, agent_name="A", request="x", shared=shared)


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    parsed: list[int] = []
    original = provider_module.build_ui_state

    def counting(*args: object, **kwargs: object) -> object:
        parsed.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(provider_module, "build_ui_state", counting)
    return parsed


async def test_an_unchanged_second_dump_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _counting_parses(monkeypatch)
    driver = FakeDriver()
    ctx = _after_action()
    await DataCollection(Phone(driver, cache_ttl=0), PerceptionSettings()).run(ctx)
    assert ctx.observation is not None
    assert ctx.observation.stability["stable"] is True and ctx.observation.stability["dumps"] == 2
    assert driver.dumps == 2 and len(parsed) == 1 and ctx.observation.dump_attempts == 2
    assert ctx.observation.observation_id == "obs-0002-1"
    phase = DataCollection(Phone(driver, cache_ttl=0), PerceptionSettings())
    await phase.run(_after_action())
    again = _after_action()
    await phase.run(again)
    assert again.observation is not None  # numbered as before: the check still counts as a read
    assert again.observation.observation_id == "obs-0002-3"


async def test_a_screen_that_asked_the_phone_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    assert 'focused="true"' in FOCUSED_XML
    parsed = _counting_parses(monkeypatch)
    driver = KeyboardPhone(FOCUSED_XML)
    ctx = _after_action()
    await DataCollection(Phone(driver, cache_ttl=0), PerceptionSettings()).run(ctx)
    assert ctx.observation is not None and ctx.observation.stability["stable"] is True
    assert driver.dumps == 2 and len(parsed) == 2 and driver.keyboard_asked == 2
