"""How a run's states move its execution state (``RunContext.execution``), and run.json's copy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.fakes import FakeDriver, WaitsForever
from tests.unit.agents.test_session_limits import TAP_WIFI, settings
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import RunResult, Session


async def _run(tmp_path: Path, replies: list[Any]) -> tuple[RunResult, RunContext]:
    session = Session(settings(tmp_path), device=FakeDriver(), model=ScriptedModel(Script(replies=replies)))
    result = await session.run()
    assert session.context is not None
    return result, session.context


def _recorded(result: RunResult) -> dict[str, Any]:
    execution: dict[str, Any] = json.loads((result.run_dir / "run.json").read_text())["execution"]
    assert execution == result.execution
    return execution


async def test_a_finished_run_is_completed(tmp_path: Path) -> None:
    result, ctx = await _run(tmp_path, [TAP_WIFI, {"status": "FINISH", "result": "done"}])
    e = ctx.execution
    assert (e.status, e.current_node, e.current_state, e.step) == ("COMPLETED", "MobileAgent", "FINISH", 2)
    assert not e.is_running() and not e.is_stopped_requested()
    assert _recorded(result)["status"] == "COMPLETED"


async def test_a_failed_run_is_an_error(tmp_path: Path) -> None:
    result, ctx = await _run(tmp_path, [{"status": "FAIL", "result": "the app is not installed"}])
    assert (ctx.execution.status, ctx.execution.current_state, ctx.execution.step) == ("ERROR", "FAIL", 1)
    assert _recorded(result)["status"] == "ERROR"


async def test_an_illegal_move_asked_by_the_model_ends_the_run_as_an_error(tmp_path: Path) -> None:
    result, ctx = await _run(tmp_path, [{"status": "NONE", "result": "x"}])
    assert result.reason == "the model asked for status 'NONE', which is not a move from CONTINUE"
    assert ctx.execution.status == "ERROR"


async def test_an_interrupted_run_says_where_and_why(tmp_path: Path) -> None:
    model = WaitsForever([TAP_WIFI])
    session = Session(settings(tmp_path), device=FakeDriver(), model=model)
    task = asyncio.ensure_future(session.run())
    await asyncio.wait_for(model.waiting.wait(), 60)  # step 2 is waiting for the model
    assert session.context is not None
    e = session.context.execution
    assert e.is_running() and (e.current_node, e.current_state) == ("MobileAgent", "CONTINUE")
    session.context.interrupt("terminated", 15)
    assert e.is_stopped_requested() and not e.is_interrupted()  # asked; the step is still ending
    result = await asyncio.wait_for(task, 60)
    assert result.interrupted and e.is_interrupted()
    assert (e.interrupt_node, e.interrupt_reason, e.current_state, e.step) == ("MobileAgent", "terminated", "FAIL", 2)
    assert _recorded(result) == {"current_node": "MobileAgent", "current_state": "FAIL", "step": 2,
                                 "status": "INTERRUPTED", "interrupt_node": "MobileAgent",
                                 "interrupt_reason": "terminated", "stop_requested": True}


async def test_in_reasoning_mode_the_node_follows_the_agent_that_runs(tmp_path: Path) -> None:
    from tests.unit.agents.test_reasoning import WIFI_FLOW
    from tests.unit.agents.test_reasoning import settings as reasoning_settings

    nodes: list[tuple[str, str]] = []
    session = Session(reasoning_settings(tmp_path), device=FakeDriver(), model=ScriptedModel(Script(replies=WIFI_FLOW)))

    def seen(step: Any) -> None:
        assert session.context is not None
        nodes.append((session.context.execution.current_node, session.context.execution.current_state))

    session.on_step = seen
    result = await session.run()
    assert result.status == "FINISH" and result.execution["status"] == "COMPLETED"
    assert nodes[:2] == [("Manager", "CONTINUE"), ("Executor", "CONTINUE")]
    assert (result.execution["current_node"], result.execution["current_state"]) == ("Manager", "FINISH")
