"""The local engine over several processes of this machine: ``batch --processes N``.

One process runs every step's Python code one thread at a time, so a batch in one process tops
out near one core's worth of steps (about 16 steps a second on the fleet bench's emulated phones,
whatever the machine has). ``ProcessEngine`` spreads the phones over ``N`` worker processes, each
an ordinary ``LocalEngine`` on an asyncio loop of its own; the batch's process keeps the
scheduler, the pool, the progress view and the batch's record, and hands each job to the worker
that holds its phone (the phones are dealt out in turn, so each worker drives a fair share of
them, and a phone's runs always go to the same worker).

What crosses between the processes is what the Ray engine sends: ``Job`` and ``Phone`` down,
``Event`` and ``Outcome`` back, over one pipe per worker; the workers write their run directories
straight into the batch's folder, as the one-process engine does. A stop (Ctrl-C, SIGTERM, SIGHUP
on the batch's process) is passed on to every worker, which interrupts its runs after their step;
the workers ignore Ctrl-C and SIGHUP themselves (a terminal sends them to the whole group, and the
batch decides). A worker that dies ends each job it held as an ERROR naming it; a batch process
that dies leaves its workers a closed pipe: they interrupt their runs (each ends FAIL with a
reason, on disk) and exit.

Each worker is a fresh interpreter (``spawn``): about half a second to start, made before the batch
is timed, and memory of its own (a worker holds about what a one-process batch over its phones
holds).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ufo_mobile.errors import ConfigError
from ufo_mobile.fleet.devices import Phone, probe
from ufo_mobile.fleet.jobs import ERROR, Job, Outcome
from ufo_mobile.fleet.scheduler import EventSink

START_SECONDS = 60.0  # how long a worker may take to import the runtime and say it is ready
GONE = "the batch process is gone"  # the reason a worker's runs end with when the batch's process died
CLOSE_SECONDS = 10.0  # how long ``close`` waits for a worker to end before ending it


class ProcessEngine:
    """Runs jobs in ``processes`` worker processes; run directories go straight into ``log_dir``."""

    name = "local"

    def __init__(self, log_dir: Path, phones: list[Phone], processes: int, *, probe_timeout: float = 10.0) -> None:
        if processes < 2:
            raise ValueError("a ProcessEngine needs at least two processes (one is the LocalEngine)")
        self.log_dir = log_dir
        self.probe_timeout = probe_timeout
        self.workers: list[_Worker] = []
        try:
            for number in range(processes):
                self.workers.append(_Worker(log_dir, number + 1))
        except BaseException:
            self.close()
            raise
        self._holder = {phone.name: self.workers[n % processes] for n, phone in enumerate(phones)}

    async def run(self, job: Job, phone: Phone, on_event: EventSink) -> Outcome:
        """Run ``job`` on ``phone`` in the worker that holds the phone; how it ended."""
        worker = self._holder.get(phone.name)
        if worker is None or worker.gone:  # a phone new to the batch, or its worker died: the live
            alive = [w for w in self.workers if not w.gone]  # worker with the fewest phones takes it
            if alive:
                held = list(self._holder.values())
                worker = self._holder[phone.name] = min(alive, key=held.count)
        assert worker is not None
        return await worker.run(job, phone, on_event)

    async def probe(self, phone: Phone) -> bool:
        """Whether ``phone`` still answers (within ``probe_timeout`` seconds)."""
        return await probe(phone, self.probe_timeout)

    def interrupt(self, reason: str, signum: int | None) -> None:
        """Stop the runs in flight after their step, each ending in FAIL with ``reason``."""
        for worker in self.workers:
            worker.send(("interrupt", reason, signum))

    def abandon(self) -> None:
        """Stop waiting for the runs in flight."""
        for worker in self.workers:
            worker.send(("abandon",))

    def close(self) -> None:
        """Ask every worker to end, and wait for them (ending any that has not after ``CLOSE_SECONDS``);
        then stop the resource tracker that starting them started, so that the batch leaves no process
        behind when it exits (left alone, it ends only once it notices the batch is gone)."""
        for worker in self.workers:
            worker.send(("close",))
        for worker in self.workers:
            worker.join()
        if self.workers:
            _stop_resource_tracker()


class _Worker:
    """The batch's side of one worker process: its pipe, and the jobs it is running."""

    def __init__(self, log_dir: Path, number: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.number = number
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=serve, args=(theirs, str(log_dir)), name=f"ufo-batch-{number}",
                                       daemon=True)
        self.process.start()
        theirs.close()
        # ready before the batch starts: its imports are not paid by the first runs, and a worker that
        # cannot start is a batch that does not start
        if not self.conn.poll(START_SECONDS) or self._ready() != ("ready",):
            self.process.kill()
            self.process.join()
            raise ConfigError(f"worker process {number} did not start (exit code {self.process.exitcode})",
                              key="--processes")
        self._jobs: dict[int, tuple[Future[Outcome], EventSink, Job, Phone]] = {}
        self._next = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._send_lock = threading.Lock()
        self.gone = False  # its process ended (seen by the pipe's reader)

    def _ready(self) -> tuple[Any, ...] | None:
        try:
            return tuple(self.conn.recv())
        except (EOFError, OSError):
            return None

    def send(self, message: tuple[Any, ...]) -> None:
        """``message`` to the worker (nothing when it is gone)."""
        with self._send_lock:
            if self.gone:
                return
            try:
                self.conn.send(message)
            except (OSError, ValueError):  # its end is closed: the reader says why
                pass

    async def run(self, job: Job, phone: Phone, on_event: EventSink) -> Outcome:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            threading.Thread(target=self._read, name=f"ufo-batch-{self.number}-pipe", daemon=True).start()
        self._next += 1
        key, done = self._next, Future[Outcome]()
        if self.gone:
            return self._lost(job, phone)
        self._jobs[key] = (done, on_event, job, phone)
        try:
            self.send(("run", key, job, phone))
            return await asyncio.wrap_future(done)
        finally:
            self._jobs.pop(key, None)

    def _lost(self, job: Job, phone: Phone) -> Outcome:
        return Outcome(job.task.index, job.attempt, phone.name, job.run_id, ERROR, reason=self._why())

    def _why(self) -> str:
        return f"the batch's worker process {self.number} ended (exit code {self.process.exitcode})"

    def _read(self) -> None:
        """The pipe's reading thread: events and outcomes handed to the loop, until the worker ends."""
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                break
            self._call(self._deliver, message)
        self.process.join(CLOSE_SECONDS)
        self._call(self._ended)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the batch's loop is closed: nobody is waiting any more
            pass

    def _deliver(self, message: tuple[Any, ...]) -> None:
        kind, key, payload = message
        held = self._jobs.get(key)
        if held is None:
            return
        done, on_event, _, _ = held
        if kind == "event":
            on_event(payload)
        elif not done.done():
            done.set_result(payload)

    def _ended(self) -> None:
        with self._send_lock:
            self.gone = True
        for done, _, job, phone in list(self._jobs.values()):
            if not done.done():
                done.set_result(self._lost(job, phone))

    def join(self) -> None:
        self.process.join(CLOSE_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _stop_resource_tracker() -> None:
    """Stop this process's multiprocessing resource tracker (``spawn`` starts one with the first worker;
    the workers here share no semaphores or memory, so it tracks nothing). It is started again if
    anything needs it later. ``_stop`` is the standard library's own (private) way, in Python 3.11 to
    3.13; where it is missing the tracker ends by itself, once it notices the batch is gone."""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        stop()


def serve(conn: Connection, log_dir: str) -> None:
    """A worker process: run the jobs the batch sends until it says close (or its pipe closes)."""
    for signum in (signal.SIGINT, signal.SIGHUP):  # a terminal's, sent to the whole group: the batch's
        signal.signal(signum, signal.SIG_IGN)      # process decides, and tells this one
    asyncio.run(_serve(conn, Path(log_dir)))


async def _serve(conn: Connection, log_dir: Path) -> None:
    from ufo_mobile.fleet.local import LocalEngine  # the whole runtime: imported in the worker only

    engine = LocalEngine(log_dir)
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
    send_lock = threading.Lock()

    def read() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                message = ("gone",)
            loop.call_soon_threadsafe(inbox.put_nowait, message)
            if message[0] in ("gone", "close"):
                return

    def send(message: tuple[Any, ...]) -> None:
        with send_lock:
            try:
                conn.send(message)
            except (OSError, ValueError):  # the batch's process is gone: the reader ends the worker
                pass

    async def one(key: int, job: Job, phone: Phone) -> None:
        try:
            outcome = await engine.run(job, phone, lambda event: send(("event", key, event)))
        except Exception as exc:  # noqa: BLE001 - reported as the job's outcome, as the scheduler would
            outcome = Outcome(job.task.index, job.attempt, phone.name, job.run_id, ERROR,
                              reason=f"internal error: {exc!r}")
        send(("done", key, outcome))

    threading.Thread(target=read, name="ufo-batch-pipe", daemon=True).start()
    send(("ready",))
    runs: set[asyncio.Task[None]] = set()
    while True:
        message = await inbox.get()
        kind = message[0]
        if kind == "run":
            run = asyncio.ensure_future(one(*message[1:]))
            runs.add(run)
            run.add_done_callback(runs.discard)
        elif kind == "interrupt":
            engine.interrupt(message[1], message[2])
        elif kind == "abandon":
            engine.abandon()
        else:  # "close", or "gone": the batch's process ended without closing
            if runs:
                if kind == "gone":
                    engine.interrupt(GONE, None)
                await asyncio.wait(runs)
            return
