from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeDriver, ManualTimer, WaitsForever
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.errors import DeviceDisconnectedError, DeviceTimeoutError
from ufo_mobile.settings import DeviceSettings, LimitSettings, LogSettings, ModelSettings, Settings, TaskSettings

TAP_WIFI = {"status": "CONTINUE", "thought": "tap", "action": {"name": "click", "args": {"index": 1, "text": "Wi-Fi"}}}


def settings(tmp_path: Path, **limits: Any) -> Settings:
    return Settings(task=TaskSettings(text="test task"), model=ModelSettings(script=Path("unused.yaml")),
                    limits=LimitSettings(**limits), logs=LogSettings(dir=tmp_path))


async def run(tmp_path: Path, replies: list[Any], *, driver: FakeDriver | None = None, repeat: bool = False,
              **limits: Any) -> tuple[RunResult, list[dict[str, Any]]]:
    model = ScriptedModel(Script(replies=replies, repeat_last=repeat))
    result = await Session(settings(tmp_path, **limits), device=driver or FakeDriver(), model=model).run()
    lines = [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    run_json = json.loads((result.run_dir / "run.json").read_text())
    assert run_json["status"] == result.status and run_json["reason"] == result.reason
    return result, lines


async def test_finish(tmp_path: Path) -> None:
    result, lines = await run(tmp_path, [TAP_WIFI, {"status": "FINISH", "result": "all done"}])
    assert (result.status, result.answer, result.steps) == ("FINISH", "all done", 2)
    assert [x["status"] for x in lines] == ["CONTINUE", "FINISH"]


async def test_max_steps(tmp_path: Path) -> None:
    scroll_then_tap = [{"status": "CONTINUE", "thought": "s", "action": {"name": "scroll", "args": {"direction": d}}}
                       for d in ("down", "up", "down", "up")]
    result, lines = await run(tmp_path, scroll_then_tap, max_steps=3)
    assert result.status == "FAIL"
    assert result.reason == "reached the step limit (3 steps) without finishing"
    assert len(lines) == 3
    assert (result.run_dir / "final.png").exists()


async def test_consecutive_failures(tmp_path: Path) -> None:
    bad = {"status": "CONTINUE", "thought": "x", "action": {"name": "click", "args": {"index": 404}}}
    result, lines = await run(tmp_path, [bad], repeat=True, max_consecutive_failures=2)
    assert result.status == "FAIL" and result.steps == 2
    assert result.reason.startswith("2 consecutive actions failed (limit 2); last: click failed: ")
    assert all(x["result"]["success"] is False for x in lines)


async def test_repeated_action_on_unchanged_screen(tmp_path: Path) -> None:
    result, lines = await run(tmp_path, [TAP_WIFI], repeat=True, max_repeated_actions=3)
    assert result.status == "FAIL" and result.steps == 3
    assert "repeated 3 times on an unchanged screen" in result.reason
    assert "click(index=1, text='Wi-Fi')" in result.reason


async def test_step_timeout(tmp_path: Path) -> None:
    timer, model = ManualTimer(), WaitsForever([TAP_WIFI])
    session = Session(settings(tmp_path, step_timeout_seconds=0.3), device=FakeDriver(), model=model,
                      step_timer=timer)
    task = asyncio.ensure_future(session.run())
    await asyncio.wait_for(model.waiting.wait(), 60)  # step 2 is waiting for the model
    timer.fire()
    result = await asyncio.wait_for(task, 60)
    assert [seconds for seconds, _, _ in timer.armed] == [0.3, 0.3]  # one timer per step
    lines = [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert result.status == "FAIL" and result.reason == "step 2 timed out after 0.3 s"
    assert len(lines) == 2 and lines[1]["action"] is None
    assert (lines[1]["status"], lines[1]["reason"]) == ("FAIL", "step 2 timed out after 0.3 s")
    assert lines[1]["error"] == "cancelled: step 2 timed out after 0.3 s"
    assert lines[1]["failed_phase"] == "llm_interaction"


async def test_device_error_mid_run_fails_with_reason_and_keeps_steps(tmp_path: Path) -> None:
    class Dies(FakeDriver):
        async def get_ui_tree(self) -> str:
            if self.dumps >= 1:
                raise DeviceDisconnectedError("transport closed", serial=self.serial)
            return await super().get_ui_tree()

    result, lines = await run(tmp_path, [TAP_WIFI], repeat=True, driver=Dies())
    assert result.status == "FAIL"
    assert result.reason == "data_collection failed: [fake-1] transport closed"
    assert len(lines) == 2 and lines[0]["result"]["success"] is True
    assert lines[1]["failed_phase"] == "data_collection"
    assert (result.run_dir / "steps" / "0001" / "screenshot.png").exists()


@pytest.mark.parametrize("second", [False, True], ids=["one-interrupt", "a-second-in-the-same-tick"])
async def test_interrupt_ends_in_fail_interrupted_with_steps_on_disk(tmp_path: Path, second: bool) -> None:
    """Ctrl-C while step 2 waits for the model; and two Ctrl-Cs 50 ms apart, the second abandoning the
    run before the first's cancellation has been handled. Either way the run ends FAIL("interrupted")
    with the step in flight recorded, never "internal error: CancelledError()"."""
    model = WaitsForever([TAP_WIFI])
    session = Session(settings(tmp_path), device=FakeDriver(), model=model)
    task = asyncio.ensure_future(session.run())
    await asyncio.wait_for(model.waiting.wait(), 60)  # step 2 is waiting for the model
    assert session.context is not None
    session.context.interrupt()
    if second:
        session.context.abandon()  # in the same tick: nothing has run in between
    result = await asyncio.wait_for(task, 60)
    assert (result.status, result.reason, result.steps, result.interrupted) == ("FAIL", "interrupted", 2, True)
    assert json.loads((result.run_dir / "run.json").read_text())["reason"] == "interrupted"
    lines = [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert [(x["step"], x["status"], x["reason"]) for x in lines] == [(1, "CONTINUE", ""), (2, "FAIL", "interrupted")]


async def test_interrupt_between_steps(tmp_path: Path) -> None:
    model = ScriptedModel(Script(replies=[TAP_WIFI], repeat_last=True))
    session = Session(settings(tmp_path, max_repeated_actions=50), device=FakeDriver(), model=model)

    def stop_after_first(step: Any) -> None:
        assert session.context is not None
        session.context.interrupt()

    session.on_step = stop_after_first
    result = await session.run()
    assert (result.status, result.reason, result.steps) == ("FAIL", "interrupted", 1)


@pytest.mark.parametrize(("reply", "reason"), [
    ({"status": "FAIL", "result": "the app is not installed"}, "the app is not installed"),
    ({"status": "PAUSE", "result": "x"}, "the model answered with unknown status 'PAUSE'"),
    ({"status": "NONE", "result": "x"}, "the model asked for status 'NONE', which is not a move from CONTINUE"),
])
async def test_model_status_outcomes(tmp_path: Path, reply: dict[str, Any], reason: str) -> None:
    result, lines = await run(tmp_path, [reply])
    assert result.status == "FAIL" and result.reason.startswith(reason)
    assert len(lines) == 1


async def test_malformed_reply_gets_one_reask_quoting_the_error(tmp_path: Path) -> None:
    model = ScriptedModel(Script(replies=['{"status": "CONTINUE"}', {"status": "FINISH", "result": "ok"}]))
    result = await Session(settings(tmp_path), device=FakeDriver(), model=model).run()
    assert result.status == "FINISH"
    reask = model.calls[1][-1].text()
    assert "status CONTINUE needs at least one action in 'actions'" in reask
    step = json.loads((result.run_dir / "steps.jsonl").read_text().splitlines()[0])
    assert len(step["parse_errors"]) == 1
    assert "re-ask" in (result.run_dir / "steps" / "0001" / "reply.txt").read_text()


async def test_malformed_twice_fails(tmp_path: Path) -> None:
    result, lines = await run(tmp_path, ["not json", "still not json"])
    assert result.status == "FAIL"
    assert result.reason.startswith("llm_interaction failed: the model's reply was invalid twice: ")
    assert lines[0]["parse_errors"] and lines[0]["failed_phase"] == "llm_interaction"


async def test_secrets_never_reach_the_run_directory(tmp_path: Path) -> None:
    secret = "sk-test-5f1e2d3c4b5a"
    s = Settings(task=TaskSettings(text=f"use the key {secret}"), limits=LimitSettings(),
                 model=ModelSettings(script=Path("unused.yaml"), api_key=secret), logs=LogSettings(dir=tmp_path))
    leaky = {"status": "CONTINUE", "thought": f"the key is {secret}",
             "action": {"name": "type", "args": {"text": secret}}}
    model = ScriptedModel(Script(replies=[leaky, {"status": "FAIL", "result": f"gave up with {secret}"}]))
    result = await Session(s, device=FakeDriver(), model=model).run()
    assert result.status == "FAIL"
    files = [p for p in result.run_dir.rglob("*") if p.is_file()]
    assert len(files) > 10
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert "[REDACTED]" in (result.run_dir / "steps.jsonl").read_text()
    assert secret not in result.reason and "[REDACTED]" in result.reason
    assert secret not in result.run_id
    sent = [m.text() for call in model.calls for m in call]
    assert sent and not [text for text in sent if secret in text]  # the model never saw it either
    assert any("use the key [REDACTED]" in text for text in sent)


async def test_after_the_phone_stops_answering_the_final_screenshot_is_one_short_try(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frozen phone: the step's call timed out; the final screenshot gets one short try instead of
    a second full command timeout (here an hour: waiting for it would hang the test)."""
    from ufo_mobile.core.agents import base as agents_base

    monkeypatch.setattr(agents_base, "LOST_PHONE_PROBE_SECONDS", 0.01)

    class Freezes(FakeDriver):
        frozen = False

        async def tap(self, x: int, y: int) -> None:
            self.frozen = True
            raise DeviceTimeoutError("tap timed out (adb read timeout)", serial=self.serial)

        async def screenshot(self) -> bytes:
            if self.frozen:
                await asyncio.Event().wait()  # a stopped phone never answers
            return await super().screenshot()

    s = settings(tmp_path).model_copy(update={"device": DeviceSettings(command_timeout_seconds=3600)})
    model = ScriptedModel(Script(replies=[TAP_WIFI]))
    result = await asyncio.wait_for(Session(s, device=Freezes(), model=model).run(), 60)  # a hang guard only
    assert result.status == "FAIL"
    assert result.reason == "action_execution failed: [fake-1] tap timed out (adb read timeout)"
    log = [json.loads(x) for x in (result.run_dir / "run.log").read_text().splitlines()]
    unavailable = [e for e in log if e["event"] == "final_screenshot_unavailable"]
    assert [e["error"] for e in unavailable] == ["no answer in 0.01 s"]
    assert not (result.run_dir / "final.png").exists()


async def test_a_run_that_fails_on_a_working_phone_keeps_its_final_screen(tmp_path: Path) -> None:
    fail = {"status": "FAIL", "thought": "no", "result": "not possible"}
    result, _ = await run(tmp_path, [fail])
    assert result.status == "FAIL" and (result.run_dir / "final.png").is_file()
