from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping
from typing import Any

import pytest

from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.base import Middleware, Processor
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.errors import ConfigError, DeviceDisconnectedError


def make_ctx() -> StepContext:
    return StepContext(run_id="r", step=1, agent_name="A", request="do it", shared=SharedState())


class P:
    def __init__(self, name: str, log: list[str], *, fail: BaseException | None = None,
                 update: Mapping[str, Any] | None = None, always: bool = False) -> None:
        self.name = name
        self.log = log
        self.fail = fail
        self.update = update
        self.always = always

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        self.log.append(f"run:{self.name}")
        if self.fail is not None:
            raise self.fail
        return self.update


class Hooks(Middleware):
    def __init__(self, tag: str, log: list[str]) -> None:
        self.tag, self.log = tag, log

    async def before(self, ctx: StepContext, phase: str) -> None:
        self.log.append(f"{self.tag}.before:{phase}")

    async def after(self, ctx: StepContext, phase: str) -> None:
        self.log.append(f"{self.tag}.after:{phase}")

    async def on_error(self, ctx: StepContext, phase: str, error: BaseException) -> None:
        self.log.append(f"{self.tag}.error:{phase}:{type(error).__name__}")


def recorder(log: list[str]) -> Any:
    async def record(ctx: StepContext) -> None:
        log.append(f"record:{ctx.status}")
    return record


async def test_phases_run_in_order_with_middleware_and_timings() -> None:
    log: list[str] = []
    phases = [P("one", log, update={"plan": ["x"]}), P("two", log, update={"steps_used": 1})]
    proc = Processor(phases, recorder=recorder(log), middleware=[Hooks("a", log), Hooks("b", log)])
    ctx = await proc.process(make_ctx())
    assert log == ["a.before:one", "b.before:one", "run:one", "b.after:one", "a.after:one",
                   "a.before:two", "b.before:two", "run:two", "b.after:two", "a.after:two",
                   "record:CONTINUE"]
    assert set(ctx.timings) == {"one", "two"} and all(t >= 0 for t in ctx.timings.values())
    assert ctx.shared.plan == ["x"] and ctx.shared.steps_used == 1


async def test_expected_error_fails_the_step_runs_always_phases_and_records() -> None:
    log: list[str] = []
    phases = [P("observe", log, fail=DeviceDisconnectedError("gone", serial="emu-1")), P("llm", log),
              P("memory", log, always=True, update={"steps_used": 1})]
    ctx = await Processor(phases, recorder=recorder(log), middleware=[Hooks("m", log)]).process(make_ctx())
    assert log == ["m.before:observe", "run:observe", "m.error:observe:DeviceDisconnectedError",
                   "m.before:memory", "run:memory", "m.after:memory", "record:FAIL"]
    assert ctx.status == "FAIL"
    assert ctx.failed_phase == "observe"
    assert "emu-1" in ctx.reason and "observe failed" in ctx.reason
    assert "observe" in ctx.timings and ctx.shared.steps_used == 1


async def test_programming_errors_propagate_after_recording() -> None:
    log: list[str] = []
    phases = [P("one", log, fail=KeyError("bug"))]
    with pytest.raises(KeyError):
        await Processor(phases, recorder=recorder(log), middleware=[Hooks("m", log)]).process(make_ctx())
    assert log[-2:] == ["m.error:one:KeyError", "record:CONTINUE"]


async def test_config_errors_propagate() -> None:
    log: list[str] = []
    with pytest.raises(ConfigError):
        await Processor([P("one", log, fail=ConfigError("bad"))], recorder=recorder(log)).process(make_ctx())
    assert log[-1] == "record:CONTINUE"


async def test_cancelled_step_is_still_recorded() -> None:
    log: list[str] = []
    started = asyncio.Event()

    class Slow(P):
        async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
            self.log.append("run:slow")
            started.set()
            await asyncio.Event().wait()  # until cancelled
            return None

    task = asyncio.ensure_future(Processor([Slow("slow", log)], recorder=recorder(log)).process(make_ctx()))
    await asyncio.wait_for(started.wait(), 60)  # the slow phase is running (60 s: a hang guard only)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log == ["run:slow", "record:CONTINUE"]


async def test_data_collection_reuses_cached_controls_until_invalidated() -> None:
    from tests.fakes import FakeDriver
    from ufo_mobile.core.phone import Phone
    from ufo_mobile.core.processors.data_collection import DataCollection
    from ufo_mobile.settings import PerceptionSettings

    now = [0.0]
    driver = FakeDriver()
    phone = Phone(driver, clock=lambda: now[0], cache_ttl=5.0)
    phase = DataCollection(phone, PerceptionSettings())
    first, second, third = make_ctx(), make_ctx(), make_ctx()
    await phase.run(first)
    now[0] = 4.9
    await phase.run(second)  # within the TTL, no action in between: a hit
    assert driver.dumps == 1 and second.cache["hit"] == 1
    assert second.observation is not None and first.observation is not None
    assert second.observation.observation_id == first.observation.observation_id
    now[0] = 10.0
    await phase.run(third)  # expired
    assert driver.dumps == 2 and third.cache["hit"] == 0
    assert first.observation.model_image is not None
    # 3 tiles of 512 px at most (the default budget): a 1080x2400 screen goes as 512x1139
    assert first.observation.model_image_scale == pytest.approx(512 / 1080)
    from PIL import Image
    with Image.open(io.BytesIO(first.observation.model_image)) as image:
        assert image.size == (512, 1139)
