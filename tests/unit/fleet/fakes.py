"""A fake engine for the batch loop: outcomes scripted per (task, attempt), phones that answer a probe or not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from ufo_mobile.fleet.devices import Phone
from ufo_mobile.fleet.jobs import Event, Job, Outcome, Task
from ufo_mobile.fleet.scheduler import Attempt, TaskResult

Script = Callable[[Job, Phone], Outcome]


def tasks(count: int) -> list[Task]:
    return [Task(i, f"/tasks/t{i}.yaml", None, f"task {i}", f"do thing {i}") for i in range(1, count + 1)]


def finish(job: Job, phone: Phone, steps: int = 3) -> Outcome:
    return Outcome(job.task.index, job.attempt, phone.name, job.run_id, "FINISH", answer="done", steps=steps)


def fail(job: Job, phone: Phone, reason: str = "the model gave up", device_error: str | None = None) -> Outcome:
    return Outcome(job.task.index, job.attempt, phone.name, job.run_id, "FAIL", reason=reason, steps=2,
                   device_error=device_error)


@dataclass
class FakeEngine:
    script: Script = finish
    dead: set[str] = field(default_factory=set)  # phones whose probe fails
    gates: dict[int, asyncio.Event] = field(default_factory=dict)  # a task waits for its gate before ending
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (run_id, attempt, phone)
    probes: list[str] = field(default_factory=list)
    running: int = 0
    most_running: int = 0
    stops: list[tuple[str, int | None]] = field(default_factory=list)
    abandoned: bool = False

    async def run(self, job: Job, phone: Phone, on_event: Callable[[Event], None]) -> Outcome:
        self.calls.append((job.run_id, job.attempt, phone.name))
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        on_event(Event("start", job.task.index, job.attempt, phone.name))
        try:
            gate = self.gates.get(job.task.index)
            if gate is not None:
                await gate.wait()
            await asyncio.sleep(0)
            if self.stops:
                return Outcome(job.task.index, job.attempt, phone.name, job.run_id, "FAIL",
                               reason=self.stops[0][0], interrupted=True, signal=self.stops[0][1])
            return self.script(job, phone)
        finally:
            self.running -= 1

    async def probe(self, phone: Phone) -> bool:
        self.probes.append(phone.name)
        return phone.name not in self.dead

    def interrupt(self, reason: str, signum: int | None) -> None:
        self.stops.append((reason, signum))
        for gate in self.gates.values():
            gate.set()

    def abandon(self) -> None:
        self.abandoned = True


@dataclass
class Recorder:
    ended: list[tuple[int, int, str, bool, bool]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    def attempt_ended(self, result: TaskResult, attempt: Attempt) -> None:
        o = attempt.outcome
        self.ended.append((o.task, o.attempt, o.phone, attempt.phone_lost, attempt.retried))

    def notice(self, line: str) -> None:
        self.lines.append(line)

    def event(self, event: Event) -> None:
        self.events.append(event)
