"""What the processor loop tells whoever watches a run live (ufo_mobile/core/trace/progress.py):
each phase as it starts, ``recording`` for the recorder, the model's thought once read, and what a
model client reports from inside a phase, each with the step and agent filled in."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.reply import AgentReply
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.base import Processor
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.trace.progress import Progress, report, reporting
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.errors import DeviceError


class Watched:
    """A step's run that keeps what it is told."""

    def __init__(self) -> None:
        self.events: list[Progress] = []

    @property
    def writer(self) -> Any:
        raise AssertionError("not used")

    def model_for(self, role: str, default: ChatModel) -> ChatModel:
        return default

    def progress(self, event: Progress) -> None:
        self.events.append(event)


class Phase:
    def __init__(self, name: str, *, always: bool = False, thought: str | None = None,
                 retry: bool = False, fail: bool = False, manager: str | None = None,
                 gate: asyncio.Barrier | None = None) -> None:
        self.name, self.always = name, always
        self.thought, self.retry, self.fail, self.manager, self.gate = thought, retry, fail, manager, gate

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        if self.gate is not None:
            await self.gate.wait()
        if self.retry:  # what a model client does: it knows nothing of the step
            report(Progress("retry", text="HTTP 429", delay=2.0, attempt=2, attempts=5))
        if self.thought is not None:
            ctx.reply = AgentReply(status="FINISH", thought=self.thought, result="done")
        if self.manager is not None:
            ctx.extra["manager_reply"] = {"thought": self.manager, "plan": []}
        if self.fail:
            raise DeviceError("the phone went away")
        return None


def step(run: Watched | RunContext | None, number: int = 7, agent: str = "Executor") -> StepContext:
    return StepContext(run_id="r", step=number, agent_name=agent, request="do it", shared=SharedState(), run=run)


async def record(ctx: StepContext) -> None:
    return None


def seen(run: Watched) -> list[tuple[Any, ...]]:
    return [(e.kind, e.step, e.agent, e.phase or e.text) for e in run.events]


async def test_phases_thought_and_a_retry_reach_the_run_in_order() -> None:
    run = Watched()
    phases = [Phase("data_collection"), Phase("llm_interaction", retry=True, thought="Tap Wi-Fi."),
              Phase("action_execution", fail=True), Phase("skipped"), Phase("memory_update", always=True)]
    await Processor(phases, recorder=record).process(step(run))
    assert seen(run) == [("phase", 7, "Executor", "data_collection"), ("phase", 7, "Executor", "llm_interaction"),
                         ("retry", 7, "Executor", "HTTP 429"), ("thought", 7, "Executor", "Tap Wi-Fi."),
                         ("phase", 7, "Executor", "action_execution"), ("phase", 7, "Executor", "memory_update"),
                         ("phase", 7, "Executor", "recording")]
    retry = run.events[2]
    assert (retry.delay, retry.attempt, retry.attempts) == (2.0, 2, 5)


async def test_a_manager_thought_is_told_and_a_step_going_on_after_approval_does_not_repeat_it() -> None:
    run = Watched()
    ctx = step(run, 3, "Manager")
    await Processor([Phase("llm_interaction", manager="Plan: open Settings.")]).process(ctx)
    await Processor([Phase("action_execution")]).process(ctx)  # the same step, once approved
    assert seen(run) == [("phase", 3, "Manager", "llm_interaction"), ("thought", 3, "Manager", "Plan: open Settings."),
                         ("phase", 3, "Manager", "action_execution")]


async def test_a_step_outside_a_run_and_code_outside_a_step_tell_nobody() -> None:
    await Processor([Phase("llm_interaction", retry=True, thought="t")], recorder=record).process(step(None))
    report(Progress("retry", text="outside any step"))  # no sink: nothing happens


async def test_each_step_reaches_its_own_run_when_two_run_at_once() -> None:
    first, second, both_in = Watched(), Watched(), asyncio.Barrier(2)  # each retries once both are in the phase
    await asyncio.gather(*(Processor([Phase("llm_interaction", retry=True, gate=both_in)]).process(step(run, n))
                           for run, n in ((first, 1), (second, 2))))
    assert [e.step for e in first.events] == [1, 1] and [e.step for e in second.events] == [2, 2]


async def test_the_sink_is_the_steps_only_while_it_runs() -> None:
    told: list[Progress] = []
    with reporting(told.append):
        report(Progress("phase", phase="outer"))
        await Processor([Phase("llm_interaction", retry=True)]).process(step(Watched()))
        report(Progress("phase", phase="outer again"))
    report(Progress("phase", phase="after"))
    assert [e.phase for e in told] == ["outer", "outer again"]


class Warnings:
    """A run logger that keeps its warnings."""

    def __init__(self) -> None:
        self.warnings: list[tuple[str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.warnings.append((event, fields))


async def test_a_watcher_that_fails_is_logged_once_and_the_step_goes_on(tmp_path: Path) -> None:
    told: list[Progress] = []

    def broken(event: Progress) -> None:
        told.append(event)
        raise OSError(5, "Input/output error")  # the terminal went away

    logger = Warnings()
    run = RunContext("r", "do it", RunWriter(tmp_path / "run"), logger, on_progress=broken)
    ctx = await Processor([Phase("data_collection"), Phase("llm_interaction", retry=True, thought="t")],
                          recorder=record).process(step(run))
    assert ctx.failed_phase is None and len(told) == 1 and run.on_progress is None
    assert [event for event, _ in logger.warnings] == ["progress_watcher_failed"]
    assert "Input/output error" in logger.warnings[0][1]["error"]
    run.writer.close()
