"""The Ray engine: the same jobs, run by Ray workers on the nodes that hold the phones.

Placement: a node advertises each phone attached to it as a custom resource ``phone:<name>`` with
capacity 1 (``ray start --resources "$(python -m ufo_mobile.fleet.resources)"`` on each node, or,
for the local instance this engine starts itself, ``ray.init(resources=...)`` from ``--devices``).
A job on a real phone asks for that resource (and no CPU: it waits on the phone and the model), so
Ray runs it where the phone is; a job on a simulated phone asks for one CPU (the phone is simulated
in the worker) and runs anywhere, each worker building its own ``SimPhone``.

A worker runs the job as the local engine does (``runner.run_job``) in a temporary log directory,
then sends the run directory back as a gzip'd tar (``archive.pack``), which the driver unpacks
under its own log directory. Progress events and a stop (Ctrl-C on the driver) travel through a
small actor, the ``Hub``: workers push events to it, the driver drains them; the driver sets a
stop there, and workers interrupt their run as ``run``'s first Ctrl-C would. Ray is imported
only here, and only when this engine is chosen (``pip install 'ufo-mobile[fleet]'``).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import tempfile
from pathlib import Path
from typing import Any

from ufo_mobile.core.session import RunControl
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.fleet.archive import pack, unpack
from ufo_mobile.fleet.devices import Phone, probe_blocking
from ufo_mobile.fleet.jobs import ERROR, Event, Job, Outcome
from ufo_mobile.fleet.runner import run_job
from ufo_mobile.fleet.scheduler import EventSink
from ufo_mobile.safe_text import printable

INSTALL_HINT = "the Ray engine needs Ray: pip install 'ufo-mobile[fleet]'"
POLL_SECONDS = 0.25  # how often the driver drains events and workers look for a stop
START_TIMEOUT = 300.0  # a job Ray has not started by then (its phone's node is gone) is given up
MAX_EVENTS = 10_000  # events the hub keeps for the driver (the oldest are dropped)


def import_ray() -> Any:
    """The ``ray`` module; a ``ConfigError`` saying how to install it when it is missing."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(INSTALL_HINT, key="--engine") from exc
    return ray


class Hub:
    """The actor between the driver and its workers (events up, a stop down)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.stop: tuple[str, int | None] | None = None
        self.abandoned = False

    def push(self, event: Event) -> None:
        """A worker's progress event, kept for the driver (the oldest dropped past ``MAX_EVENTS``)."""
        self.events.append(event)
        del self.events[:-MAX_EVENTS]

    def drain(self) -> list[Event]:
        """The events pushed since the last drain."""
        events, self.events = self.events, []
        return events

    def set_stop(self, reason: str, signum: int | None) -> None:
        """Ask the workers to interrupt their runs (the first reason stands)."""
        self.stop = self.stop or (reason, signum)

    def set_abandon(self) -> None:
        """Ask the workers to abandon their runs."""
        self.abandoned = True

    def control(self) -> tuple[tuple[str, int | None] | None, bool]:
        """What a worker looks for: the stop asked (reason, signal) if any, and whether to abandon."""
        return self.stop, self.abandoned


# --- the worker side ------------------------------------------------------------------------


async def _watch(hub: Any, control: RunControl) -> None:
    while True:
        stop, abandoned = await hub.control.remote()
        if stop is not None:
            control.interrupt(*stop)
        if abandoned:
            control.abandon()
        await asyncio.sleep(POLL_SECONDS)


async def _work(job: Job, phone: Phone, log_dir: Path, hub: Any) -> Outcome:
    control = RunControl()
    watcher = asyncio.ensure_future(_watch(hub, control))
    try:
        return await run_job(job, phone, log_dir, on_event=lambda event: hub.push.remote(event), control=control,
                             handle_signals=True)
    finally:
        watcher.cancel()


def run_in_worker(job: Job, phone: Phone, hub: Any) -> Outcome:
    """The body of the remote task: the run in a temporary log directory, sent back packed."""
    with tempfile.TemporaryDirectory(prefix="ufo-fleet-") as tmp:
        outcome = asyncio.run(_work(job, phone, Path(tmp), hub))
        if outcome.run_dir is not None and Path(outcome.run_dir).is_dir():
            outcome.archive = pack(Path(outcome.run_dir))
    return outcome


# --- the driver side ------------------------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    return printable(" ".join(f"{type(exc).__name__}: {exc}".split()), 300)


class RayEngine:
    """Jobs as Ray tasks. ``start`` (blocking) joins or starts Ray; ``close`` stops what it started."""

    name = "ray"

    def __init__(self, log_dir: Path, *, address: str | None = None, cpus: int | None = None,
                 probe_timeout: float = 10.0, start_timeout: float | None = START_TIMEOUT) -> None:
        self.log_dir = log_dir
        self.address = address
        self.cpus = cpus
        self.probe_timeout = probe_timeout
        self.start_timeout = start_timeout
        self._ray: Any = None
        self._started_here = False
        self._hub: Any = None
        self._run_remote: Any = None
        self._probe_remote: Any = None
        self._sinks: dict[tuple[int, int], EventSink] = {}
        self._begun: dict[tuple[int, int], asyncio.Event] = {}
        self._poller: asyncio.Task[None] | None = None

    # -- lifecycle (blocking, outside the event loop) --

    def start(self, phones: list[Phone] | None) -> list[Phone]:
        """Join the cluster at ``address`` (or start a local instance advertising ``phones``) and
        return the pool: ``phones``, each checked to be advertised by a node; with ``phones`` None,
        every phone the cluster advertises.

        Raises:
            ConfigError: Ray is not installed, cannot be reached, or a phone is on no node.
        """
        ray = self._ray = import_ray()
        try:
            if self.address is None:
                self._start_local(ray, phones or [])
            else:
                ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(f"cannot start Ray: {_one_line(exc)}", key="--address" if self.address else "--engine") \
                from exc
        try:
            pool = self._check_phones(ray, phones)
            self._hub = ray.remote(num_cpus=0)(Hub).remote()
            self._run_remote = ray.remote(max_retries=0)(run_in_worker)
            self._probe_remote = ray.remote(max_retries=0)(probe_blocking)
        except BaseException:
            self.close()
            raise
        return pool

    def _start_local(self, ray: Any, phones: list[Phone]) -> None:
        resources = {p.resource: 1.0 for p in phones if p.kind != "sim"}
        # Ray's services start in this process group: a Ctrl-C at the terminal would kill them under
        # the runs. They inherit these signals ignored; the driver passes a stop on through the hub.
        saved = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGHUP)}
        try:
            ray.init(num_cpus=self.cpus, resources=resources, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        finally:
            for signum, handler in saved.items():
                signal.signal(signum, handler)
        self._started_here = True

    def _check_phones(self, ray: Any, phones: list[Phone] | None) -> list[Phone]:
        advertised = sorted(k.removeprefix("phone:") for k in ray.cluster_resources() if k.startswith("phone:"))
        if phones is None:
            if not advertised:
                raise ConfigError("no Ray node advertises a phone: start each node with ray start --resources "
                                  "\"$(python -m ufo_mobile.fleet.resources)\", or name phones with --devices",
                                  key="--devices")
            return [Phone("adb", name) for name in advertised]
        missing = [p.name for p in phones if p.kind != "sim" and p.name not in advertised]
        if missing:
            raise ConfigError(f"no Ray node advertises {', '.join(missing)} (advertised: "
                              f"{', '.join(advertised) or 'none'})", key="--devices")
        return phones

    def close(self) -> None:
        """Stop polling, and shut down a Ray instance ``start`` started (a cluster joined is left running)."""
        if self._poller is not None:
            self._poller.cancel()
        if self._started_here and self._ray is not None:
            self._ray.shutdown()
            self._started_here = False

    # -- jobs --

    async def run(self, job: Job, phone: Phone, on_event: EventSink) -> Outcome:
        """Run ``job`` as a Ray task on the node that holds ``phone``; its run directory is brought back."""
        key = (job.task.index, job.attempt)
        self._sinks[key], self._begun[key] = on_event, asyncio.Event()
        if self._poller is None or self._poller.done():
            self._poller = asyncio.ensure_future(self._poll())
        options: dict[str, Any] = ({"num_cpus": 1} if phone.kind == "sim"
                                   else {"num_cpus": 0, "resources": {phone.resource: 1}})
        ref = self._run_remote.options(**options).remote(job, phone, self._hub)
        try:
            outcome: Outcome = await self._result(ref, key)
        except Exception as exc:  # noqa: BLE001 - the worker or its node died: the phone's fault as far as we know
            outcome = Outcome(job.task.index, job.attempt, phone.name, job.run_id, ERROR,
                              reason=f"the Ray worker was lost: {_one_line(exc)}", device_error="gone")
        finally:
            self._sinks.pop(key, None)
            self._begun.pop(key, None)
        if outcome.archive is not None:
            try:
                landed = await asyncio.to_thread(unpack, outcome.archive, self.log_dir, outcome.run_id)
            except RunWriteError as exc:  # the run happened; only its record is not here
                outcome.run_dir = None
                outcome.reason = f"{outcome.reason} (its run directory could not be brought back: {exc})".lstrip()
            else:
                outcome.run_dir, outcome.run_id = str(landed), landed.name
            outcome.archive = None
        return outcome

    async def _result(self, ref: Any, key: tuple[int, int]) -> Outcome:
        """The job's outcome; a job Ray does not start within ``start_timeout`` is cancelled."""
        pending = asyncio.ensure_future(self._await(ref))
        begun = asyncio.ensure_future(self._begun[key].wait())
        try:
            await asyncio.wait({pending, begun}, timeout=self.start_timeout, return_when=asyncio.FIRST_COMPLETED)
            if not pending.done() and not begun.done():
                self._ray.cancel(ref, force=True)
                raise TimeoutError(f"Ray did not start the job within {self.start_timeout or 0:g} s")
            return await pending
        finally:
            begun.cancel()
            if not pending.done():
                pending.cancel()

    @staticmethod
    async def _await(ref: Any) -> Outcome:
        result: Outcome = await ref
        return result

    async def _poll(self) -> None:
        """Hand the hub's events to each job's sink while jobs run. Should the hub fail, progress stops
        showing, and no job is given up for want of its start event."""
        try:
            while self._sinks:
                for event in await self._hub.drain.remote():
                    key = (event.task, event.attempt)
                    if event.kind == "start" and key in self._begun:
                        self._begun[key].set()
                    sink = self._sinks.get(key)
                    if sink is not None:
                        sink(event)
                await asyncio.sleep(POLL_SECONDS)
        except Exception:  # noqa: BLE001 - the hub is gone (its node died): the runs go on without it
            self.start_timeout = None
            for begun in self._begun.values():
                begun.set()

    async def probe(self, phone: Phone) -> bool:
        """Whether ``phone`` still answers, asked on its own node."""
        options: dict[str, Any] = {"num_cpus": 0}
        if phone.kind != "sim":
            options["resources"] = {phone.resource: 1}
        ref = self._probe_remote.options(**options).remote(phone, self.probe_timeout)
        try:
            return bool(await asyncio.wait_for(self._await_bool(ref), self.probe_timeout * 2 + 5))
        except Exception:  # noqa: BLE001 - a probe that fails or never runs: the phone is not usable
            self._ray.cancel(ref, force=True)
            return False

    @staticmethod
    async def _await_bool(ref: Any) -> bool:
        return bool(await ref)

    def interrupt(self, reason: str, signum: int | None) -> None:
        """Stop the runs in flight after their step, each ending in FAIL with ``reason``."""
        if self._hub is not None:
            self._hub.set_stop.remote(reason, signum)

    def abandon(self) -> None:
        """Stop waiting for the runs in flight."""
        if self._hub is not None:
            self._hub.set_abandon.remote()
