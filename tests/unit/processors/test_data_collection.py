from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import SCREEN_XML, FakeDriver
from ufo_mobile.llm.scripted import Script, ScriptedModel
from ufo_mobile.memory.state import ActionEntry, SharedState
from ufo_mobile.processors.context import StepContext
from ufo_mobile.processors.data_collection import DataCollection
from ufo_mobile.session import Session
from ufo_mobile.settings import LogSettings, ModelSettings, PerceptionSettings, Settings, TaskSettings
from ufo_mobile.trace.writer import RunWriter
from ufo_mobile.ui.cache import ControlCache

MOVED_XML = SCREEN_XML.replace("[0,200][1080,400]", "[0,260][1080,460]")  # the button still sliding in


class ScriptedDumps(FakeDriver):
    """Serves the given dumps in order, then repeats the last one."""

    def __init__(self, dumps: list[str]) -> None:
        super().__init__()
        self.sequence = dumps

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        return self.sequence[min(self.dumps, len(self.sequence)) - 1]


def ctx_after_action(step: int = 2) -> StepContext:
    shared = SharedState(action_history=[ActionEntry(id="a", step=step - 1, name="tap")])
    return StepContext(run_id="r", step=step, agent_name="A", request="x", shared=shared)


def phase(driver: FakeDriver, **settings: Any) -> DataCollection:
    opts = {"settle_interval_seconds": 0.0, **settings}
    return DataCollection(driver, ControlCache(ttl=0), PerceptionSettings(**opts))


async def test_after_an_action_waits_until_two_dumps_agree() -> None:
    driver = ScriptedDumps([MOVED_XML, SCREEN_XML, SCREEN_XML])
    ctx = ctx_after_action()
    await phase(driver).run(ctx)
    assert ctx.observation is not None
    assert ctx.observation.stability["stable"] is True
    # moved (+ screenshot), check disagrees; settled (+ screenshot), check agrees
    assert ctx.observation.stability["dumps"] == 4
    assert "[0,200,1080,400]" in ctx.observation.ui_state.formatted_text  # the settled position


async def test_a_screen_that_never_settles_is_used_after_the_timeout() -> None:
    driver = ScriptedDumps([MOVED_XML, SCREEN_XML] * 200)
    ctx = ctx_after_action()
    await phase(driver, settle_timeout_seconds=0.05, settle_interval_seconds=0.01).run(ctx)
    assert ctx.observation is not None
    stability = ctx.observation.stability
    assert stability["stable"] is False and stability["waited_seconds"] >= 0.05 and stability["dumps"] >= 2


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
    tap = {"status": "CONTINUE", "thought": "t", "action": {"name": "tap", "args": {"text": "Wi-Fi"}}}
    settings = Settings(task=TaskSettings(text="x"), model=ModelSettings(script=Path("unused.yaml")),
                        logs=LogSettings(dir=tmp_path), perception=PerceptionSettings(dump_retries=2))
    result = await Session(settings, device=driver, model=ScriptedModel(Script(replies=[tap],
                                                                                repeat_last=True))).run()
    assert result.status == "FAIL"
    assert result.reason.startswith("data_collection failed: UI dump still invalid after 3 attempts: ")
    assert driver.dumps == 4  # one good dump, then the first try and two retries
    lines = [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert [x["failed_phase"] for x in lines] == [None, "data_collection"]
    assert (result.run_dir / "steps" / "0001" / "annotated.png").exists()


def test_background_artifacts_are_written_and_failures_are_kept(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path / "run")
    writer.write_later("a.png", lambda: b"png-bytes")

    def broken() -> bytes:
        raise ValueError("cannot draw")

    writer.write_later("b.png", broken)
    writer.flush()
    assert (tmp_path / "run" / "a.png").read_bytes() == b"png-bytes"
    assert not (tmp_path / "run" / "b.png").exists()
    assert (tmp_path / "run" / "b.png.error.txt").read_text() == "ValueError: cannot draw\n"
    writer.close()
