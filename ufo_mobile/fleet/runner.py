"""Run one job on one phone: the function both engines call (in-process, or in a Ray worker).

The task file is loaded with the same loader as ``run``, with the phone's device settings and the
log directory laid over it; the run is an ordinary ``Session``: its run directory, ``run.json``,
steps and ``report.html`` are exactly a ``run``'s. The ``Outcome`` says how it ended and whether
the phone was to blame: the run failed because the device went away or stopped answering
(``device_error="gone"``) or a device command failed (``"command"``).

``TaskSettings`` keeps each task file's loaded settings for the batch (the local engine's runs
share them): a task run many times is read, merged and checked once, not once per run.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ufo_mobile.core import builder
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.session import RunControl, RunResult, Session
from ufo_mobile.core.trace.runs import read_steps
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.fleet.devices import Phone
from ufo_mobile.fleet.jobs import ERROR, Event, Job, Outcome, Task
from ufo_mobile.settings import Settings, load_settings

EventSink = Callable[[Event], None]

#: ``ctx.error`` prefixes (``TypeName: message``) of a device that went away or stopped answering.
GONE_ERRORS = ("DeviceDisconnectedError", "DeviceTimeoutError", "AdbUnavailableError")
COMMAND_ERRORS = ("DeviceCommandError", "DumpUnavailableError", "DeviceError")
CONNECT_FAILED = "cannot connect to the device"
ACTION_LIMIT = 120


def task_settings(task: Task) -> Settings:
    """The task file's settings, loaded as ``run`` loads them (before a phone is laid over them).

    Raises:
        ConfigError: the task file does not load (as ``run`` would say).
    """
    return load_settings(Path(task.file), config_path=Path(task.config) if task.config else None,
                         overrides=task.overrides)


def settings_for(task: Task, phone: Phone, log_dir: Path, driver: str | None = None, *,
                 loaded: TaskSettings | None = None) -> Settings:
    """The task's settings for a run on ``phone`` writing under ``log_dir`` (from ``loaded``, when
    given: the batch's settings already read).

    Raises:
        ConfigError: the task file does not load (as ``run`` would say).
    """
    base = loaded.get(task) if loaded is not None else task_settings(task)
    return builder.placed(base, phone.device_overrides(base.device.kind, driver), log_dir)


class TaskSettings:
    """Each task file's settings, loaded once and kept (settings are frozen: runs share them). A
    task file or defaults file (``--config``) that changed since (its size or modification time) is
    loaded again; a file that does not load is not kept, so every run of it says why."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str | None, str], tuple[tuple[int, ...], Settings]] = {}

    def get(self, task: Task) -> Settings:
        """``task``'s settings.

        Raises:
            ConfigError: the task file does not load.
        """
        key = (task.file, task.config, json.dumps(task.overrides, sort_keys=True, default=str))
        stamp = _stamp(task.file) + (_stamp(task.config) if task.config else ())
        kept = self._kept.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        settings = task_settings(task)
        self._kept[key] = (stamp, settings)
        return settings


def _stamp(path: str) -> tuple[int, ...]:
    """A file's size and modification time (nanoseconds); none for a file that cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


def device_error(result: RunResult, steps: list[dict[str, Any]]) -> str | None:
    """``"gone"`` when the run failed because the phone went away or stopped answering, ``"command"``
    when a device command failed, ``None`` when the phone had nothing to do with how it ended."""
    if result.ok or result.interrupted:
        return None
    if result.reason.startswith(CONNECT_FAILED):
        return "gone"
    last = steps[-1] if steps else {}
    error = str(last.get("error") or "")
    if error.startswith(GONE_ERRORS):
        return "gone"
    if error.startswith(COMMAND_ERRORS):
        return "command"
    return None


def _step_event(job: Job, phone: Phone, session: Session, step: StepContext) -> Event:
    redact = session.redactor.text
    action = redact(step.action.render())[:ACTION_LIMIT] if step.action else ""
    if step.result is not None:
        detail = ("ok " if step.result.success else "FAIL ") + redact(step.result.summary)
    else:
        detail = redact(step.reason)
    return Event("step", job.task.index, job.attempt, phone.name, step=step.step, status=str(step.status),
                 action=action, detail=detail[:ACTION_LIMIT])


def _outcome(job: Job, phone: Phone, result: RunResult, started: float) -> Outcome:
    steps = read_steps(result.run_dir)
    return Outcome(job.task.index, job.attempt, phone.name, result.run_dir.name, str(result.status),
                   reason=result.reason, answer=result.answer, steps=result.steps,
                   duration_seconds=round(time.monotonic() - started, 3), run_dir=str(result.run_dir),
                   device_error=device_error(result, steps), interrupted=result.interrupted, signal=result.signal,
                   prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                   cost_usd=result.cost_usd, node=socket.gethostname(), needs_person=result.needs_person)


async def run_job(job: Job, phone: Phone, log_dir: Path, *, on_event: EventSink | None = None,
                  control: RunControl | None = None, handle_signals: bool = False,
                  loaded: TaskSettings | None = None) -> Outcome:
    """Run ``job`` on ``phone``, its run directory under ``log_dir`` (its settings from ``loaded``,
    when given); never raises for the run's own failures (they are the outcome), only for
    cancellation."""
    emit = on_event or (lambda event: None)
    started = time.monotonic()
    failed = Outcome(job.task.index, job.attempt, phone.name, job.run_id, ERROR, node=socket.gethostname())
    emit(Event("start", job.task.index, job.attempt, phone.name))
    try:
        settings = settings_for(job.task, phone, log_dir, job.driver, loaded=loaded)
        session = Session(settings, run_id=job.run_id, handle_signals=handle_signals)
    except ConfigError as exc:
        failed.reason = f"the task does not load here: {exc}"
        emit(Event("end", job.task.index, job.attempt, phone.name, status=ERROR, detail=failed.reason))
        return failed
    session.on_start = control.started if control is not None else None
    session.on_step = lambda step: emit(_step_event(job, phone, session, step))
    try:
        result = await session.run()
    except (ConfigError, RunWriteError) as exc:  # no run, or one that could not record its end
        failed.reason, failed.run_dir = str(exc), str(session.run_dir) if session.run_dir else None
        failed.device_error = None
    except Exception as exc:  # noqa: BLE001 - a crash ends this job (run.json says so), not the batch
        failed.reason = f"internal error: {exc!r}"
        failed.run_dir = str(session.run_dir) if session.run_dir else None
    else:
        outcome = _outcome(job, phone, result, started)
        emit(Event("end", job.task.index, job.attempt, phone.name, step=outcome.steps, status=outcome.status,
                   detail=outcome.answer or outcome.reason))
        return outcome
    failed.duration_seconds = round(time.monotonic() - started, 3)
    failed.reason = session.redactor.text(failed.reason)
    emit(Event("end", job.task.index, job.attempt, phone.name, status=ERROR, detail=failed.reason))
    return failed
