"""The task service's runs: one task per phone at a time, a bounded waiting line, a stop for all.

A task asks for a phone by name or takes any free one. When none of the phones it can use is free it
waits in one first-come, first-served line (``queue_limit`` long; 0 refuses instead of waiting); a
phone that comes free goes to the first waiting task that can use it. Each run is the runner's (a
``Session`` in ``SessionRunner``); its start, steps and end go to ``on_event`` as they happen, whoever
is listening. ``stop`` ends the runs in flight as a signal ends ``run`` (FAIL with the reason, recorded)
and ends the waiting tasks unrun; ``cancel`` does the same to some tasks (those of a client that went
away); ``drain`` waits for the runs to be recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.session import RunControl, RunGroup
from ufo_mobile.fleet.devices import Phone
from ufo_mobile.fleet.pool import Pool
from ufo_mobile.host.aip.session import Emit, failed_payload
from ufo_mobile.settings import Settings

Runner = Callable[[Settings, Phone, RunControl, Emit], Awaitable[dict[str, Any]]]


@dataclass
class ServeTask:
    """One TASK: who sent it, how it correlates, what it runs, and where."""

    session_id: str
    client_id: str
    settings: Settings
    phone: str | None = None  # the phone asked for; None: any free phone
    request_id: str | None = None
    task_name: str | None = None
    ran_on: str | None = None  # the phone it runs (ran) on
    client_left: str | None = None  # its client went away meanwhile: "cancelled" or "kept running"

    @property
    def wants(self) -> str:
        return f"phone {self.phone}" if self.phone else "any phone"


class Refused(Exception):
    """The task cannot run or wait here; ``str()`` is one line saying why."""


EventSink = Callable[[ServeTask, str, dict[str, Any]], None]


class Runs:
    """The phones, the waiting line and the runs in flight. The service's event loop is its only user."""

    def __init__(self, phones: list[Phone], runner: Runner, on_event: EventSink, *, queue_limit: int) -> None:
        if queue_limit < 0:
            raise ValueError("queue_limit must be 0 or more")
        self.pool = Pool(phones)
        self.runner = runner
        self.on_event = on_event
        self.queue_limit = queue_limit
        self.waiting: list[ServeTask] = []
        self.running: dict[str, ServeTask] = {}  # session_id -> task
        self.stopping: str | None = None
        self._group = RunGroup()
        self._controls: dict[str, RunControl] = {}  # session_id -> the control of its run in flight
        self._flights: set[asyncio.Task[None]] = set()

    def known(self, session_id: str) -> bool:
        """Whether a task with this session id is running or waiting."""
        return session_id in self.running or any(t.session_id == session_id for t in self.waiting)

    def busy(self) -> dict[str, str]:
        """phone name -> the session running on it."""
        return {t.ran_on: t.session_id for t in self.running.values() if t.ran_on is not None}

    def submit(self, task: ServeTask) -> int:
        """Run ``task`` now (0) or put it in the waiting line (its 1-based place).

        Raises:
            Refused: the service is stopping, or nothing the task can use is free and the line is full.
        """
        if self.stopping is not None:
            raise Refused(f"the server is stopping ({self.stopping}): no new tasks")
        phone = self._take(task)
        if phone is not None:
            self._start(task, phone)
            return 0
        if len(self.waiting) >= self.queue_limit:
            line = ("--queue 0: tasks do not wait" if self.queue_limit == 0
                    else f"the waiting line is full ({self.queue_limit} tasks, --queue)")
            raise Refused(f"{self._busy_text(task)}, and {line}")
        self.waiting.append(task)
        return len(self.waiting)

    def _busy_text(self, task: ServeTask) -> str:
        busy = self.busy()
        if task.phone is not None:
            return f"phone {task.phone} is busy (session {busy.get(task.phone, '?')})"
        return f"every phone is busy ({len(busy)} running)"

    def _take(self, task: ServeTask) -> Phone | None:
        if task.phone is None:
            return self.pool.take()
        # take(avoid=...) gives a phone outside ``avoid`` only: avoiding every other phone asks for this one
        return self.pool.take(avoid={p.name for p in self.pool.phones if p.name != task.phone})

    def _start(self, task: ServeTask, phone: Phone) -> None:
        task.ran_on = phone.name
        self.running[task.session_id] = task
        flight = asyncio.ensure_future(self._fly(task, phone))
        self._flights.add(flight)
        flight.add_done_callback(self._flights.discard)

    async def _fly(self, task: ServeTask, phone: Phone) -> None:
        control = self._group.join()
        self._controls[task.session_id] = control
        try:
            end = await self.runner(task.settings, phone, control,
                                    lambda kind, payload: self.on_event(task, kind, payload))
        except Exception as exc:  # noqa: BLE001 - a runner's fault ends this task, never the service
            end = failed_payload(phone, f"internal error: {exc!r}")
        finally:
            self._group.leave(control)
            self._controls.pop(task.session_id, None)
            self.pool.give_back(phone)
            self.running.pop(task.session_id, None)
        self.on_event(task, "ended", end)
        self._start_waiting()

    def _start_waiting(self) -> None:
        if self.stopping is not None:
            return
        for task in list(self.waiting):
            phone = self._take(task)
            if phone is not None:
                self.waiting.remove(task)
                self._start(task, phone)

    def stop(self, reason: str, signum: int | None = None) -> None:
        """No new tasks; the runs in flight end FAIL with ``reason`` (recorded); the waiting ones end unrun."""
        self.stopping = self.stopping or reason
        self._group.interrupt(reason, signum)
        waiting, self.waiting = self.waiting, []
        for task in waiting:
            self.on_event(task, "ended", failed_payload(None, f"not run: the server stopped ({reason})"))

    def cancel(self, session_ids: set[str], reason: str) -> None:
        """End these tasks: a run in flight ends FAIL with ``reason`` (its step in flight cancelled and
        recorded, as ``stop`` ends it), a waiting task ends unrun."""
        for session_id in session_ids:
            control = self._controls.get(session_id)
            if control is not None:
                control.interrupt(reason)
        waiting = [t for t in self.waiting if t.session_id in session_ids]
        self.waiting = [t for t in self.waiting if t.session_id not in session_ids]
        for task in waiting:
            self.on_event(task, "ended", failed_payload(None, f"not run: {reason}"))

    def abandon(self) -> None:
        """Stop waiting for the runs in flight (a second signal); each still records why it ended."""
        self._group.abandon()

    async def drain(self) -> None:
        """Wait until every run in flight has ended and is recorded."""
        while self._flights:
            await asyncio.gather(*self._flights, return_exceptions=True)
