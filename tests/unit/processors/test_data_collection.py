from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import SCREEN_XML, FakeDriver
from ufo_mobile.core.device.base import CurrentApp
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.state import ActionEntry, SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.processors.recorder import StepRecorder
from ufo_mobile.core.session import Session
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.core.ui import build_ui_state
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.errors import DeviceCommandError, DeviceTimeoutError, DumpUnavailableError
from ufo_mobile.settings import LogSettings, ModelSettings, PerceptionSettings, Settings, TaskSettings

MOVED_XML = SCREEN_XML.replace("[0,200][1080,400]", "[0,260][1080,460]")  # the button still sliding in


class FakeClock:
    """Virtual time for the settle loop: reading it never moves it; ``sleep`` moves it by the request."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class ScriptedDumps(FakeDriver):
    """Serves the given dumps in order, then repeats the last one; each dump costs ``dump_seconds``."""

    def __init__(self, dumps: list[str], *, clock: FakeClock | None = None, dump_seconds: float = 0.0) -> None:
        super().__init__()
        self.sequence = dumps
        self.clock = clock
        self.dump_seconds = dump_seconds

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        if self.clock is not None:
            self.clock.now += self.dump_seconds
        return self.sequence[min(self.dumps, len(self.sequence)) - 1]


def ctx_after_action(step: int = 2) -> StepContext:
    shared = SharedState(action_history=[ActionEntry(id="a", step=step - 1, name="click")])
    return StepContext(run_id="r", step=step, agent_name="A", request="x", shared=shared)


def phase(driver: FakeDriver, clock: FakeClock | None = None, **settings: Any) -> DataCollection:
    """The phase on virtual time (a fresh ``FakeClock`` unless one is given): nothing here waits for real."""
    opts = {"settle_interval_seconds": 0.25, **settings}
    clock = clock if clock is not None else FakeClock()
    return DataCollection(Phone(driver, clock=clock, cache_ttl=0), PerceptionSettings(**opts), sleep=clock.sleep)


async def test_after_an_action_waits_until_two_dumps_agree() -> None:
    clock = FakeClock()
    driver = ScriptedDumps([MOVED_XML, SCREEN_XML, SCREEN_XML])
    ctx = ctx_after_action()
    await phase(driver, clock).run(ctx)
    assert ctx.observation is not None
    # moved (+ screenshot), check disagrees; one interval; settled (+ screenshot), check agrees
    assert ctx.observation.stability == {"checked": True, "stable": True, "dumps": 4, "waited_seconds": 0.25}
    assert clock.sleeps == [0.25] and driver.dumps == 4
    assert "@540,300" in ctx.observation.ui_state.formatted_text  # the settled position ([0,200,1080,400])


async def test_a_screen_that_never_settles_is_used_after_the_timeout() -> None:
    clock = FakeClock()
    driver = ScriptedDumps([MOVED_XML, SCREEN_XML] * 200)
    ctx = ctx_after_action()
    await phase(driver, clock, settle_timeout_seconds=1.0, settle_interval_seconds=0.25).run(ctx)
    assert ctx.observation is not None
    # every check disagrees; at t=0, 0.25, 0.5, 0.75 the timeout has not passed, so the phase sleeps one
    # interval and observes again; the check at t=1.0 is the last: 1 + 4 * 2 + 1 dumps
    assert ctx.observation.stability == {"checked": True, "stable": False, "dumps": 10, "waited_seconds": 1.0}
    assert clock.sleeps == [0.25] * 4 and clock.now == 1.0 and driver.dumps == 10
    assert "@540,360" in ctx.observation.ui_state.formatted_text  # the last full observation ([0,260,1080,460])


async def test_the_time_spent_dumping_counts_towards_the_settle_timeout() -> None:
    clock = FakeClock()
    driver = ScriptedDumps([MOVED_XML, SCREEN_XML] * 200, clock=clock, dump_seconds=0.5)
    ctx = ctx_after_action()
    await phase(driver, clock, settle_timeout_seconds=1.0, settle_interval_seconds=0.0).run(ctx)
    assert ctx.observation is not None
    # the clock starts after the first dump (t=0.5); check at 1.0 (0.5 waited), observe again at 1.5,
    # check at 2.0: 1.5 waited >= 1.0, so the phase gives up
    assert ctx.observation.stability == {"checked": True, "stable": False, "dumps": 4, "waited_seconds": 1.5}
    assert clock.sleeps == [0.0] and driver.dumps == 4


async def test_no_stability_check_before_the_first_action_or_when_disabled() -> None:
    driver = FakeDriver()
    first = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    await phase(driver).run(first)
    assert driver.dumps == 1 and first.observation is not None and first.observation.stability == {"checked": False}
    off = ctx_after_action()
    await phase(driver, settle_timeout_seconds=0).run(off)
    assert driver.dumps == 2


@pytest.mark.parametrize("garbage", ["", "<hierarchy rotation=\"0\"/>", "\x00\x01binary", "<hierarchy><node"])
async def test_an_invalid_dump_is_read_again(garbage: str) -> None:
    driver = ScriptedDumps([garbage, SCREEN_XML])
    ctx = ctx_after_action()
    await phase(driver, settle_timeout_seconds=0).run(ctx)
    assert ctx.observation is not None and ctx.observation.dump_attempts == 2


async def test_dumps_that_stay_invalid_end_the_run_in_fail_with_every_step_on_disk(tmp_path: Path) -> None:
    driver = ScriptedDumps([SCREEN_XML, "<hierarchy rotation=\"0\"/>"])
    tap = {"status": "CONTINUE", "thought": "t", "action": {"name": "click", "args": {"index": 1, "text": "Wi-Fi"}}}
    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")),
                        logs=LogSettings(dir=tmp_path), perception=PerceptionSettings(dump_retries=2))
    result = await Session(settings, device=driver, model=ScriptedModel(Script(replies=[tap],
                                                                                repeat_last=True))).run()
    assert result.status == "FAIL"
    assert result.reason.startswith("data_collection failed: UI dump still invalid after 3 attempts: ")
    assert driver.dumps == 4  # one good dump, then the first try and two retries
    lines = [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert [x["failed_phase"] for x in lines] == [None, "data_collection"]
    assert (result.run_dir / "steps" / "0001" / "annotated.jpg").exists()


def test_a_picture_that_cannot_be_made_is_written_as_its_reason_and_the_step_is_kept(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path / "run")
    ui = build_ui_state(SCREEN_XML, observation_id="o", screen_size=(1080, 2400))
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    ctx.observation = Observation(observation_id="o", screenshot=b"not a picture", ui_state=ui,
                                  current_app=CurrentApp(package="p"), apps=[], screen_size=(1080, 2400))
    StepRecorder(writer).record(ctx)  # written synchronously: nothing is left to wait for
    writer.close()
    folder = tmp_path / "run" / "steps" / "0001"
    assert (folder / "annotated.jpg.error.txt").read_text().startswith("UIParseError: ")
    assert not (folder / "annotated.jpg").exists() and (folder / "screenshot.png").read_bytes() == b"not a picture"
    (line,) = [json.loads(x) for x in (tmp_path / "run" / "steps.jsonl").read_text().splitlines()]
    assert "annotated" not in line["files"] and line["write_error"] is None and writer.thumbnails == {}


# --- what real phones add: unknown current app, secure screens, refused dumps --------------------


class NoFocus(FakeDriver):
    async def current_app(self) -> Any:
        raise DeviceCommandError("no mCurrentFocus, no resumed activity", serial=self.serial)


async def test_when_the_phone_will_not_say_the_current_app_the_dumps_package_is_used() -> None:
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    update = await phase(NoFocus()).run(ctx)
    assert ctx.observation is not None
    assert (ctx.observation.current_app.package, ctx.observation.current_app_source) == ("com.example.app", "dump")
    assert update is not None and update["current_package_name"] == "com.example.app"


class Gone(FakeDriver):
    async def current_app(self) -> Any:
        raise DeviceTimeoutError("current_app timed out after 2 s", serial=self.serial)


async def test_a_phone_that_does_not_answer_still_fails_the_step() -> None:
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    with pytest.raises(DeviceTimeoutError):
        await phase(Gone()).run(ctx)


class Secure(FakeDriver):
    def __init__(self) -> None:
        super().__init__()
        self._png = blank_png_black()


def blank_png_black() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (1080, 2400), "black").save(out, format="PNG")
    return out.getvalue()


async def test_a_black_screenshot_is_a_secure_screen_and_is_not_sent() -> None:
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    await phase(Secure()).run(ctx)
    obs = ctx.observation
    assert obs is not None and obs.screenshot_blocked and obs.model_image is None
    plain = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    await phase(FakeDriver()).run(plain)
    assert plain.observation is not None and not plain.observation.screenshot_blocked
    assert plain.observation.model_image is not None


class AlwaysMoving(FakeDriver):
    async def get_ui_tree(self) -> str:
        self.dumps += 1
        raise DumpUnavailableError("uiautomator dump: ERROR: could not get idle state.", serial=self.serial,
                                   kind="idle")


async def test_a_screen_seen_only_in_its_screenshot_is_recorded_and_never_cached() -> None:
    driver = AlwaysMoving()
    clock = FakeClock()
    # virtual time: the entry could only be missing because never cached
    phone = Phone(driver, provider=AndroidStateProvider(driver, sleep=clock.sleep), clock=clock, cache_ttl=60)
    cache = phone.cache
    collect = DataCollection(phone, PerceptionSettings(), sleep=clock.sleep)
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    await collect.run(ctx)
    obs = ctx.observation
    assert obs is not None and obs.fallback == "screenshot_only" and obs.dump_refusals == ["idle"] * 4
    assert obs.ui_state.elements == [] and obs.model_image is not None  # the model still gets the picture
    assert cache.get(driver.serial) is None
