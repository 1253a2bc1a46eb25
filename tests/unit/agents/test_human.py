"""A person in the loop: TAKEOVER when the model asks, CONFIRM before a sensitive action."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.agents.human import (
    CallbackOperator,
    ConfirmAnswer,
    ConfirmRequest,
    TakeoverAnswer,
    TakeoverRequest,
)
from ufo_mobile.device.sim import SimDriver
from ufo_mobile.llm.scripted import Script, ScriptedModel
from ufo_mobile.session import RunResult, Session
from ufo_mobile.settings import Settings

OPEN = {"status": "CONTINUE", "thought": "open", "action": {"name": "open_app", "args": {"text": "Settings"}}}
WIFI = {"status": "CONTINUE", "thought": "wifi", "action": {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}}}
TAKEOVER = {"status": "TAKEOVER", "thought": "I cannot log in", "result": "Log in to the account, please"}
DONE = {"status": "FINISH", "result": "done"}


def settings(tmp_path: Path, **human: Any) -> Settings:
    return Settings.model_validate({"task": {"text": "test"}, "model": {"script": "unused.yaml"},
                                    "logs": {"dir": str(tmp_path)}, "human": human})


async def run(tmp_path: Path, replies: list[Any], operator: Any = None, *, human: dict[str, Any] | None = None,
              driver: SimDriver | None = None) -> tuple[RunResult, ScriptedModel]:
    model = ScriptedModel(Script(replies=replies))
    result = await Session(settings(tmp_path, **(human or {})), device=driver or SimDriver(), model=model,
                           operator=operator).run()
    return result, model


def moves(result: RunResult) -> list[tuple[str, str]]:
    lines = [json.loads(x) for x in (result.run_dir / "run.log").read_text().splitlines()]
    return [(e["from"], e["to"]) for e in lines if e["event"] == "transition"]


def steps(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]


async def test_a_takeover_waits_for_the_person_and_the_model_hears_what_they_said(tmp_path: Path) -> None:
    asked: list[TakeoverRequest] = []

    def take_over(request: TakeoverRequest) -> TakeoverAnswer:
        asked.append(request)
        return TakeoverAnswer(True, "logged in as Ada")

    result, model = await run(tmp_path, [OPEN, TAKEOVER, DONE], CallbackOperator(take_over=take_over))
    assert (result.status, result.answer) == ("FINISH", "done")
    assert [(r.step, r.message, r.app) for r in asked] == [(2, "Log in to the account, please",
                                                            "com.android.settings")]
    assert moves(result) == [("NONE", "CONTINUE"), ("CONTINUE", "CONTINUE"), ("CONTINUE", "TAKEOVER"),
                             ("TAKEOVER", "CONTINUE"), ("CONTINUE", "FINISH")]
    last_prompt = "\n".join(m.text() for m in model.calls[-1])
    assert "you asked a person to take over (Log in to the account, please); the person said: logged in as Ada" \
        in last_prompt
    assert [s["status"] for s in steps(result)] == ["CONTINUE", "TAKEOVER", "FINISH"]


@pytest.mark.parametrize(("operator", "reason"), [
    (None, "the model asked a person to take over (Log in to the account, please), but no one can answer: run in a "
           "terminal, or give the session an operator"),
    (CallbackOperator(take_over=lambda r: TakeoverAnswer(False, "abort, wrong account")),
     "the person did not take over: abort, wrong account"),
    (CallbackOperator(), "the person did not take over: the host takes no takeovers"),
])
async def test_a_takeover_nobody_does_ends_in_fail(tmp_path: Path, operator: Any, reason: str) -> None:
    result, _ = await run(tmp_path, [TAKEOVER], operator)
    assert (result.status, result.reason) == ("FAIL", reason)
    assert moves(result)[-1] == ("TAKEOVER", "FAIL")  # FAIL ends the round


async def test_a_person_who_never_answers_is_bounded(tmp_path: Path) -> None:
    async def never(request: TakeoverRequest) -> TakeoverAnswer:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    result, _ = await run(tmp_path, [TAKEOVER], CallbackOperator(take_over=never), human={"timeout_seconds": 0.01})
    assert result.status == "FAIL"
    assert result.reason == "no person answered within 0.01 s (asked to take over (Log in to the account, please))"


async def test_a_stop_signal_while_waiting_for_a_person(tmp_path: Path) -> None:
    waiting = asyncio.Event()

    async def slow(request: TakeoverRequest) -> TakeoverAnswer:
        waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    model = ScriptedModel(Script(replies=[TAKEOVER]))
    session = Session(settings(tmp_path), device=SimDriver(), model=model, operator=CallbackOperator(take_over=slow))
    task = asyncio.ensure_future(session.run())
    await asyncio.wait_for(waiting.wait(), 60)
    assert session.context is not None
    session.context.interrupt("terminated", 15)
    result = await asyncio.wait_for(task, 60)
    assert (result.status, result.reason, result.signal) == ("FAIL", "terminated", 15)


async def test_a_tool_marked_sensitive_runs_only_when_approved(tmp_path: Path) -> None:
    asked: list[ConfirmRequest] = []

    def approve(request: ConfirmRequest) -> ConfirmAnswer:
        asked.append(request)
        return ConfirmAnswer(True, "ok")

    driver = SimDriver()
    result, _ = await run(tmp_path, [OPEN, WIFI, DONE], CallbackOperator(confirm=approve),
                          human={"confirm": {"tools": ["click"]}}, driver=driver)
    assert result.status == "FINISH"
    assert [(r.step, r.action, r.app, r.why) for r in asked] == [
        (2, "click(index=3, text='Wi-Fi')", "com.android.settings", "the task file marks click as sensitive")]
    lines = steps(result)
    assert [(s["step"], s["status"]) for s in lines] == [(1, "CONTINUE"), (2, "CONFIRM"), (3, "CONTINUE"),
                                                         (4, "FINISH")]
    assert lines[1]["result"] is None and lines[2]["result"]["success"] is True  # waited, then ran
    assert lines[2]["observation_id"] == lines[1]["observation_id"]  # on the screen it was chosen on
    assert ("CONTINUE", "CONFIRM") in moves(result) and ("CONFIRM", "CONTINUE") in moves(result)
    assert driver.phone.current_screen() == "wifi"


@pytest.mark.parametrize(("operator", "note"), [
    (CallbackOperator(confirm=lambda r: ConfirmAnswer(False, "not this network")), ": not this network"),
    (None, ": no one is there to approve it (run in a terminal, or give the session an operator)"),
])
async def test_a_refusal_is_a_failed_action_the_model_sees(tmp_path: Path, operator: Any, note: str) -> None:
    driver = SimDriver()
    result, model = await run(tmp_path, [OPEN, WIFI, DONE], operator, human={"confirm": {"tools": ["click"]}},
                              driver=driver)
    assert result.status == "FINISH"
    refused = f"a person refused click(index=3, text='Wi-Fi'){note}"
    assert steps(result)[2]["result"] == {"success": False, "summary": refused}
    assert refused in "\n".join(m.text() for m in model.calls[-1])
    assert driver.phone.current_screen() != "wifi"  # nothing was tapped


async def test_the_models_own_flag_and_the_app_rule(tmp_path: Path) -> None:
    flagged = {**WIFI, "action": {**WIFI["action"], "confirm": True}}
    asked: list[str] = []
    operator = CallbackOperator(confirm=lambda r: asked.append(r.why) or ConfirmAnswer(True))  # type: ignore[func-returns-value]
    await run(tmp_path / "a", [OPEN, flagged, DONE], operator)
    await run(tmp_path / "b", [OPEN, flagged, DONE], operator, human={"confirm": {"when_model_asks": False}})
    await run(tmp_path / "c", [OPEN, WIFI, DONE], operator, human={"confirm": {"apps": ["com.android.settings"]}})
    assert asked == ["the model asked for approval",
                     "the task file marks every action in com.android.settings as sensitive"]


async def test_an_approved_complete_finishes_from_confirm(tmp_path: Path) -> None:
    complete = {"status": "CONTINUE", "thought": "done",
                "action": {"name": "complete", "args": {"success": True, "message": "all set"}}}
    result, _ = await run(tmp_path, [complete], CallbackOperator(confirm=lambda r: ConfirmAnswer(True)),
                          human={"confirm": {"tools": ["complete"]}})
    assert (result.status, result.answer) == ("FINISH", "all set")
    assert moves(result)[-1] == ("CONFIRM", "FINISH")
