"""A whole batch: load the tasks, find the phones, run, and write the batch's record.

``prepare`` does everything that can fail for the user's input (task files, ``--devices``, the
log directory, Ray) before any run starts, each as a ``ConfigError``; ``BatchRun.execute`` then
runs the batch under signal handling (the first Ctrl-C, SIGTERM or SIGHUP stops new runs and
interrupts those in flight, which end FAIL "interrupted" as under ``run``; a second stops waiting;
a third kills at once) and writes ``batch.jsonl`` (as attempts end), ``batch.html`` and
``batch.json``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ufo_mobile.core.session import install_stop_signals
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.fleet import results
from ufo_mobile.fleet.devices import Phone, Source, parse_devices, resolve, unresolved
from ufo_mobile.fleet.jobs import Task
from ufo_mobile.fleet.local import LocalEngine
from ufo_mobile.fleet.pool import Pool
from ufo_mobile.fleet.processes import ProcessEngine
from ufo_mobile.fleet.progress import PlainView
from ufo_mobile.fleet.ray_engine import RayEngine
from ufo_mobile.fleet.scheduler import DONE, Attempt, Batch, Engine, TaskResult
from ufo_mobile.settings import load_settings

DEFAULT_DEVICES = "sim:1"


@dataclass
class BatchOptions:
    """What ``python -m ufo_mobile batch`` was asked for: the task files and the options of the command."""

    tasks: list[Path]
    devices: str | None = None  # None: sim:1 (local), or every phone the Ray nodes advertise (--address)
    parallel: int | None = None  # None: one run per phone
    processes: int = 1  # the local engine's processes (processes.py); more than the phones is the phones
    log_dir: Path = Path("logs")
    engine: str = "local"  # or "ray"
    address: str | None = None  # a Ray cluster to join; None: a local instance started for the batch
    cpus: int | None = None  # CPUs of that local instance (None: all)
    adb_port: int | None = None  # the local adb server's port
    driver: str | None = None  # adb or u2 for real phones
    config: Path | None = None  # defaults file for every task
    max_steps: int | None = None
    batch_id: str | None = None


def task_files(paths: list[Path]) -> list[Path]:
    """The task files: each file as given, each folder's ``*.yaml`` and ``*.yml`` (sorted; its
    ``default.yaml`` is the defaults, not a task)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.name != "default.yaml")
            if not found:
                raise ConfigError("the folder has no task files (*.yaml)", path=str(path))
            files += found
        else:
            files.append(path)
    if not files:
        raise ConfigError("give at least one task file", key="TASKS")
    return files


def load_tasks(options: BatchOptions) -> list[Task]:
    """Every task file loaded as ``run`` loads it (a bad one is a ``ConfigError`` naming it)."""
    overrides = {"limits": {"max_steps": options.max_steps}} if options.max_steps is not None else {}
    tasks = []
    for index, path in enumerate(task_files(options.tasks), start=1):
        if not path.is_file():
            raise ConfigError("no such task file", path=str(path))
        settings = load_settings(path, config_path=options.config, overrides=overrides)
        tasks.append(Task(index, str(path.resolve()), str(options.config.resolve()) if options.config else None,
                          settings.task.name or path.stem, settings.task.text, overrides))
    return tasks


def new_batch_id() -> str:
    """``batch-20261121-143005-3fa2``: sortable and unique."""
    return f"batch-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def make_batch_dir(log_dir: Path, batch_id: str) -> Path:
    """Create ``log_dir/batch_id``; one that exists, or cannot be made, is a ``ConfigError``."""
    path = log_dir / batch_id
    try:
        path.mkdir(parents=True)
    except FileExistsError as exc:
        raise ConfigError(f"{path} already exists", key="--batch-id") from exc
    except OSError as exc:
        raise ConfigError(f"cannot create the batch directory {path}: {exc.strerror}", key="--log-dir") from exc
    return path


@dataclass
class Prepared:
    """A batch ready to run (``prepare``): its tasks, phones, engine and record."""

    tasks: list[Task]
    phones: list[Phone]
    engine: Engine
    info: results.BatchInfo


def prepare(options: BatchOptions) -> Prepared:
    """Tasks loaded, phones found, the engine ready and the batch directory made; nothing has run.
    The caller closes ``engine`` (a Ray instance started here is stopped then).

    Raises:
        ConfigError: a task file, ``--devices``, ``--parallel``, the log directory or Ray.
    """
    if options.parallel is not None and options.parallel < 1:
        raise ConfigError("must be at least 1", key="--parallel")
    if options.processes < 1:
        raise ConfigError("must be at least 1", key="--processes")
    if options.engine == "ray" and options.processes != 1:
        raise ConfigError("--processes is for the local engine (Ray places its own workers)", key="--processes")
    if options.engine == "local" and (options.address or options.cpus):
        raise ConfigError("--address and --cpus are for --engine ray", key="--address" if options.address else "--cpus")
    if options.address and options.cpus:
        raise ConfigError("--cpus sizes the local Ray instance; a cluster (--address) has its own", key="--cpus")
    tasks = load_tasks(options)
    sources = parse_devices(options.devices) if options.devices is not None else None
    batch_id = options.batch_id or new_batch_id()
    engine: Engine
    processes = 1
    if options.engine == "ray":
        engine = RayEngine(options.log_dir / batch_id, address=options.address, cpus=options.cpus)
        phones = engine.start(_ray_phones(options, sources))
    else:
        phones = asyncio.run(resolve(sources or parse_devices(DEFAULT_DEVICES), adb_port=options.adb_port))
        processes = min(options.processes, len(phones))
        engine = (ProcessEngine(options.log_dir / batch_id, phones, processes) if processes > 1
                  else LocalEngine(options.log_dir / batch_id))
    try:
        batch_dir = make_batch_dir(options.log_dir, batch_id)
    except BaseException:
        engine.close()
        raise
    parallel = min(options.parallel or len(phones), len(phones))
    info = results.BatchInfo(batch_id, batch_dir, engine.name, [p.name for p in phones], parallel, processes)
    return Prepared(tasks, phones, engine, info)


def _ray_phones(options: BatchOptions, sources: list[Source] | None) -> list[Phone] | None:
    """The phones to check against (or, for a local instance, to advertise on) the Ray cluster."""
    if options.address is not None:  # the phones are on the nodes: nothing to resolve from here
        return unresolved(sources) if sources is not None else None
    return asyncio.run(resolve(sources or parse_devices(DEFAULT_DEVICES), adb_port=options.adb_port))


class BatchRun:
    """Runs a prepared batch, with ``view`` showing progress (a ``PlainView`` or ``LiveView``)."""

    def __init__(self, prepared: Prepared, view: PlainView) -> None:
        self.prepared = prepared
        self.view = view
        self.info = prepared.info
        self.signal: int | None = None
        self.record_error: str | None = None
        self.batch = Batch(prepared.tasks, Pool(prepared.phones), prepared.engine, parallel=self.info.parallel,
                           on_event=view.event, notices=self)

    # Notices: each ended attempt goes to batch.jsonl at once, then to the view.
    def attempt_ended(self, result: TaskResult, attempt: Attempt) -> None:
        """Record the attempt in ``batch.jsonl``, then show it."""
        try:
            results.append_attempt(self.info, result, attempt)
        except RunWriteError as exc:
            self.record_error = self.record_error or str(exc)
        self.view.attempt_ended(result, attempt)

    def notice(self, line: str) -> None:
        """Show a line to the user."""
        self.view.notice(line)

    async def execute(self) -> list[TaskResult]:
        """Run the batch under signal handling, write its record, and return every task's result."""
        started = time.monotonic()
        restore = self._install_signals()
        try:
            with self.view:
                found = await self.batch.run()
        finally:
            restore()
            self.info.duration_seconds = round(time.monotonic() - started, 3)
            self.info.stopped = self.batch.stopping
            self.info.removed = dict(self.batch.pool.removed)
        try:
            results.write_html(self.info, found)
            results.write_summary_json(self.info, found)
        except RunWriteError as exc:
            self.record_error = self.record_error or str(exc)
        return found

    def _install_signals(self) -> Callable[[], None]:
        def stop(reason: str, signum: int) -> None:
            self.signal = signum
            self.view.notice(f"{reason}: no new runs; stopping the runs in flight (again to stop waiting for them)")
            self.batch.stop(reason, signum)

        return install_stop_signals(stop, lambda signum: self.batch.abandon())


def exit_code(found: list[TaskResult], signum: int | None) -> int:
    """The command's exit status: 0 when every task finished, 1 otherwise, 128 + the signal that stopped it."""
    if signum is not None:
        return 128 + signum
    return 0 if all(r.state == DONE for r in found) else 1


__all__ = ["BatchOptions", "BatchRun", "Engine", "Prepared", "exit_code", "prepare"]
