"""The runtime's contract with the model, tried with scripted replies in every mode: the budget each
turn states and what counts against it, the model's own actions with their outcomes and what changed on
the screen, several actions in one turn, facts kept at no cost, and CodeAct code that reads the screen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.settings import Settings

SETTINGS_PKG = "com.android.settings"


def act(*actions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"status": "CONTINUE", "thought": "t", "actions": list(actions), **extra}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


OPEN = act(call("open_app", text="Settings"))
WIFI_ROW = act(call("click", index=3, text="Wi-Fi"))
SWITCH = act(call("click", index=3, text="Use Wi-Fi"))
DONE = {"status": "FINISH", "thought": "done", "result": "Wi-Fi is on."}


def settings(tmp_path: Path, mode: str = "direct", **limits: Any) -> Settings:
    return Settings.model_validate({"task": {"text": "Turn on Wi-Fi"}, "model": {"script": "unused.yaml"},
                                    "mode": mode, "logs": {"dir": str(tmp_path)}, "limits": limits})


async def run(tmp_path: Path, replies: list[Any], mode: str = "direct",
              **limits: Any) -> tuple[RunResult, ScriptedModel, SimDriver]:
    model, driver = ScriptedModel(Script(replies=replies)), SimDriver()
    result = await Session(settings(tmp_path, mode, **limits), device=driver, model=model).run()
    return result, model, driver


def last_user(model: ScriptedModel, i: int) -> str:
    return model.calls[i][-1].text()


def everything(model: ScriptedModel, i: int) -> str:
    return "\n".join(m.text() for m in model.calls[i])


def steps(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]


async def test_each_turn_states_the_budget_and_each_action_and_the_answer_is_a_step(tmp_path: Path) -> None:
    result, model, driver = await run(tmp_path, [OPEN, WIFI_ROW, SWITCH, DONE], max_steps=4)
    assert result.status == "FINISH" and driver.phone.state(SETTINGS_PKG)["wifi"] is True
    assert [last_user(model, i).splitlines()[0] for i in range(4)] == [
        f"Step budget: {used} of 4 steps used, {4 - used} left: room for {3 - used} more "
        f"action{'s' if 3 - used != 1 else ''} and then the final answer." for used in range(3)] + [
        "Step budget: 3 of 4 steps used. Only your final answer fits now: reply FINISH or FAIL; an action would not "
        "run."]
    assert result.steps_used == 4


async def test_the_last_step_is_kept_for_the_final_answer(tmp_path: Path) -> None:
    result, model, driver = await run(tmp_path, [OPEN, WIFI_ROW, SWITCH, DONE], max_steps=3)
    assert result.status == "FAIL" and result.reason.startswith("reached the step limit")
    assert driver.phone.state(SETTINGS_PKG)["wifi"] is False  # the third action did not run
    assert steps(result)[-1]["result"] == {"success": False, "summary": "not run: the step budget keeps its last "
                                                                        "step for the final answer"}


async def test_the_model_sees_its_own_actions_their_outcomes_and_what_changed(tmp_path: Path) -> None:
    wrong = act(call("click", index=3, text="Bluetooth"))
    result, model, _ = await run(tmp_path, [OPEN, wrong, WIFI_ROW, SWITCH, DONE])
    assert result.status == "FINISH"
    seen = everything(model, 4)
    assert "Turn 1: action open_app(text='Settings') succeeded" in seen
    assert "the app in front is now com.android.settings" in seen
    assert "Turn 2: action click(index=3, text='Bluetooth') FAILED: click failed: control 3 is labelled 'Wi-Fi', " \
           "'Off', not 'Bluetooth': nothing was done" in seen
    assert "Then on the screen: nothing on the screen changed" in seen
    assert "Turn 3: action click(index=3, text='Wi-Fi') succeeded" in seen
    assert "Then on the screen: a different screen, showing: 'Navigate up', 'Use Wi-Fi'" in seen
    assert "Turn 4: action click(index=3, text='Use Wi-Fi') succeeded" in seen
    assert "Then on the screen: 'Use Wi-Fi' is now on; appeared: 'HomeNet'" in seen


async def test_a_turn_carries_several_actions_and_stops_at_the_first_that_fails(tmp_path: Path) -> None:
    chain = act(call("click", index=3, text="Use Wi-Fi"), call("system_button", button="back"))
    result, model, driver = await run(tmp_path, [OPEN, WIFI_ROW, chain, DONE], max_steps=5)
    assert result.status == "FINISH" and driver.phone.state(SETTINGS_PKG)["wifi"] is True
    assert driver.phone.current_screen() != "wifi"  # and back
    line = steps(result)[2]
    assert [o["ran"] and o["success"] for o in line["outcomes"]] == [True, True]
    assert result.steps_used == 5  # two actions in one turn are two steps
    broken = act(call("click", index=3, text="Bluetooth"), call("click", index=3, text="Wi-Fi"))
    result, model, driver = await run(tmp_path / "b", [OPEN, broken, DONE])
    line = steps(result)[1]
    assert [(o["ran"], o["success"]) for o in line["outcomes"]] == [(True, False), (False, False)]
    assert line["outcomes"][1]["summary"] == "an earlier action of this turn failed"
    assert "2 actions:" in everything(model, 2) and driver.phone.current_screen() != "wifi"
    assert result.steps_used == 3  # the open, the failed click and the answer; the action that never ran is no step


async def test_a_chain_stops_when_the_screen_changed_under_the_next_action(tmp_path: Path) -> None:
    """The row opens another page: the next action's control is not there any more, so it does not run."""
    stale = act(call("click", index=3, text="Wi-Fi"), call("click", index=6, text="Bluetooth"))
    result, _, driver = await run(tmp_path, [OPEN, stale, DONE])
    outcomes = steps(result)[1]["outcomes"]
    assert (outcomes[0]["success"], outcomes[1]["ran"]) == (True, False)
    assert outcomes[1]["summary"].startswith("the screen changed before it")
    assert driver.phone.current_screen() == "wifi"


async def test_a_fact_is_kept_in_the_same_reply_as_an_action_at_no_cost(tmp_path: Path) -> None:
    kept = act(call("click", index=3, text="Wi-Fi"), remember=["Bluetooth is off"])
    result, model, _ = await run(tmp_path, [OPEN, kept, SWITCH, DONE])
    assert result.status == "FINISH" and result.steps_used == 4
    assert "Facts you kept:\n- Bluetooth is off" in last_user(model, 2)


async def test_reasoning_mode_counts_actions_not_planning_turns_and_the_manager_sees_the_result(
        tmp_path: Path) -> None:
    plan = "<thought>t</thought>\n<plan>\n1. Open the Settings app\n2. Open the Wi-Fi page\n3. Switch Wi-Fi on\n</plan>"
    replan2 = "<thought>t</thought>\n<plan>\n1. Open the Wi-Fi page\n2. Switch Wi-Fi on\n</plan>"
    replan3 = "<thought>t</thought>\n<plan>\n1. Switch Wi-Fi on\n</plan>"
    final = '<thought>on</thought>\n<request_accomplished success="true">Wi-Fi is on.</request_accomplished>'
    replies = [plan, OPEN, replan2, WIFI_ROW, replan3, SWITCH, final]
    result, model, driver = await run(tmp_path, replies, mode="reasoning", max_steps=4)
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on.")
    assert driver.phone.state(SETTINGS_PKG)["wifi"] is True
    assert result.steps_used == 4  # three actions and the answer; the four planning turns are not steps
    manager_last = everything(model, 6)  # after the last action the manager looked at the result
    assert "Use Wi-Fi" in manager_last and "1. 1." not in manager_last
    assert "Your previous plan:\n1. Switch Wi-Fi on" in manager_last or "1. Switch Wi-Fi on" in manager_last
    executor = everything(model, 5)
    assert "open_app(text='Settings')" in executor and "Open the Settings app" in executor  # its own, with subgoal
    assert "ASSIGN" not in executor


async def test_codeact_code_reads_the_screen_between_actions(tmp_path: Path) -> None:
    code = ('```python\nopen_app("Settings")\nfor line in screen().splitlines():\n'
            '    if \'"Wi-Fi"\' in line:\n        print("row:", line.split()[0])\n```')
    finish = '```python\ncomplete(success=True, message="Wi-Fi is on.")\n```'
    result, model, _ = await run(tmp_path, [code, finish], mode="codeact")
    assert result.status == "FINISH"
    seen = last_user(model, 1)
    assert "row: 4" in everything(model, 1)
    assert "Step budget: 1 of 20 steps used" in everything(model, 1) and result.steps_used == 2
    assert "Your latest turns:" in seen or "Your latest turns:" in everything(model, 1)


async def test_codeact_calls_past_the_budget_do_not_run(tmp_path: Path) -> None:
    code = ('```python\nopen_app("Settings")\nclick(index=3, text="Wi-Fi")\nclick(index=3, text="Use Wi-Fi")\n```')
    finish = '```python\ncomplete(success=False, message="out of steps")\n```'
    result, model, driver = await run(tmp_path, [code, finish], mode="codeact", max_steps=3)
    assert driver.phone.state(SETTINGS_PKG)["wifi"] is False
    assert "only the final answer fits" in steps(result)[0]["result"]["summary"]
    assert result.steps_used == 3
    assert "Only your final answer fits now: call complete(); an action would not run." in last_user(model, 1)


async def test_codeact_calls_pass_the_same_approval_gate(tmp_path: Path) -> None:
    from ufo_mobile.core.agents.human import CallbackOperator, ConfirmAnswer

    code = '```python\nopen_app("Settings")\nscreen()\nprint(click(index=3, text="Wi-Fi"))\n```'
    finish = '```python\ncomplete(success=False, message="not allowed")\n```'
    s = settings(tmp_path).model_copy(update={"mode": "codeact"})
    s = Settings.model_validate({**s.model_dump(), "human": {"confirm": {"tools": ["click"]}}})
    model, driver = ScriptedModel(Script(replies=[code, finish])), SimDriver()
    result = await Session(s, device=driver, model=model).run()
    assert driver.phone.current_screen() != "wifi"  # nobody could approve: refused
    assert "not run: it needs a person's approval" in everything(model, 1)
    assert result.steps_used == 3  # open, the refused click (a step, as in the other modes), complete
    approved: list[str] = []
    model, driver = ScriptedModel(Script(replies=[code, finish])), SimDriver()
    operator = CallbackOperator(confirm=lambda r: approved.append(r.action) or ConfirmAnswer(True))  # type: ignore[func-returns-value]
    result = await Session(s.model_copy(update={"logs": s.logs.model_copy(update={"dir": tmp_path / "p"})}),
                           device=driver, model=model, operator=operator).run()
    assert approved == ["click(index=3, text='Wi-Fi')"] and driver.phone.current_screen() == "wifi"
    assert result.steps_used == 3  # open, the approved click (once), complete


async def test_codeact_asks_the_user_and_nobody_there_ends_as_needing_a_person(tmp_path: Path) -> None:
    code = '```python\nask_user(question="Which network?")\nopen_app("Settings")\n```'
    result, model, driver = await run(tmp_path, [code], mode="codeact")
    assert (result.status, result.outcome) == ("FAIL", "needs_person") and "Which network?" in result.reason
    assert driver.phone.current_app() != SETTINGS_PKG  # the code stopped at the question


async def test_a_chained_control_that_only_got_a_new_number_is_acted_on(tmp_path: Path) -> None:
    """A day without events has no event rows: the button below them is the same button under a new
    number. The chain acts on it there (and says so), instead of stopping."""
    from ufo_mobile.sim.phone.loader import packaged_app

    driver = SimDriver()
    driver.phone.install(packaged_app("com.example.calendar"))
    model = ScriptedModel(Script(replies=[
        act(call("open_app", text="Calendar")),
        act(call("click", index=24, text="January 16"), call("click", index=44, text="Create event")),
        {"status": "FINISH", "thought": "t", "result": "the form is open"}]))
    result = await Session(settings(tmp_path), device=driver, model=model).run()
    outcomes = steps(result)[1]["outcomes"]
    assert [(o["ran"], o["success"]) for o in outcomes] == [(True, True), (True, True)], outcomes
    assert outcomes[1]["action"] == "click(index=41, text='Create event')"
    assert outcomes[1]["summary"].endswith("(its control was renumbered from 44 to 41 by the earlier actions)")
    assert driver.phone.current_screen() == "edit"  # the new event's form


async def test_what_changed_names_a_status_that_moved_to_another_row(tmp_path: Path) -> None:
    _, model, _ = await run(tmp_path, [OPEN, WIFI_ROW, SWITCH, act(call("click", index=7)), DONE])
    assert "Then on the screen: 'Connected' is now by 'CoffeeShop_Guest'; appeared: 'Saved'" in everything(model, 4)


async def test_the_manager_asks_the_user_and_reads_the_answer(tmp_path: Path) -> None:
    from ufo_mobile.core.agents.human import AskAnswer, CallbackOperator

    ask = "<thought>Which one?</thought>\n<ask_user>Which network should I join?</ask_user>"
    final = '<thought>t</thought>\n<request_accomplished success="false">not needed</request_accomplished>'
    model = ScriptedModel(Script(replies=[ask, final]))
    operator = CallbackOperator(ask=lambda r: AskAnswer(True, "HomeNet"))
    result = await Session(settings(tmp_path, "reasoning"), device=SimDriver(), model=model, operator=operator).run()
    assert result.status == "FAIL" and result.outcome == "failed"  # the manager's own answer, after the reply
    seen = everything(model, 1)
    assert "Which network should I join?" in seen and "HomeNet" in seen
    alone, _, _ = await run(tmp_path / "alone", [ask], mode="reasoning")
    assert (alone.status, alone.outcome) == ("FAIL", "needs_person") and "Which network" in alone.reason


async def test_direct_mode_checks_the_answer_in_the_round_with_one_reask(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"wifi": {"type": "boolean"}}, "required": ["wifi"]}
    s = Settings.model_validate({"task": {"text": "Is Wi-Fi on?", "output": {"schema": schema}},
                                 "model": {"script": "unused.yaml"}, "logs": {"dir": str(tmp_path)}})
    bad, good = ({"status": "FINISH", "thought": "t", "result": answer} for answer in ('{"wifi": "no"}',
                                                                                        '{"wifi": false}'))
    model = ScriptedModel(Script(replies=[bad, good]))
    result = await Session(s, device=SimDriver(), model=model).run()
    assert (result.status, result.output) == ("FINISH", {"wifi": False})
    assert "wifi: " in model.calls[1][-1].text()  # the re-ask quotes the mismatch
    run = json.loads((result.run_dir / "run.json").read_text())
    assert (run["status"], run["output"]) == ("FINISH", {"wifi": False})
    twice = await Session(s.model_copy(update={"logs": s.logs.model_copy(update={"dir": tmp_path / "b"})}),
                          device=SimDriver(), model=ScriptedModel(Script(replies=[bad, bad]))).run()
    assert twice.status == "FAIL" and twice.output is None
    assert json.loads((twice.run_dir / "run.json").read_text())["status"] == "FAIL"
