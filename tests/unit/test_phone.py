"""The run's live phone (ufo_mobile/core/phone.py): observing through its cache, acting, closing,
and the redactor every dump goes through."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import SCREEN_XML, FakeDriver
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.phone import Phone, Seen
from ufo_mobile.core.tools.context import ActionContext
from ufo_mobile.settings import ModelSettings, PerceptionSettings, Settings, TaskSettings

SECRET = "hunter2-secret"


class Clock:
    """Time that only moves when the test moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ClosingDriver(FakeDriver):
    def __init__(self, xml: str = SCREEN_XML) -> None:
        super().__init__(xml)
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


def settings(ttl: float = 5.0) -> Settings:
    return Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")),
                    perception=PerceptionSettings(control_cache_ttl_seconds=ttl))


async def context_of(phone: Phone) -> ActionContext:
    seen = await phone.observe()
    return phone.action_context(seen.ui, SharedState(), observation_id=seen.ui.observation_id)


async def test_a_screen_is_reused_while_younger_than_the_ttl() -> None:
    driver, clock = FakeDriver(), Clock()
    phone = Phone(driver, clock=clock, cache_ttl=5.0)
    first = await phone.observe()
    clock.now = 4.9
    again = await phone.observe()
    assert driver.dumps == 1 and not first.hit and again.hit and again.ui is first.ui
    clock.now = 5.0
    later = await phone.observe()
    assert driver.dumps == 2 and not later.hit and later.ui is not first.ui
    assert (phone.cache.hits, phone.cache.misses) == (1, 2)


async def test_force_reads_again_and_a_screen_that_may_not_be_kept_is_not() -> None:
    driver = FakeDriver()
    phone = Phone(driver, clock=Clock())
    await phone.observe()
    forced = await phone.observe(force=True)
    assert driver.dumps == 2 and not forced.hit

    async def unkept() -> Seen:
        seen = await phone.read()
        return Seen(seen.ui, fallback="screenshot_only", keep=False)

    phone.invalidate()
    await phone.observe(unkept)
    assert not (await phone.observe(unkept)).hit and driver.dumps == 4


async def test_the_settings_give_the_ttl_and_the_tools() -> None:
    phone = Phone(FakeDriver(), settings=settings(ttl=0), clock=Clock())
    assert phone.cache.ttl == 0 and "click" in phone.tools
    view = phone.tools_without(["click"])
    assert "click" not in view and "click" in phone.tools  # a view: the phone keeps its own


@pytest.mark.parametrize(("name", "args"), [("click", {"index": 1}), ("click", {"index": 999}), ("fly", {})])
async def test_every_action_drops_the_cached_screen(name: str, args: dict[str, int]) -> None:
    driver = FakeDriver()
    phone = Phone(driver, settings=settings(), clock=Clock())
    ctx = await context_of(phone)
    assert (await phone.observe()).hit
    await phone.act(name, args, ctx)  # done, failed or unknown: the screen may have changed all the same
    assert not (await phone.observe()).hit and driver.dumps == 2


async def test_an_action_runs_with_the_tools_it_is_given() -> None:
    driver = FakeDriver()
    phone = Phone(driver, settings=settings(), clock=Clock())
    ctx = await context_of(phone)
    refused = await phone.act("click", {"index": 1}, ctx, tools=phone.tools_without(["click"]))
    assert not refused.success and driver.calls == []
    done = await phone.act("click", {"index": 1}, ctx)
    assert done.success and [name for name, _ in driver.calls] == ["tap"]


async def test_close_closes_the_driver_once() -> None:
    driver = ClosingDriver()
    phone = Phone(driver, clock=Clock())
    await phone.observe()
    await phone.close()
    await phone.close()
    assert driver.closed == 1 and len(phone.cache) == 0


async def test_the_redactor_given_at_the_start_applies_to_every_dump() -> None:
    driver = FakeDriver(SCREEN_XML.replace('text="Wi-Fi"', f'text="{SECRET}"'))
    phone = Phone(driver, redact=lambda text: text.replace(SECRET, "[REDACTED]"), clock=Clock())
    seen = await phone.observe()
    assert SECRET not in seen.ui.formatted_text and "[REDACTED]" in seen.ui.formatted_text


async def test_the_redactor_is_bound_once() -> None:
    driver = FakeDriver(SCREEN_XML.replace('text="Wi-Fi"', f'text="{SECRET}"'))
    phone = Phone(driver, settings=settings(), clock=Clock())
    assert SECRET in (await phone.observe()).ui.formatted_text and not phone.redacts  # none bound yet

    def redact(text: str) -> str:
        return text.replace(SECRET, "[REDACTED]")

    phone.bind_redactor(redact)
    phone.bind_redactor(redact)  # the same one again: nothing changes
    with pytest.raises(ValueError, match="bound already"):
        phone.bind_redactor(str.upper)
    phone.invalidate()
    assert SECRET not in (await phone.observe()).ui.formatted_text
    assert phone.redact(f"key {SECRET}") == "key [REDACTED]"
