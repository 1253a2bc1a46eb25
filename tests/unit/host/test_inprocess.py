"""The in-process host API: a host drives the mobile agent with UFO's state protocol, shares one
context, and learns FINISH or FAIL with a reason (a FAIL is never reported as completed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ufo_mobile
from tests.fakes import FakeDriver
from ufo_mobile import AgentState, RunContext, Settings, open_agent
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.errors import DeviceDisconnectedError
from ufo_mobile.settings import LogSettings, ModelSettings, TaskSettings

ROOT = Path(__file__).resolve().parents[3]
TAP = {"status": "CONTINUE", "thought": "t", "action": {"name": "click_at", "args": {"x": 10, "y": 10}}}


def settings(tmp_path: Path) -> Settings:
    return Settings(task=TaskSettings(text="Do the thing"), model=ModelSettings(script=Path("unused.yaml")),
                    logs=LogSettings(dir=tmp_path))


async def drive(agent: Any, context: RunContext, *, max_turns: int = 100) -> tuple[Any, list[str]]:
    """UFO's BaseRound loop, as a host writes it; returns the last agent and the states seen."""
    seen = [agent.state.name()]
    turns = 0
    while not agent.state.is_round_end() and turns < max_turns:
        await agent.state.handle(agent, context)
        state = agent.state.next_state(agent)
        agent = agent.state.next_agent(agent)
        agent.set_state(state)
        seen.append(state.name())
        turns += 1
    return agent, seen


async def test_a_host_drives_the_agent_to_finish_and_shares_the_context(tmp_path: Path) -> None:
    finish = {"status": "FINISH", "thought": "done", "result": "all done"}
    model = ScriptedModel(Script(replies=[TAP, TAP, finish]))
    async with open_agent(settings(tmp_path), device=FakeDriver(), model=model) as hosted:
        context = hosted.context
        assert isinstance(hosted.agent.state, AgentState) and hosted.agent.state.name() == "CONTINUE"
        assert context.request == "Do the thing" and context.session_step == 0 and context.cost == 0
        assert hosted.execution.is_running() and not hosted.execution.is_stopped_requested()
        agent, seen = await drive(hosted.agent, context)
        assert hosted.execution.status == "COMPLETED" and hosted.execution.current_state == "FINISH"
        assert seen == ["CONTINUE", "CONTINUE", "CONTINUE", "FINISH"]
        assert agent.state.is_round_end() and agent.state.is_subtask_end()
        assert context.session_step == 3 and context.round_step == 3
        outcome = await hosted.end_round(agent)
    assert type(outcome["status"]) is str
    assert outcome == {"agent": agent.name, "request": "Do the thing", "status": "FINISH", "completed": True,
                       "reason": "", "result": "all done"}
    assert context.results == [outcome]
    result = hosted.result
    assert result is not None and result.status == "FINISH" and result.ok and result.steps == 3
    run = json.loads((result.run_dir / "run.json").read_text())
    assert run["status"] == "FINISH" and run["steps"] == 3
    assert run["execution"]["status"] == "COMPLETED" and run["execution"]["step"] == 3
    assert (result.run_dir / "report.html").is_file()


async def test_a_fail_is_a_fail_with_its_reason_never_completed(tmp_path: Path) -> None:
    fail = {"status": "FAIL", "thought": "no", "result": "the app is not installed"}
    async with open_agent(settings(tmp_path), device=FakeDriver(), model=ScriptedModel(Script(replies=[fail]))) as h:
        agent, seen = await drive(h.agent, h.context)
        outcome = await h.end_round(agent)
    assert seen == ["CONTINUE", "FAIL"]
    assert outcome["status"] == "FAIL" and outcome["completed"] is False
    assert outcome["reason"] == "the app is not installed" and outcome["result"] == ""
    assert h.result is not None and h.result.status == "FAIL" and not h.result.ok
    assert json.loads((h.result.run_dir / "run.json").read_text())["status"] == "FAIL"


async def test_a_host_that_leaves_mid_round_records_a_fail(tmp_path: Path) -> None:
    model = ScriptedModel(Script(replies=[TAP, TAP, TAP]))
    async with open_agent(settings(tmp_path), device=FakeDriver(), model=model) as hosted:
        agent, _ = await drive(hosted.agent, hosted.context, max_turns=1)  # the host's own step budget
        assert not agent.state.is_round_end()
        outcome = await hosted.end_round(agent)
    assert outcome["status"] == "FAIL" and not outcome["completed"] and outcome["reason"] == "the round did not end"
    result = hosted.result
    assert result is not None and result.status == "FAIL"
    assert result.reason == "the host left the run before its round ended" and result.steps == 1
    assert json.loads((result.run_dir / "run.json").read_text())["reason"] == result.reason


async def test_a_phone_that_cannot_be_reached_ends_the_round_before_a_step(tmp_path: Path) -> None:
    class Gone(FakeDriver):
        async def connect(self) -> None:
            raise DeviceDisconnectedError("device 'X' not found")

    async with open_agent(settings(tmp_path), device=Gone(), model=ScriptedModel(Script(replies=[TAP]))) as hosted:
        assert hosted.agent.state.is_round_end()  # the host's loop does not even start
        agent, seen = await drive(hosted.agent, hosted.context)
        outcome = await hosted.end_round(agent)
    assert seen == ["FAIL"] and outcome["status"] == "FAIL"
    assert outcome["reason"].startswith("cannot connect to the device:")
    assert hosted.result is not None and hosted.result.steps == 0


def test_the_public_api_is_importable_from_the_package() -> None:
    for name in ("open_agent", "HostedRun", "round_outcome", "AgentState", "AgentStateManager",
                 "MobileAgentStateManager", "RunContext", "RunResult", "MobileAgentStatus", "Settings"):
        assert name in ufo_mobile.__all__ and hasattr(ufo_mobile, name)


@pytest.mark.integration
def test_the_example_host_runs_the_demo_and_the_toy_agent_in_one_session(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "host.py")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["round 1: Notebook -> FINISH: plan: Turn on Wi-Fi",
                         "round 2: MobileAgent -> FINISH: Wi-Fi is on.",
                         "round 3: Notebook -> FINISH: MobileAgent: 'Turn on Wi-Fi' completed after 4 step(s), "
                         "cost $0.0000"]
    (run_dir,) = (tmp_path / "logs").iterdir()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "FINISH" and run["steps"] == 4
