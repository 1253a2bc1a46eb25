"""The local engine: every run a ``Session`` in this process, all on one asyncio loop; each task
file's settings are loaded once for the batch (``runner.TaskSettings``)."""

from __future__ import annotations

from pathlib import Path

from ufo_mobile.core.session import RunGroup
from ufo_mobile.fleet.devices import Phone, probe
from ufo_mobile.fleet.jobs import Job, Outcome
from ufo_mobile.fleet.memory import bound_malloc
from ufo_mobile.fleet.runner import TaskSettings, run_job
from ufo_mobile.fleet.scheduler import EventSink


class LocalEngine:
    """Runs jobs in-process; run directories go straight into ``log_dir``."""

    name = "local"

    def __init__(self, log_dir: Path, *, probe_timeout: float = 10.0) -> None:
        self.log_dir = log_dir
        self.probe_timeout = probe_timeout
        self._runs = RunGroup()
        self._settings = TaskSettings()
        bound_malloc()  # many runs in this process: two malloc arenas at most (memory.py)

    async def run(self, job: Job, phone: Phone, on_event: EventSink) -> Outcome:
        """Run ``job`` on ``phone`` in this process; how it ended."""
        control = self._runs.join()
        try:
            return await run_job(job, phone, self.log_dir, on_event=on_event, control=control,
                                 loaded=self._settings)
        finally:
            self._runs.leave(control)

    async def probe(self, phone: Phone) -> bool:
        """Whether ``phone`` still answers (within ``probe_timeout`` seconds)."""
        return await probe(phone, self.probe_timeout)

    def interrupt(self, reason: str, signum: int | None) -> None:
        """Stop the runs in flight after their step, each ending in FAIL with ``reason``."""
        self._runs.interrupt(reason, signum)

    def abandon(self) -> None:
        """Stop waiting for the runs in flight."""
        self._runs.abandon()

    def close(self) -> None:
        """Nothing to let go of: the runs were this process's."""
