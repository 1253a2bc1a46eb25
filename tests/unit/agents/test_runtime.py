"""The runtime is agent-agnostic: one round loop, one owner of the shared state, one rulebook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.agents.test_human import DONE, WIFI, moves, settings, steps
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import Session
from ufo_mobile.core.states.mobile import MobileAgentStateManager
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import DeviceDisconnectedError, StateMachineError

OPEN = {"status": "CONTINUE", "thought": "settings", "action": {"name": "open_app", "args": {"text": "Settings"}}}


class NoPhone(SimDriver):
    async def connect(self) -> None:
        raise DeviceDisconnectedError("no such phone", serial="gone")


async def test_a_run_that_cannot_connect_moves_none_to_fail_directly(tmp_path: Path) -> None:
    result = await Session(settings(tmp_path), device=NoPhone(), model=ScriptedModel(Script(replies=[DONE]))).run()
    assert (result.status, result.steps) == ("FAIL", 0)
    assert result.reason == "cannot connect to the device: [gone] no such phone"
    assert moves(result) == [("NONE", "FAIL")]


async def test_the_shared_state_has_one_owner_and_one_step_history(tmp_path: Path) -> None:
    seen: list[Any] = []
    model = ScriptedModel(Script(replies=[OPEN, WIFI, DONE]))
    session = Session(settings(tmp_path), device=SimDriver(), model=model, on_step=lambda s: seen.append(s.shared))
    result = await session.run()
    assert result.status == "FINISH" and session.context is not None
    shared = session.context.shared
    assert [r.step for r in shared.step_records] == [1, 2, 3]  # the one history: typed records
    assert shared.message_history == []  # (the manager's conversation; the flat agent has none)
    assert shared.action_outcomes == [True, True] and session.context.execution.status == "COMPLETED"
    assert shared.error_descriptions == []  # a success adds no empty error
    assert seen[-1].step_records[-1].status == "FINISH"


async def test_only_a_failed_action_adds_an_error_description(tmp_path: Path) -> None:
    session = Session(settings(tmp_path), device=SimDriver(), model=ScriptedModel(Script(replies=[WIFI, DONE])))
    await session.run()
    assert session.context is not None
    shared = session.context.shared
    assert shared.action_outcomes == [False]  # on the launcher, control 3 is not Wi-Fi
    assert len(shared.error_descriptions) == 1 and "Wi-Fi" in shared.error_descriptions[0]


async def test_fail_ends_the_round_and_its_work_runs_once(tmp_path: Path) -> None:
    fail = {"status": "FAIL", "thought": "no", "result": "cannot"}
    result = await Session(settings(tmp_path), device=SimDriver(), model=ScriptedModel(Script(replies=[fail]))).run()
    assert (result.status, result.reason) == ("FAIL", "cannot")
    assert moves(result) == [("NONE", "CONTINUE"), ("CONTINUE", "FAIL")]
    assert (result.run_dir / "final.png").exists()
    events = [json.loads(x)["event"] for x in (result.run_dir / "run.log").read_text().splitlines()]
    assert events.count("run_failed") == 1
    assert [s["status"] for s in steps(result)] == ["FAIL"]


def test_finish_to_finish_is_a_no_op_and_states_belong_to_one_registry() -> None:
    from ufo_mobile.core.agents.base import BasicAgent
    from ufo_mobile.core.states.rulebook import MOBILE_RULES

    agent = BasicAgent("A", MobileAgentStateManager(), MOBILE_RULES)
    finish = agent.state_manager.get_state(MobileAgentStatus.FINISH)
    agent.set_state(agent.state_manager.get_state(MobileAgentStatus.CONTINUE))
    agent.set_state(finish)
    assert finish.next_state(agent) is finish
    agent.set_state(finish.next_state(agent))
    assert agent.machine.current == "FINISH"
    other = MobileAgentStateManager().get_state(MobileAgentStatus.FINISH)  # same class, another registry
    with pytest.raises(StateMachineError, match="is not a state of BasicAgent 'A'"):
        agent.set_state(other)


async def test_a_working_state_without_a_context_says_so() -> None:
    from ufo_mobile.core.agents.base import BasicAgent
    from ufo_mobile.core.states.rulebook import MOBILE_RULES

    agent = BasicAgent("A", MobileAgentStateManager(), MOBILE_RULES)
    state = agent.state_manager.get_state(MobileAgentStatus.CONTINUE)
    with pytest.raises(StateMachineError, match="needs the run context"):
        await state.handle(agent)
    await agent.state_manager.get_state(MobileAgentStatus.FINISH).handle(agent)  # no work: no context needed
