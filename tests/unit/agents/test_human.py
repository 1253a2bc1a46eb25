"""A person in the loop: TAKEOVER when the model asks, CONFIRM before a sensitive action."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.core.agents.human import (
    AskAnswer,
    AskRequest,
    CallbackOperator,
    ConfirmAnswer,
    ConfirmRequest,
    TakeoverAnswer,
    TakeoverRequest,
)
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import RunResult, Session
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
    (None, "needs a person: the agent asked a person to take over (Log in to the account, please), and nobody can "
           "answer"),
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
    # the approval is part of step 2: no step of its own, the action ran once, on the screen it was chosen on
    assert [(s["step"], s["status"]) for s in lines] == [(1, "CONTINUE"), (2, "CONTINUE"), (3, "FINISH")]
    assert lines[1]["result"]["success"] is True and lines[1]["confirmation"] == {"approved": True, "note": "ok"}
    assert ("CONTINUE", "CONFIRM") in moves(result) and ("CONFIRM", "CONTINUE") in moves(result)
    assert result.steps_used == 3
    assert driver.phone.current_screen() == "wifi"


@pytest.mark.parametrize(("operator", "refusal"), [
    (CallbackOperator(confirm=lambda r: ConfirmAnswer(False, "not this network")),
     "not run: the person refused it (not this network); it stays refused for the rest of the run"),
    (None, "not run: it needs a person's approval (the task file marks click as sensitive), and nobody can approve "
           "during this run; it stays refused. If the request cannot be done without it, answer FAIL and say so"),
])
async def test_a_refusal_is_a_failed_action_the_model_sees_and_it_stays_refused(tmp_path: Path, operator: Any,
                                                                                refusal: str) -> None:
    driver = SimDriver()
    asked: list[str] = []
    if operator is not None:
        confirm = operator._confirm
        operator = CallbackOperator(confirm=lambda r: asked.append(r.action) or confirm(r))  # type: ignore[func-returns-value]
    flagged = {**WIFI, "action": {**WIFI["action"], "confirm": False}}  # the same action again, unflagged
    result, model = await run(tmp_path, [OPEN, WIFI, flagged, DONE], operator, human={"confirm": {"tools": ["click"]}},
                              driver=driver)
    assert result.status == "FINISH"
    lines = steps(result)
    assert lines[1]["result"] == {"success": False, "summary": refusal}
    again = "not run: it was refused earlier in this run and stays refused. If the request cannot be done without " \
            "it, answer FAIL and say so"
    assert lines[2]["result"] == {"success": False, "summary": again}
    seen = ["\n".join(m.text() for m in call) for call in model.calls]
    assert refusal in seen[2] and again in seen[3]
    assert len(asked) == (1 if operator is not None else 0)  # the person is asked once, never again
    assert driver.phone.current_screen() != "wifi"  # nothing was tapped
    assert result.steps_used == 4  # a refused action is a step; its approval is not


async def test_unattended_approve_runs_and_stop_ends_in_needs_person(tmp_path: Path) -> None:
    driver = SimDriver()
    result, _ = await run(tmp_path / "a", [OPEN, WIFI, DONE], human={"confirm": {"tools": ["click"]},
                                                                     "unattended": "approve"}, driver=driver)
    assert result.status == "FINISH" and driver.phone.current_screen() == "wifi"
    driver = SimDriver()
    result, model = await run(tmp_path / "b", [OPEN, WIFI, DONE], human={"confirm": {"tools": ["click"]},
                                                                         "unattended": "stop"}, driver=driver)
    assert (result.status, result.outcome, result.needs_person) == ("FAIL", "needs_person", True)
    assert "click(index=3, text='Wi-Fi') needs a person's approval" in result.reason
    assert driver.phone.current_screen() != "wifi" and len(model.calls) == 2
    run_json = json.loads((result.run_dir / "run.json").read_text())
    assert run_json["outcome"] == "needs_person"


@pytest.mark.parametrize(("human", "says"), [
    ({}, "and an action that needs approval is refused."),
    ({"unattended": "stop"}, "a question, a takeover or an action that needs approval ends the run unfinished"),
    ({"unattended": "approve"}, "The actions that need approval are approved in advance for this run"),
])
async def test_the_prompt_says_before_acting_whether_a_person_can_approve(tmp_path: Path, human: dict[str, Any],
                                                                          says: str) -> None:
    _, model = await run(tmp_path, [DONE], human=human)
    system = " ".join(model.calls[0][0].text().split())
    assert "Nobody can be reached during this run:" in system and says in system
    assert "The request approves exactly what it names" in system and "do that unmarked" in system
    _, model = await run(tmp_path / "p", [DONE], CallbackOperator(confirm=lambda r: ConfirmAnswer(True)))
    assert "A person can be reached during this run" in " ".join(model.calls[0][0].text().split())


async def test_the_models_own_flag_and_the_app_rule(tmp_path: Path) -> None:
    flagged = {**WIFI, "action": {**WIFI["action"], "confirm": True}}
    asked: list[str] = []
    operator = CallbackOperator(confirm=lambda r: asked.append(r.why) or ConfirmAnswer(True))  # type: ignore[func-returns-value]
    await run(tmp_path / "a", [OPEN, flagged, DONE], operator)
    await run(tmp_path / "b", [OPEN, flagged, DONE], operator, human={"confirm": {"when_model_asks": False}})
    await run(tmp_path / "c", [OPEN, WIFI, DONE], operator, human={"confirm": {"apps": ["com.android.settings"]}})
    assert asked == ['you marked it "confirm": true',
                     "the task file marks every action in com.android.settings as sensitive"]


async def test_an_approved_action_that_ends_the_run_finishes_from_confirm(tmp_path: Path) -> None:
    """CodeAct's complete() needs approval here: approved, the run ends from CONFIRM."""
    code = '```python\ncomplete(success=True, message="all set")\n```'
    model = ScriptedModel(Script(replies=[code]))
    s = Settings.model_validate({"task": {"text": "test"}, "model": {"script": "unused.yaml"}, "mode": "codeact",
                                 "logs": {"dir": str(tmp_path)}, "human": {"confirm": {"tools": ["complete"]}}})
    result = await Session(s, device=SimDriver(), model=model,
                           operator=CallbackOperator(confirm=lambda r: ConfirmAnswer(True))).run()
    assert (result.status, result.answer) == ("FINISH", "all set")
    assert moves(result)[-1] == ("CONFIRM", "FINISH")


ASK = {"status": "PENDING", "thought": "two Annas", "result": "Which Anna: Anna Berg or Anna Lind?"}


async def test_a_question_is_answered_by_the_person_and_the_model_reads_the_answer(tmp_path: Path) -> None:
    asked: list[AskRequest] = []

    def ask(request: AskRequest) -> AskAnswer:
        asked.append(request)
        return AskAnswer(True, "Anna Lind")

    result, model = await run(tmp_path, [OPEN, ASK, DONE], CallbackOperator(ask=ask))
    assert (result.status, result.answer) == ("FINISH", "done")
    assert [(r.step, r.question) for r in asked] == [(2, "Which Anna: Anna Berg or Anna Lind?")]
    last = "\n".join(m.text() for m in model.calls[-1])
    assert "you asked the user: Which Anna: Anna Berg or Anna Lind?" in last and "Anna Lind" in last
    assert ("CONTINUE", "PENDING") in moves(result) and ("PENDING", "CONTINUE") in moves(result)
    assert result.steps_used == 2  # asking costs no step: the open and the answer


async def test_a_question_nobody_can_answer_ends_as_needing_a_person(tmp_path: Path) -> None:
    result, model = await run(tmp_path, [OPEN, ASK])
    assert (result.status, result.outcome) == ("FAIL", "needs_person")
    assert "Which Anna: Anna Berg or Anna Lind?" in result.reason and len(model.calls) == 2
    assert moves(result)[-1] == ("PENDING", "FAIL")
