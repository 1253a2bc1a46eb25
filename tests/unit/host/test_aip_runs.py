"""The service's runs over a pool of phones, with a runner the test ends by hand (no device, no time):
one task per phone, a first-come waiting line with places, refusal when the line is full (or --queue 0),
a stop that ends the runs in flight with the reason and the waiting tasks unrun."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from ufo_mobile.core.session import RunControl
from ufo_mobile.fleet.devices import Phone, sim_phones
from ufo_mobile.host.aip.runs import Refused, Runs, ServeTask
from ufo_mobile.host.aip.session import Emit
from ufo_mobile.settings import Settings


@dataclass
class Flight:
    text: str
    phone: str
    control: RunControl
    emit: Emit
    done: asyncio.Event = field(default_factory=asyncio.Event)
    status: str = "FINISH"


class _Stoppable:
    """A session as ``RunControl`` sees it: a stop ends the flight."""

    def __init__(self, flight: Flight) -> None:
        self.context = self
        self.flight = flight

    def interrupt(self, reason: str, signum: int | None = None) -> None:
        self.flight.done.set()

    def abandon(self) -> None:
        self.flight.done.set()


class HandRunner:
    """A runner whose runs end when the test says so (or when stopped: FAIL with the stop's reason)."""

    def __init__(self) -> None:
        self.flights: list[Flight] = []

    async def __call__(self, settings: Settings, phone: Phone, control: RunControl, emit: Emit) -> dict[str, Any]:
        flight = Flight(settings.task.text, phone.name, control, emit)
        self.flights.append(flight)
        control.started(_Stoppable(flight))  # type: ignore[arg-type]  # what RunControl asks of a session
        emit("started", {"event": "started", "phone": phone.name})
        await flight.done.wait()
        if control.stop is not None:
            return {"status": "FAIL", "reason": control.stop[0]}
        return {"status": flight.status, "reason": "done"}

    def end(self, text: str, status: str = "FINISH") -> None:
        flight = next(f for f in self.flights if f.text == text)
        flight.status = status
        flight.done.set()


@pytest.fixture
def base() -> Settings:
    return Settings.model_validate({"task": {"text": "-"}, "model": {"script": "s.yaml"}})


def make(base: Settings, text: str, phone: str | None = None) -> ServeTask:
    return ServeTask(session_id=text, client_id="c", settings=base.model_copy(
        update={"task": base.task.model_copy(update={"text": text})}), phone=phone)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, task: ServeTask, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((task.session_id, kind, payload))

    def ended(self) -> dict[str, str]:
        return {sid: str(p["reason"]) for sid, kind, p in self.events if kind == "ended"}


async def settle() -> None:
    for _ in range(20):  # let the started flights and their callbacks run (no time passes)
        await asyncio.sleep(0)


async def test_one_task_per_phone_and_a_line_for_the_rest(base: Settings) -> None:
    runner, seen = HandRunner(), Recorder()
    runs = Runs(sim_phones(2), runner, seen, queue_limit=5)
    assert [runs.submit(make(base, t)) for t in ("a", "b", "c")] == [0, 0, 1]
    assert runs.submit(make(base, "d", phone="sim-2")) == 2
    await settle()
    assert [(f.text, f.phone) for f in runner.flights] == [("a", "sim-1"), ("b", "sim-2")]
    assert runs.busy() == {"sim-1": "a", "sim-2": "b"}
    runner.end("b")  # sim-2 frees: c (any phone) is first in line, so d (sim-2 only) waits on
    await settle()
    assert [(f.text, f.phone) for f in runner.flights][2:] == [("c", "sim-2")]
    runner.end("a", status="FAIL")  # sim-1 frees: d still wants sim-2
    await settle()
    assert [t.session_id for t in runs.waiting] == ["d"]
    runner.end("c")
    await settle()
    assert [(f.text, f.phone) for f in runner.flights][3:] == [("d", "sim-2")]
    runner.end("d")
    await runs.drain()
    assert [(sid, kind) for sid, kind, _ in seen.events if kind == "ended"] == [
        ("b", "ended"), ("a", "ended"), ("c", "ended"), ("d", "ended")]
    assert runs.busy() == {} and not runs.running


async def test_a_full_line_refuses_with_why(base: Settings) -> None:
    runs = Runs(sim_phones(1), HandRunner(), Recorder(), queue_limit=1)
    runs.submit(make(base, "a"))
    assert runs.submit(make(base, "b")) == 1
    with pytest.raises(Refused, match=r"^every phone is busy \(1 running\), and the waiting line is full "
                                      r"\(1 tasks, --queue\)$"):
        runs.submit(make(base, "c"))
    runs.stop("test over")
    await runs.drain()


async def test_queue_zero_refuses_a_task_for_a_busy_phone(base: Settings) -> None:
    runs = Runs(sim_phones(2), HandRunner(), Recorder(), queue_limit=0)
    assert runs.submit(make(base, "a", phone="sim-1")) == 0
    with pytest.raises(Refused, match=r"^phone sim-1 is busy \(session a\), and --queue 0: tasks do not wait$"):
        runs.submit(make(base, "b", phone="sim-1"))
    assert runs.submit(make(base, "c")) == 0  # the other phone is free
    assert runs.known("a") and not runs.known("b")
    runs.stop("test over")
    await runs.drain()


async def test_a_stop_ends_the_runs_in_flight_and_the_waiting_ones_unrun(base: Settings) -> None:
    runner, seen = HandRunner(), Recorder()
    runs = Runs(sim_phones(1), runner, seen, queue_limit=3)
    runs.submit(make(base, "a"))
    runs.submit(make(base, "b"))
    await settle()
    runs.stop("terminated", 15)
    await runs.drain()
    assert seen.ended() == {"b": "not run: the server stopped (terminated)", "a": "terminated"}
    assert runner.flights[0].control.stop == ("terminated", 15)
    assert [f.text for f in runner.flights] == ["a"]  # nothing started after the stop
    with pytest.raises(Refused, match=r"^the server is stopping \(terminated\): no new tasks$"):
        runs.submit(make(base, "c"))


async def test_a_runner_that_crashes_ends_its_task_and_frees_the_phone(base: Settings) -> None:
    async def broken(settings: Settings, phone: Phone, control: RunControl, emit: Emit) -> dict[str, Any]:
        raise RuntimeError("boom")

    seen = Recorder()
    runs = Runs(sim_phones(1), broken, seen, queue_limit=1)
    runs.submit(make(base, "a"))
    runs.submit(make(base, "b"))
    await runs.drain()
    assert seen.ended() == {"a": "internal error: RuntimeError('boom')", "b": "internal error: RuntimeError('boom')"}
    assert runs.pool.free == sim_phones(1)
