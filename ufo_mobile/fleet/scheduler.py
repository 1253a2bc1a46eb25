"""The batch loop, the same for every engine: hand each task a free phone, at most ``parallel`` at
a time; when a run ends because its phone failed, probe the phone, take it out of the pool if it is
gone, and run the task once more on another phone. A task's own FAIL is never retried.

An engine runs one job on one phone (``Engine.run``), checks whether a phone still answers
(``Engine.probe``) and passes a stop on to the runs in flight (``interrupt``, ``abandon``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ufo_mobile.fleet.devices import Phone
from ufo_mobile.fleet.jobs import ERROR, FINISHED, Event, Job, Outcome, Task, run_id_for
from ufo_mobile.fleet.pool import Pool

EventSink = Callable[[Event], None]

#: A task's final state. A task whose last attempt was stopped from outside (the batch's own Ctrl-C,
#: SIGTERM, SIGHUP) is ``INTERRUPTED``: it did not end, so it is not a failure of the task.
DONE, FAILED, INTERRUPTED, NOT_RUN = "finished", "failed", "interrupted", "not run"


class Engine(Protocol):
    """Where the jobs of a batch run: in this process (``local.LocalEngine``), in worker processes of
    this machine (``processes.ProcessEngine``) or on Ray workers (``ray_engine.RayEngine``)."""

    name: str

    async def run(self, job: Job, phone: Phone, on_event: EventSink) -> Outcome:
        """Run ``job`` on ``phone``, passing its progress to ``on_event``; how it ended."""
        ...

    async def probe(self, phone: Phone) -> bool:
        """Whether ``phone`` still answers."""
        ...

    def interrupt(self, reason: str, signum: int | None) -> None:
        """Stop the runs in flight after their step, each ending in FAIL with ``reason``."""
        ...

    def abandon(self) -> None:
        """Stop waiting for the runs in flight."""
        ...

    def close(self) -> None:
        """Let go of what the engine started (worker processes, a Ray instance); the batch is over."""
        ...


@dataclass
class Attempt:
    """One attempt as the batch saw it: the outcome, and what the batch did about its phone."""

    outcome: Outcome
    phone_lost: bool = False  # the phone did not answer afterwards: taken out of the pool
    retried: bool = False  # the task was run again (elsewhere) because of this attempt


@dataclass
class TaskResult:
    """One task of a batch: its attempts (a second one when its phone was lost), and a note."""

    task: Task
    attempts: list[Attempt] = field(default_factory=list)
    note: str = ""  # why it was not run ("no phone left in the pool"), or "not retried: <why>"

    @property
    def state(self) -> str:
        """How the task ended: "finished", "failed", "interrupted" or "not run"."""
        if not self.attempts:
            return NOT_RUN
        last = self.attempts[-1].outcome
        if last.status == FINISHED:
            return DONE
        return INTERRUPTED if last.interrupted else FAILED


class Notices(Protocol):
    """Where a batch says what happened (the live table, or plain lines)."""

    def attempt_ended(self, result: TaskResult, attempt: Attempt) -> None:
        """An attempt of ``result``'s task has ended."""
        ...

    def notice(self, line: str) -> None:
        """A line for the user (a phone lost, a task retried)."""
        ...


class Batch:
    """Runs ``tasks`` over ``pool`` with ``engine``; ``run()`` returns one ``TaskResult`` per task."""

    def __init__(self, tasks: Sequence[Task], pool: Pool, engine: Engine, *, parallel: int,
                 on_event: EventSink, notices: Notices, driver: str | None = None) -> None:
        if parallel < 1:
            raise ValueError("parallel must be at least 1")
        self.pool = pool
        self.engine = engine
        self.parallel = parallel
        self.on_event = on_event
        self.notices = notices
        self.results = {t.index: TaskResult(t) for t in tasks}
        self._pending: deque[tuple[Job, frozenset[str]]] = deque(
            (Job(t, 1, run_id_for(t, 1), driver), frozenset()) for t in tasks)
        self._running: dict[asyncio.Task[tuple[Outcome, bool]], tuple[Job, Phone]] = {}
        self.stopping: str | None = None

    def stop(self, reason: str, signum: int | None = None) -> None:
        """No new run starts; the runs in flight are interrupted (each ends FAIL with ``reason``)."""
        if self.stopping is None:
            self.stopping = reason
        self.engine.interrupt(reason, signum)

    def abandon(self) -> None:
        """Stop waiting for the runs in flight (a second Ctrl-C)."""
        self.engine.abandon()

    async def run(self) -> list[TaskResult]:
        """Run every task and return their results, in the tasks' order."""
        try:
            while True:
                self._start_what_can()
                if not self._running:
                    break
                done, _ = await asyncio.wait(self._running, return_when=asyncio.FIRST_COMPLETED)
                for finished in done:
                    self._ended(finished)
        finally:
            for task in self._running:
                task.cancel()
        for job, _ in self._pending:
            result = self.results[job.task.index]
            why = f"stopped: {self.stopping}" if self.stopping else "no phone left in the pool"
            result.note = f"not retried: {why}" if result.attempts else why
        return [self.results[i] for i in sorted(self.results)]

    def _start_what_can(self) -> None:
        if self.stopping is not None:
            return
        index = 0
        while index < len(self._pending) and len(self._running) < self.parallel:
            job, avoid = self._pending[index]
            phone = self.pool.take(avoid)
            if phone is None:
                index += 1
                continue
            del self._pending[index]
            task = asyncio.ensure_future(self._attempt(job, phone))
            self._running[task] = (job, phone)

    async def _attempt(self, job: Job, phone: Phone) -> tuple[Outcome, bool]:
        """Run the job; when the phone was to blame, probe it. Returns the outcome and whether the
        phone is lost."""
        try:
            outcome = await self.engine.run(job, phone, self.on_event)
        except Exception as exc:  # noqa: BLE001 - an engine's fault ends this attempt, not the batch
            outcome = Outcome(job.task.index, job.attempt, phone.name, job.run_id, ERROR,
                              reason=f"internal error: {exc!r}")
        if outcome.device_error is None or outcome.interrupted:
            return outcome, False
        return outcome, not await self.engine.probe(phone)

    def _ended(self, finished: asyncio.Task[tuple[Outcome, bool]]) -> None:
        job, phone = self._running.pop(finished)
        outcome, lost = finished.result()
        attempt = Attempt(outcome, phone_lost=lost)
        if lost:
            self.pool.remove(phone, outcome.reason)
        else:
            self.pool.give_back(phone)
        blame = lost or outcome.device_error == "gone"
        if blame and job.attempt == 1 and self.stopping is None:
            attempt.retried = True
            self._pending.appendleft((job.retry(), frozenset({phone.name})))
        result = self.results[job.task.index]
        result.attempts.append(attempt)
        self.notices.attempt_ended(result, attempt)
        if lost:
            self.notices.notice(f"phone {phone.name} lost ({outcome.reason}); taken out of the pool, "
                                f"{len(self.pool.alive)} left")
        if attempt.retried:
            self.notices.notice(f"{job.task.label} will be run again on another phone (attempt 2)")
