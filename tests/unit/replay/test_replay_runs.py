"""Replaying recorded runs on simulated phones: without a model on the same screens, stopping with a
report where the screen differs, and handing the rest to the agent when asked to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.replay.helpers import (
    NoCalls,
    click,
    demo_settings,
    finish,
    phone_with,
    record_demo,
    run_json,
    scripted,
    settings_app,
    steps_of,
    wifi_on,
)
from ufo_mobile.core.agents.factory import build_root
from ufo_mobile.core.agents.reasoning import ManagerAgent
from ufo_mobile.core.agents.replay import ReplayAgent
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.replay import ReplayPlan, load_trajectory
from ufo_mobile.settings import settings_of_run


def plan_of(run: RunResult, fallback: str = "stop") -> ReplayPlan:
    trajectory = load_trajectory(run.run_dir)
    return ReplayPlan(trajectory, fallback=fallback, source=f"run {trajectory.run_id}")  # type: ignore[arg-type]


async def replay(run: RunResult, log_dir: Path, driver: SimDriver, model: object, *, fallback: str = "stop",
                 overrides: dict[str, object] | None = None) -> RunResult:
    settings = settings_of_run(run_json(run.run_dir), overrides={"logs": {"dir": str(log_dir)}, **(overrides or {})})
    return await Session(settings, device=driver, model=model, replay=plan_of(run, fallback)).run()  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["direct", "reasoning", "codeact"])
async def test_a_replay_reaches_the_same_state_on_a_fresh_phone_with_no_model_calls(tmp_path: Path, mode: str) -> None:
    recorded = await record_demo(tmp_path / "recorded", mode)
    driver, model = SimDriver(), NoCalls()
    assert not wifi_on(driver)
    result = await replay(recorded, tmp_path / "replays", driver, model)
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on.")
    assert wifi_on(driver)
    assert model.calls == 0 and result.model_calls == 0
    assert result.run_dir.parent == tmp_path / "replays" and result.run_dir != recorded.run_dir
    lines = steps_of(result.run_dir)
    assert {line["agent"] for line in lines} == {"Replay"} and all(line["model_calls"] == [] for line in lines)
    assert [line["action"]["name"] for line in lines if line["action"]][:1] == (
        ["code"] if mode == "codeact" else ["open_app"])
    check = json.loads((result.run_dir / "steps" / "0002" / "replay.json").read_text())
    assert check["ok"] and check["score"] == 1.0 and check["recorded_run"] == recorded.run_id
    account = run_json(result.run_dir)["replay"]
    assert account == result.replay
    assert (account["replayed"], account["recorded_steps"], account["ended"]) == (4, 4, "finished")


async def test_a_control_that_moved_is_clicked_where_it_is_now(recorded: RunResult, tmp_path: Path) -> None:
    driver = phone_with(settings_app(tmp_path, "reordered"))
    result = await replay(recorded, tmp_path / "replays", driver, NoCalls())
    assert result.status == "FINISH" and wifi_on(driver)
    assert steps_of(result.run_dir)[1]["action"]["args"] == {"index": 9, "text": "Wi-Fi"}  # recorded: index 3


async def test_a_screen_that_differs_stops_the_replay_with_the_report(recorded: RunResult, tmp_path: Path) -> None:
    driver, model = phone_with(settings_app(tmp_path, "redesigned")), NoCalls()
    result = await replay(recorded, tmp_path / "replays", driver, model)
    assert result.status == "FAIL" and not wifi_on(driver) and model.calls == 0
    assert result.reason == ("replay stopped at step 2 (recorded step 2): the control the action names is not on "
                             "this screen: [3] LinearLayout 'Wi-Fi Off' (in its place: [3] LinearLayout "
                             "'Network & internet Mobile, Wi-Fi, hotspot')")
    account = run_json(result.run_dir)["replay"]
    assert (account["ended"], account["at_step"], account["recorded_step"], account["replayed"]) == (
        "stopped", 2, 2, 1)
    assert [line.split(":")[0] for line in account["report"]] == ["step", "app", "score", "problem"]
    assert (result.run_dir / "final.png").exists()


async def test_another_app_in_front_stops_at_the_first_step(recorded: RunResult, tmp_path: Path) -> None:
    result = await replay(recorded, tmp_path / "replays", phone_with(start="com.android.contacts"), NoCalls())
    assert result.status == "FAIL" and result.steps == 1
    report = result.replay["report"] if result.replay else []
    assert report[1] == "app: com.android.contacts (recorded: com.android.launcher3)"
    assert report[2].startswith("score: 0.") and report[2].endswith("< threshold 0.80")


async def test_with_a_fallback_the_agent_finishes_the_task_from_the_mismatch(recorded: RunResult,
                                                                            tmp_path: Path) -> None:
    driver = phone_with(settings_app(tmp_path, "redesigned"))
    model = scripted(click(3, "Network & internet"), click(3, "Use Wi-Fi"), finish("Wi-Fi is on."))
    result = await replay(recorded, tmp_path / "replays", driver, model, fallback="agent")
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on.") and wifi_on(driver)
    assert len(model.calls) == 3 and result.model_calls == 3
    lines = steps_of(result.run_dir)
    assert [(line["agent"], line["status"]) for line in lines] == [
        ("Replay", "CONTINUE"), ("Replay", "HANDOVER"), ("MobileAgent", "CONTINUE"), ("MobileAgent", "CONTINUE"),
        ("MobileAgent", "FINISH")]
    moves = [(e["agent"], e["from"], e["to"]) for e in map(json.loads, (result.run_dir / "run.log").read_text()
                                                           .splitlines()) if e["event"] == "transition"]
    assert ("Replay", "CONTINUE", "HANDOVER") in moves and ("MobileAgent", "NONE", "CONTINUE") in moves
    first_prompt = model.calls[0][-1].content[0].text  # type: ignore[union-attr]
    assert "Open Settings; Open Wi-Fi; Switch Wi-Fi on" in first_prompt  # the recorded plan, carried over
    account = result.replay or {}
    assert (account["ended"], account["at_step"], account["replayed"]) == ("fell back", 2, 1)


async def test_a_replay_never_skips_an_approval_the_task_file_asks_for(recorded: RunResult, tmp_path: Path) -> None:
    confirm = {"human": {"confirm": {"tools": ["click"]}}}
    result = await replay(recorded, tmp_path / "replays", SimDriver(), NoCalls(), overrides=confirm)
    assert result.status == "FAIL" and result.steps == 2
    assert "the action needs a person's approval: the task file marks click as sensitive" in result.reason


async def test_a_run_that_did_not_finish_is_followed_as_far_as_it_went(tmp_path: Path) -> None:
    model = scripted(
        {"status": "CONTINUE", "thought": "t", "action": {"name": "open_app", "args": {"text": "Settings"}}},
        {"status": "FAIL", "thought": "t", "result": "gave up"})
    recorded = await Session(demo_settings(tmp_path / "recorded"), device=SimDriver(), model=model).run()
    assert recorded.status == "FAIL"
    stopped = await replay(recorded, tmp_path / "replays", SimDriver(), NoCalls())
    assert stopped.status == "FAIL" and stopped.steps == 2
    assert stopped.reason == "replay stopped at step 2: the recorded run ended here without finishing (FAIL: gave up)"
    driver = SimDriver()
    agent = scripted(click(3, "Wi-Fi"), click(3, "Use Wi-Fi"), finish("Wi-Fi is on."))
    finished = await replay(recorded, tmp_path / "replays", driver, agent, fallback="agent")
    assert finished.status == "FINISH" and wifi_on(driver) and finished.model_calls == 3


def test_the_fallback_is_the_agent_of_the_runs_mode(tmp_path: Path, recorded: RunResult) -> None:
    settings = demo_settings(tmp_path, mode="reasoning")
    root = build_root(settings, device=SimDriver(), model=NoCalls(), replay=plan_of(recorded, "agent"))  # type: ignore[arg-type]
    assert isinstance(root, ReplayAgent) and isinstance(root.fallback, ManagerAgent)
    alone = build_root(settings, device=SimDriver(), model=NoCalls(), replay=plan_of(recorded))  # type: ignore[arg-type]
    assert isinstance(alone, ReplayAgent) and alone.fallback is None
