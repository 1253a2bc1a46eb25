"""The batch loop: every task once per free phone, at most ``parallel`` at a time; a task whose phone
was lost runs once more on another phone; a task's own FAIL is not retried."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.unit.fleet.fakes import FakeEngine, Recorder, fail, finish, tasks
from ufo_mobile.fleet.devices import Phone, sim_phones
from ufo_mobile.fleet.jobs import Event, Job, Outcome
from ufo_mobile.fleet.pool import Pool
from ufo_mobile.fleet.scheduler import DONE, FAILED, INTERRUPTED, NOT_RUN, Batch, TaskResult


def run(batch: Batch) -> list[TaskResult]:
    return asyncio.run(batch.run())


def make(count: int, phones: int, engine: FakeEngine, parallel: int | None = None) -> tuple[Batch, Recorder]:
    recorder = Recorder()
    batch = Batch(tasks(count), Pool(sim_phones(phones)), engine, parallel=parallel or phones,
                  on_event=recorder.event, notices=recorder)
    return batch, recorder


def test_every_task_runs_once_and_finishes() -> None:
    engine = FakeEngine()
    batch, recorder = make(8, 4, engine)
    found = run(batch)
    assert [r.state for r in found] == [DONE] * 8
    assert sorted(c[0] for c in engine.calls) == [f"t{i:02d}-task-{i}-a1" for i in range(1, 9)]
    assert engine.most_running == 4 and engine.probes == []
    assert len(recorder.ended) == 8 and all(not lost and not retried for *_, lost, retried in recorder.ended)


def test_parallel_caps_the_runs_at_a_time() -> None:
    engine = FakeEngine()
    batch, _ = make(6, 4, engine, parallel=2)
    run(batch)
    assert engine.most_running == 2


def lost_on(phone: str, task: int = 1) -> Callable[[Job, Phone], Outcome]:
    def script(job: Job, where: Phone) -> Outcome:
        if job.task.index == task and where.name == phone:
            return fail(job, where, "data_collection failed: [x] screenshot: device offline", device_error="gone")
        return finish(job, where)
    return script


def test_a_lost_phone_leaves_the_pool_and_its_task_is_retried_once_elsewhere() -> None:
    engine = FakeEngine(script=lost_on("sim-1"), dead={"sim-1"})
    batch, recorder = make(4, 2, engine)
    found = run(batch)
    assert [r.state for r in found] == [DONE] * 4
    first, second = found[0].attempts
    assert (first.outcome.status, first.phone_lost, first.retried) == ("FAIL", True, True)
    assert (second.outcome.attempt, second.outcome.phone, second.outcome.status) == (2, "sim-2", "FINISH")
    assert second.outcome.run_id == "t01-task-1-a2"
    assert batch.pool.removed == {"sim-1": "data_collection failed: [x] screenshot: device offline"}
    assert all(phone == "sim-2" for _, _, phone in engine.calls[1:])  # the lost phone got nothing more
    assert engine.probes == ["sim-1"]
    assert any("phone sim-1 lost" in line for line in recorder.lines)
    assert any("t01 will be run again" in line for line in recorder.lines)


def test_a_task_is_retried_only_once() -> None:
    def script(job: Job, phone: Phone) -> Outcome:
        if job.task.index == 1:
            return fail(job, phone, "device gone", device_error="gone")
        return finish(job, phone)

    engine = FakeEngine(script=script, dead={"sim-1", "sim-2"})
    batch, _ = make(1, 3, engine)
    (result,) = run(batch)
    assert result.state == FAILED and len(result.attempts) == 2
    assert [a.retried for a in result.attempts] == [True, False]
    assert set(batch.pool.removed) == {"sim-1", "sim-2"}


def test_the_tasks_own_fail_is_not_retried_and_the_phone_is_not_probed() -> None:
    engine = FakeEngine(script=lambda job, phone: fail(job, phone) if job.task.index == 2 else finish(job, phone))
    batch, _ = make(3, 2, engine)
    found = run(batch)
    assert [r.state for r in found] == [DONE, FAILED, DONE]
    assert len(found[1].attempts) == 1 and engine.probes == [] and batch.pool.removed == {}


def test_a_device_command_error_on_a_phone_that_still_answers_is_the_tasks_failure() -> None:
    engine = FakeEngine(script=lambda job, phone: fail(job, phone, "act failed", device_error="command"))
    batch, _ = make(1, 2, engine)
    (result,) = run(batch)
    assert result.state == FAILED and len(result.attempts) == 1
    assert engine.probes == ["sim-1"] and batch.pool.removed == {}


def test_a_phone_that_dropped_but_answers_again_stays_and_the_task_is_retried_on_another() -> None:
    engine = FakeEngine(script=lost_on("sim-1"))
    batch, _ = make(1, 2, engine)
    (result,) = run(batch)
    assert result.state == DONE and [a.outcome.phone for a in result.attempts] == ["sim-1", "sim-2"]
    assert not result.attempts[0].phone_lost and batch.pool.removed == {}


def test_when_every_phone_is_lost_the_rest_is_not_run_and_says_why() -> None:
    engine = FakeEngine(script=lambda job, phone: fail(job, phone, "gone", device_error="gone"), dead={"sim-1"})
    batch, _ = make(3, 1, engine)
    found = run(batch)
    assert [r.state for r in found] == [FAILED, NOT_RUN, NOT_RUN]
    assert found[0].note == "not retried: no phone left in the pool"
    assert found[1].note == "no phone left in the pool"


def test_a_stop_interrupts_the_runs_in_flight_and_starts_nothing_more() -> None:
    engine = FakeEngine(gates={1: asyncio.Event(), 2: asyncio.Event()})

    async def scenario() -> list[TaskResult]:
        busy = asyncio.Event()
        recorder = Recorder()

        def on_event(event: Event) -> None:
            recorder.event(event)
            if len(recorder.events) == 2:  # both phones busy
                busy.set()

        batch = Batch(tasks(5), Pool(sim_phones(2)), engine, parallel=2, on_event=on_event, notices=recorder)
        running = asyncio.ensure_future(batch.run())
        await busy.wait()
        batch.stop("interrupted", 2)
        return await running

    found = asyncio.run(scenario())
    assert engine.stops == [("interrupted", 2)]
    # the runs the stop cut short did not end: interrupted, not failed
    assert [r.state for r in found] == [INTERRUPTED, INTERRUPTED, NOT_RUN, NOT_RUN, NOT_RUN]
    assert all(a.outcome.interrupted and not a.retried for r in found for a in r.attempts)
    assert found[2].note == "stopped: interrupted"


def test_an_engine_that_raises_ends_that_attempt_only() -> None:
    def script(job: Job, phone: Phone) -> Outcome:
        if job.task.index == 1:
            raise RuntimeError("boom")
        return finish(job, phone)

    engine = FakeEngine(script=script)
    batch, _ = make(2, 1, engine)
    found = run(batch)
    assert [r.state for r in found] == [FAILED, DONE]
    assert found[0].attempts[0].outcome.reason == "internal error: RuntimeError('boom')"
