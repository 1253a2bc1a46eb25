"""``python -m ufo_mobile batch TASKS... [--devices SPEC] [--parallel N] [--processes N] [--log-dir DIR]
[--engine local|ray]``: many tasks over a pool of phones, one task per phone at a time.

The batch's directory (``DIR/batch-<time>-<random>/``) holds one run directory per attempt
(``t03-<task>-a1``; ``-a2`` for the retry after a lost phone), ``batch.jsonl`` (one line per
attempt), ``batch.json`` and ``batch.html`` (linking every run's ``report.html``). Exit 0 when every
task finished, 1 otherwise, 2 for a usage or configuration error, 128+N when stopped by signal N.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ufo_mobile.cli.common import EXIT_FAIL, err
from ufo_mobile.safe_text import printable
from ufo_mobile.shipped import task_path

if TYPE_CHECKING:
    from ufo_mobile.fleet.batch import BatchOptions



def add_batch_parser(sub: Any) -> None:
    """The ``batch`` command's arguments (``sub``: the command line's subparsers)."""
    from ufo_mobile.cli.common import port_number, positive, run_id

    batch = sub.add_parser(
        "batch", help="run many task files over a pool of phones (local asyncio, or Ray)",
        description="Run TASKS over a pool of phones, one task per phone at a time. A run that ends because its "
                    "phone was lost is run once more on another phone, and the phone leaves the pool. Exit 0 when "
                    "every task finished, 1 otherwise.")
    batch.add_argument("tasks", type=Path, nargs="+", metavar="TASK",
                       help="task files (YAML, as for run), shipped task names, or folders of them")
    batch.add_argument("--devices", metavar="SPEC",
                       help="the phones, comma-separated: sim:N (N simulated phones), SERIAL (local adb server), "
                            "HOST:PORT (adb over TCP, connected as 'adb connect' does), SERIAL@HOST:PORT (a phone "
                            "of a remote adb server), @HOST:PORT (all of its phones), @ (all phones of the local "
                            "adb server), wda:URL (an iPhone's WebDriverAgent). Default sim:1; with --engine ray "
                            "--address, every phone the nodes advertise")
    batch.add_argument("--parallel", type=positive, metavar="N",
                       help="at most N runs at a time (default: one per phone)")
    batch.add_argument("--log-dir", type=Path, default=Path("logs"), metavar="DIR",
                       help="where the batch's directory goes (default logs/)")
    batch.add_argument("--processes", type=positive, default=1, metavar="N",
                       help="with the local engine: spread the phones over N worker processes of this machine "
                            "(one process runs one core's worth of steps; default 1: every run in this process)")
    batch.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: every run in this process (asyncio, the default); ray: runs as Ray tasks on "
                            "the nodes holding the phones (pip install 'ufo-mobile[fleet]')")
    batch.add_argument("--address", metavar="ADDR",
                       help="with --engine ray: the cluster to join (e.g. auto, or HOST:6379); default: start a "
                            "local Ray instance for the batch and stop it afterwards")
    batch.add_argument("--cpus", type=positive, metavar="N",
                       help="with --engine ray and no --address: CPUs of the local Ray instance (default: all)")
    batch.add_argument("--adb-port", type=port_number, metavar="PORT",
                       help="the local adb server's port (default $ANDROID_ADB_SERVER_PORT or 5037)")
    batch.add_argument("--driver", choices=("adb", "u2"),
                       help="for real phones: plain adb or uiautomator2 (default: the task's, else adb)")
    batch.add_argument("--config", type=Path, metavar="FILE", help="defaults file for every task (as for run)")
    batch.add_argument("--max-steps", type=positive, metavar="N", help="override limits.max_steps of every task")
    batch.add_argument("--batch-id", type=run_id, metavar="ID",
                       help="name the batch's directory (default: batch-<time>-<random>)")
    batch.add_argument("--quiet", action="store_true", help="print only the summary")


def options_of(args: argparse.Namespace) -> BatchOptions:
    from ufo_mobile.fleet.batch import BatchOptions

    tasks = [task_path(path) for path in args.tasks]
    return BatchOptions(tasks=tasks, devices=args.devices, parallel=args.parallel, processes=args.processes,
                        log_dir=args.log_dir,
                        engine=args.engine, address=args.address, cpus=args.cpus, adb_port=args.adb_port,
                        driver=args.driver, config=args.config, max_steps=args.max_steps, batch_id=args.batch_id)


def run_batch(args: argparse.Namespace, out: TextIO) -> int:
    import asyncio

    # the fleet (and, for --engine ray, Ray) is imported only when a batch runs
    from ufo_mobile.cli.console import is_terminal
    from ufo_mobile.fleet.batch import BatchRun, exit_code, prepare
    from ufo_mobile.fleet.progress import Board, LiveView, PlainView, QuietView
    from ufo_mobile.fleet.results import summary_lines

    prepared = prepare(options_of(args))  # ConfigError: exit 2, nothing has run
    try:
        board = Board(prepared.tasks)
        view = (QuietView(board, out) if args.quiet else LiveView(board, out) if is_terminal(out)
                else PlainView(board, out))
        run = BatchRun(prepared, view)
        found = asyncio.run(run.execute())
    finally:
        prepared.engine.close()
    for line in summary_lines(run.info, found):
        print(line, file=out, flush=True)
    if run.record_error is not None:
        err(f"error: the batch's record is incomplete: {printable(run.record_error, 300)}")
        return EXIT_FAIL if run.signal is None else exit_code(found, run.signal)
    return exit_code(found, run.signal)
