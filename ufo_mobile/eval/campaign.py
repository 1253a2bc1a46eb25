"""Run a suite: every task (``repeat`` times, each with its own seeded variant) on fresh simulated phones.

``plan`` lists the runs; ``Campaign.run`` runs them, ``parallel`` at a time (each on its own
in-process phone), and hands each finished run's record to ``on_record`` as soon as it is judged,
so the caller can write it before the next one ends, and tells ``on_event`` (a ``RunEvent``) when
a run starts, ends a step and ends, for a live view of the runs in flight. ``Campaign.stop``
(Ctrl-C, SIGTERM) interrupts the runs in flight, which record their step and end in FAIL as a
single run does, and starts no more: the records of every run that ended are kept. A write that
fails (a full disk: a run's directory, or the caller's records, ``cannot_write``) stops the
campaign the same way: every later run would fail for the disk, not for the agent.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.session import RunGroup
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.eval.runner import give_up_model, oracle_model, run_task
from ufo_mobile.eval.spec import SuiteTask, TaskInstance
from ufo_mobile.settings import Settings
from ufo_mobile.sim.phone.simphone import SimPhone

#: The built-in models ``eval --model`` knows besides a real one: the tasks' own oracle scripts,
#: and a model that gives up at once (every feasible task must fail its check with it).
BuiltinModel = Literal["oracle", "give-up"]
BUILTIN_MODELS: tuple[BuiltinModel, ...] = ("oracle", "give-up")


@dataclass(frozen=True)
class EvalRun:
    """One planned run: a task's variant (for its seed), the ``repeat``-th run of the task (from 0)."""

    instance: TaskInstance
    repeat: int


@dataclass(frozen=True)
class RunEvent:
    """A run of the plan (``index``) started, ended a step (``steps``: of its budget, so far) or ended."""

    kind: Literal["start", "step", "end"]
    index: int
    steps: int = 0


def plan(tasks: Sequence[SuiteTask], *, repeat: int = 1, seed: int = 0) -> list[EvalRun]:
    """Each task ``repeat`` times, the ``r``-th run with the variant of seed ``seed + r``, task by task.

    Raises:
        ConfigError: a variant does not render (a placeholder, the check or the oracle script).
    """
    return [EvalRun(task.instantiate(seed + r), r) for task in tasks for r in range(repeat)]


class Campaign:
    """The runs of one evaluation, and the sessions in flight (to interrupt them)."""

    def __init__(self, runs: Sequence[EvalRun], *, settings: Settings, log_dir: Path,
                 builtin: BuiltinModel | None = None, parallel: int = 1,
                 on_record: Callable[[dict[str, Any]], None] | None = None,
                 on_event: Callable[[RunEvent], None] | None = None,
                 driver: Callable[[SimPhone], DeviceDriver] = SimDriver) -> None:
        if parallel < 1:
            raise ValueError("parallel must be at least 1")
        self.runs = list(runs)
        self.settings = settings
        self.log_dir = log_dir
        self.builtin = builtin
        self.parallel = parallel
        self.on_record = on_record
        self.on_event = on_event or (lambda event: None)
        self.driver = driver
        self.runs_in_flight = RunGroup()
        self.stopped: str | None = None  # why the campaign was stopped, if it was
        self.stop_signal: int | None = None
        self.write_error: RunWriteError | None = None  # the first write that failed, if one did

    @property
    def model_label(self) -> str:
        """The model as the results name it: ``oracle``, ``give-up``, ``openai:gpt-4o``, ``scripted:<file>``."""
        if self.builtin is not None:
            return self.builtin
        model = self.settings.model
        return f"{model.kind}:{model.name}" if model.kind != "scripted" else f"scripted:{model.script}"

    def model_for(self, instance: TaskInstance) -> ChatModel | None:
        """The run's model: a built-in one, or ``None`` for the session to build from the settings."""
        fmt = self.settings.model.reply_format
        if self.builtin == "oracle":
            return oracle_model(instance, self.settings.mode, fmt, self.settings.perception.source)
        if self.builtin == "give-up":
            return give_up_model(self.settings.mode, fmt)
        return None

    def _settings_for(self, instance: TaskInstance) -> Settings:
        """The oracle's runs name its script in their settings (``run.json``), as a scripted run does."""
        script = instance.task.oracle_path
        if self.builtin != "oracle" or script is None:
            return self.settings
        return self.settings.model_copy(update={"model": self.settings.model.model_copy(update={"script": script})})

    def stop(self, reason: str = "interrupted", signal: int | None = None) -> None:
        """Interrupt the runs in flight (each records its step and ends in FAIL) and start no more."""
        if self.stopped is None:
            self.stopped, self.stop_signal = reason, signal
        self.runs_in_flight.interrupt(reason, signal)

    def cannot_write(self, error: RunWriteError) -> None:
        """A write failed (a full disk, a read-only one): remember the first, and stop the campaign."""
        if self.write_error is None:
            self.write_error = error
        why = os.strerror(error.errno) if error.errno is not None else str(error)
        self.stop(f"cannot write the evaluation's directory: {why}")

    def abandon(self) -> None:
        """Stop waiting for the runs in flight (a second Ctrl-C): each still records why it ended."""
        self.runs_in_flight.abandon()

    async def run(self) -> list[dict[str, Any]]:
        """Run every planned run (until stopped); the records of those that ran, in plan order."""
        gate = asyncio.Semaphore(self.parallel)
        records: dict[int, dict[str, Any]] = {}

        async def one(index: int, planned: EvalRun) -> None:
            async with gate:
                if self.stopped is not None:
                    return
                record = await self._run_one(index, planned)
                if record is None:
                    return
                records[index] = record
                if self.on_record is not None:
                    self.on_record(record)

        await asyncio.gather(*(one(i, r) for i, r in enumerate(self.runs)))
        return [records[i] for i in sorted(records)]

    async def _run_one(self, index: int, planned: EvalRun) -> dict[str, Any] | None:
        """The run's record; ``None`` when the run could not even record its start or its end."""
        instance = planned.instance
        control = self.runs_in_flight.join()

        def stepped(step: StepContext) -> None:
            self.on_event(RunEvent("step", index, step.shared.steps_used))

        self.on_event(RunEvent("start", index))
        try:
            outcome = await run_task(instance, log_dir=self.log_dir, model=self.model_for(instance),
                                     settings=self._settings_for(instance), driver=self.driver,
                                     on_start=control.started, on_step=stepped)
        except RunWriteError as exc:  # the run's final run.json did not fit: nothing to judge it by
            self.cannot_write(exc)
            return None
        except ConfigError as exc:  # its run directory could not be made (a full disk), or a real config error
            if not isinstance(exc.__cause__, RunWriteError):
                raise
            self.cannot_write(exc.__cause__)
            return None
        finally:
            self.runs_in_flight.leave(control)
            self.on_event(RunEvent("end", index))
        if outcome.write_failure is not None:
            self.cannot_write(outcome.write_failure)
        return {**outcome.to_json(), "repeat": planned.repeat, "model": self.model_label,
                "format": self.settings.model.reply_format, "mode": self.settings.mode}
