"""Reasoning mode end to end on the simulated phone with scripted replies: manager -> executor ->
manager ... -> FINISH, a TEXT_TASK item, a script item, an escalation to REPLAN after two executor
failures, a manager that gives up, a malformed manager reply, and structured output. Each test
checks the phone's state, and the run directory says which agent and state ran every step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.unit.agents.test_human import moves
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.settings import Settings

SETTINGS_PKG = "com.android.settings"


def plan(*items: str, thought: str = "next", memory: str = "") -> str:
    body = "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))
    extra = f"<add_memory>{memory}</add_memory>\n" if memory else ""
    return f"<thought>{thought}</thought>\n{extra}<plan>\n{body}\n</plan>"


def done(answer: str, success: bool = True) -> str:
    return (f"<thought>finished</thought>\n<request_accomplished success=\"{str(success).lower()}\">{answer}"
            "</request_accomplished>")


def act(name: str, **args: Any) -> dict[str, Any]:
    return {"status": "CONTINUE", "thought": "one action", "action": {"name": name, "args": args}}


def settings(tmp_path: Path, **extra: Any) -> Settings:
    data: dict[str, Any] = {"mode": "reasoning", "task": {"text": "Turn on Wi-Fi"}, "model": {"script": "unused.yaml"},
                            "logs": {"dir": str(tmp_path)}, "limits": {"max_steps": 20}}
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return Settings.model_validate(data)


async def run(tmp_path: Path, replies: list[Any], **extra: Any) -> tuple[RunResult, SimDriver]:
    driver = SimDriver()
    model = ScriptedModel(Script(replies=replies))
    result = await Session(settings(tmp_path, **extra), device=driver, model=model).run()
    return result, driver


def steps(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]


WIFI_FLOW = [
    plan("Open the Settings app", "Open Wi-Fi", "Switch Wi-Fi on", memory="Wi-Fi is in Settings"),
    act("open_app", text="Settings"),
    plan("Open Wi-Fi", "Switch Wi-Fi on"),
    act("click", index=3, text="Wi-Fi"),
    plan("Switch Wi-Fi on"),
    act("click", index=3, text="Use Wi-Fi"),
    done("Wi-Fi is on."),
]


async def test_manager_and_executor_take_turns_until_finish(tmp_path: Path) -> None:
    result, driver = await run(tmp_path, WIFI_FLOW)
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on.")
    assert driver.phone.state(SETTINGS_PKG)["wifi"] is True
    rows = [(s["agent"], s["state"], s["status"]) for s in steps(result)]
    assert rows == [("Manager", "CONTINUE", "ASSIGN"), ("Executor", "CONTINUE", "CONTINUE")] * 3 + [
        ("Manager", "CONTINUE", "FINISH")]
    log = [json.loads(x) for x in (result.run_dir / "run.log").read_text().splitlines()]
    machines = {(e["agent"], e["from"], e["to"]) for e in log if e["event"] == "transition"}
    assert {("Manager", "CONTINUE", "ASSIGN"), ("Manager", "ASSIGN", "CONTINUE"), ("Executor", "NONE", "CONTINUE"),
            ("Executor", "CONTINUE", "FINISH"), ("Executor", "FINISH", "CONTINUE"),
            ("Manager", "CONTINUE", "FINISH")} <= machines


async def test_an_escalation_after_two_failures_replans_and_succeeds(tmp_path: Path) -> None:
    replies = [
        plan("Open the Settings app"), act("open_app", text="Settings"),
        plan("Tap Wi-Fi"), act("click", index=9, text="Wi-Fi"),   # wrong number: fails
        plan("Tap Wi-Fi"), act("click", index=8, text="Wi-Fi"),   # fails again: REPLAN
        plan("Tap the control labelled Wi-Fi, number 3", thought="another way"), act("click", index=3, text="Wi-Fi"),
        plan("Switch Wi-Fi on"), act("click", index=3, text="Use Wi-Fi"),
        done("Wi-Fi is on."),
    ]
    result, driver = await run(tmp_path, replies)
    assert result.status == "FINISH" and driver.phone.state(SETTINGS_PKG)["wifi"] is True
    states = [(s["agent"], s["state"]) for s in steps(result)]
    assert states[6] == ("Manager", "REPLAN")  # the transition, not a prompt hint
    assert ("Manager", "ASSIGN", "REPLAN") in {(a, f, t) for a, f, t in _moves(result)}
    replan_prompt = prompt_of(result, 7)
    assert "The executor has failed 2 times in a row" in replan_prompt
    assert "control 9 is labelled" in replan_prompt and "control 8 is labelled" in replan_prompt  # the failed attempts


async def test_a_text_task_rewrites_the_focused_field(tmp_path: Path) -> None:
    replies = [
        plan("Open Notes"), act("open_app", text="Notes"),
        plan("Tap New note"), act("click", index=_NEW_NOTE, text="New note"),
        plan("Type hello wrld into the title"), act("type", text="hello wrld", index=4),
        plan("TEXT_TASK: fix the spelling of the title"), "<text>hello world</text>",
        done("The title is fixed."),
    ]
    result, driver = await run(tmp_path, replies, task={"text": "Write a note titled hello world"})
    assert result.status == "FINISH", result.reason
    assert driver.phone.state("com.example.notes")["title"] == "hello world"
    assert ("TextManipulator", "CONTINUE") in [(s["agent"], s["state"]) for s in steps(result)]


async def test_a_script_item_runs_off_the_phone_and_the_manager_reads_it(tmp_path: Path) -> None:
    code = "```python\nprint(sum(range(1, 11)))\n```"
    replies = [plan("<script>Add the numbers 1 to 10</script>"), code, done("55")]
    from ufo_mobile.core.sandbox.isolation import namespace_problem

    isolation = "namespaces" if namespace_problem() is None else "process"  # both are tested in tests/unit/sandbox
    result, _ = await run(tmp_path, replies, reasoning={"scripter": {"enabled": True, "isolation": isolation}})
    assert (result.status, result.answer) == ("FINISH", "55")
    prompt = prompt_of(result, 3)
    assert "55" in prompt and "succeeded" in prompt


async def test_a_disabled_scripter_fails_the_item_and_the_manager_is_told(tmp_path: Path) -> None:
    replies = [plan("<script>Add the numbers 1 to 10</script>"), done("cannot compute", success=False)]
    result, _ = await run(tmp_path, replies)
    assert (result.status, result.reason) == ("FAIL", "cannot compute")
    first = prompt_of(result, 1)
    assert "<script>" not in first  # never offered when off
    second = prompt_of(result, 3)  # a model that writes one anyway is told why it did not run
    assert "script items are turned off" in second


async def test_a_manager_that_declares_failure_ends_in_fail(tmp_path: Path) -> None:
    result, _ = await run(tmp_path, [done("There is no fax app on this phone.", success=False)])
    assert (result.status, result.reason) == ("FAIL", "There is no fax app on this phone.")
    assert moves(result)[-1] == ("CONTINUE", "FAIL")


async def test_a_malformed_manager_reply_is_asked_again_once_then_fails(tmp_path: Path) -> None:
    bad = "<thought>hmm</thought><plan></plan>"
    result, _ = await run(tmp_path, [bad, "<thought>x</thought>"])
    assert result.status == "FAIL" and "the manager's reply was invalid twice" in result.reason
    fixed, driver = await run(tmp_path / "again", [bad, *WIFI_FLOW])
    assert fixed.status == "FINISH" and driver.phone.state(SETTINGS_PKG)["wifi"] is True


@pytest.mark.parametrize(("answers", "status"), [(['{"wifi": true, "networks": 3}'], "FINISH"),
                                                 (['{"wifi": "yes"}', '{"wifi": true, "networks": 3}'], "FINISH"),
                                                 (['{"wifi": "yes"}', '{"wifi": "no"}'], "FAIL")])
async def test_structured_output_is_checked_in_the_round_with_one_corrective_reask(
        tmp_path: Path, answers: list[str], status: str) -> None:
    schema = {"type": "object", "properties": {"wifi": {"type": "boolean"}, "networks": {"type": "integer"}},
              "required": ["wifi"]}
    result, _ = await run(tmp_path, [done(a) for a in answers], task={"text": "Is Wi-Fi on?",
                                                                      "output": {"schema": schema}})
    assert result.status == status
    run_json = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    assert run_json["status"] == status  # the machine, the result and run.json agree
    assert _moves(result)[-1][2] == status
    if status == "FINISH":
        assert result.output == {"wifi": True, "networks": 3}
    else:
        assert "wifi: " in result.reason and result.output is None  # then jsonschema's words (not asserted)
    prompt = prompt_of(result, 1)
    assert '"networks"' in prompt and "one JSON value that matches" in prompt
    line = json.loads((result.run_dir / "steps.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert len(line["parse_errors"]) == len(answers) - (status == "FINISH")


def prompt_of(result: RunResult, step: int) -> str:
    messages = json.loads((result.run_dir / "steps" / f"{step:04d}" / "prompt.json").read_text(encoding="utf-8"))
    return "\n".join(m["content"] for m in messages)


def _moves(result: RunResult) -> list[tuple[str, str, str]]:
    lines = [json.loads(x) for x in (result.run_dir / "run.log").read_text().splitlines()]
    return [(e["agent"], e["from"], e["to"]) for e in lines if e["event"] == "transition"]


_NEW_NOTE = 8


async def test_an_action_repeated_on_an_unchanged_screen_counts_toward_a_replan(tmp_path: Path) -> None:
    tap_title = act("click", index=1, text="Settings")  # the toolbar title: tapping it changes nothing
    replies = [plan("Open the Settings app"), act("open_app", text="Settings"),
               plan("Tap the title"), tap_title, plan("Tap the title"), tap_title, plan("Tap the title"), tap_title,
               done("stuck", success=False)]
    result, _ = await run(tmp_path, replies, limits={"max_repeated_actions": 5})  # (at 3 the run would stop)
    rows = [(s["agent"], s["state"], (s["result"] or {}).get("success")) for s in steps(result)]
    assert rows[3][2] is True and rows[5][2] is True and rows[7][2] is True  # each tap "worked"
    assert rows[8] == ("Manager", "REPLAN", None)  # yet the second and third repeat forced a replan
    assert "the same action again; the screen did not change" in prompt_of(result, 9)


class WifiAnswer(BaseModel):
    wifi: bool
    networks: int = 0


async def test_structured_output_by_pydantic_model(tmp_path: Path) -> None:
    output = {"model": "tests.unit.agents.test_reasoning:WifiAnswer"}
    result, _ = await run(tmp_path, [done('The state: {"wifi": true, "networks": 2}')],
                          task={"text": "Is Wi-Fi on?", "output": output})
    assert (result.status, result.output) == ("FINISH", {"wifi": True, "networks": 2})
    run_json = json.loads((result.run_dir / "run.json").read_text())
    assert run_json["output"] == {"wifi": True, "networks": 2}
