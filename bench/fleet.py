"""Fleet benchmark: batch throughput over 1, 2, 4, 8 and 16 emulated phones, and where the host's CPU goes.

    python bench/fleet.py [--repeat N] [--tasks-per-phone K] [--model-latency S] [--profile NAME]
                          [--sizes 1,2,4,8,16] [--ports PORT] [--processes P]

Starts 16 emulated phones (``python -m ufo_mobile sim --port 0``, each a process of its own) behind a
private real adb server on 127.0.0.1, then runs the local engine's batch (``ufo_mobile.fleet``, the
code behind ``python -m ufo_mobile batch``) in this process over the first 1, 2, 4, 8 and 16 of them,
with the scripted model waiting S seconds (default 1) before every reply, a stand-in for a real
model's latency. Each batch has K tasks per phone (default 2): first the demo once per phone (turn
on Wi-Fi, 4 steps), then K-1 per phone of a task honest on a phone where the demo ran (is Wi-Fi on?
3 steps, the answer given once the screen shows the switch on). All phones are free when a batch
starts, so the scheduler hands each its own demo first; before every batch (not timed) every phone
gets a fresh state (``pm clear`` of the Settings app: Wi-Fi off, the home screen in front). So every
task is honest and should end FINISH; the table says how many did. A warm-up batch over all the
phones runs first (each phone's app labels are read from its APKs once, then cached). With
``--processes P`` each batch spreads its phones over P worker processes (``batch --processes``; at
most one per phone, so the 1-phone batch is the same either way); the workers are started before
the batch is timed, as the adb connections are, and their CPU is counted in the run's.

For each pool size it prints the median over N rounds of: steps per second, the scaling against one
phone (steps/s over the 1-phone steps/s), and the CPU time per step of each process on the host:
this run process (every thread: the agent loop, drawing the annotated screenshots, writing the run
directories, the adb client), the phones (all 16 processes, from ``/proc``) and the adb server (the
real adb binary, from ``/proc``), and their sum as a share of the host's cores. The time spent
waiting on the model is not CPU time. Two latencies say where a step's time goes as phones are
added: the median wall time of a step's observation (the ``data_collection`` phase, from the runs'
``steps.jsonl``), and how late the event loop that drives every run answers (the 95th percentile
of a 10 ms timer's lateness: work done on the loop, or the loop waiting for Python's lock, holds
up every run at once). Last come the issue's goals (1 -> 8 phones at least 7x, 1 -> 16 at least
14x) as ratios from this run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._phones import (  # noqa: E402
    cpu_seconds,
    reset_phone,
    start_phones,
    stop_phones,
    write_check_task,
    write_task,
)
from tests.adb_server import PrivateAdbServer  # noqa: E402
from ufo_mobile.core.trace.runs import read_steps  # noqa: E402
from ufo_mobile.fleet.batch import BatchOptions, BatchRun, prepare  # noqa: E402
from ufo_mobile.fleet.progress import Board, QuietView  # noqa: E402

SIZES = (1, 2, 4, 8, 16)
GOALS = {8: 7.0, 16: 14.0}  # the issue's: scaling from one phone to 8 and to 16
T = TypeVar("T")


@dataclass
class Round:
    """The batches of one pool size in one round, summed."""

    phones: int
    tasks: int = 0
    steps: int = 0
    finish: int = 0  # tasks whose run ended FINISH
    wall: float = 0.0
    cpu: dict[str, float] = field(default_factory=lambda: {"run": 0.0, "phones": 0.0, "adb": 0.0})
    observe: list[float] = field(default_factory=list)  # each step's data_collection wall time, s
    late: list[float] = field(default_factory=list)  # the event loop's lateness on a 10 ms timer, s

    @property
    def rate(self) -> float:
        return self.steps / self.wall if self.wall > 0 else 0.0

    def per_step_ms(self, who: str) -> float:
        return 1000 * self.cpu[who] / self.steps if self.steps else 0.0


@dataclass
class Host:
    """The processes of the bench: the adb server and the phones, by pid."""

    adb: str
    adb_port: int
    adb_pid: int
    phone_pids: list[int]
    serials: list[str]
    demo: Path  # the demo: turn on Wi-Fi
    check: Path  # honest after the demo: is Wi-Fi on?
    log_dir: Path
    processes: int = 1

    def cpu(self, workers: list[int]) -> dict[str, float]:
        return {"run": time.process_time() + sum(cpu_seconds(pid) for pid in workers),
                "phones": sum(cpu_seconds(pid) for pid in self.phone_pids), "adb": cpu_seconds(self.adb_pid)}


def one_batch(host: Host, size: int, per_phone: int, into: Round) -> None:
    """``per_phone`` tasks for each of the first ``size`` phones (the demo first), every phone fresh at
    the start; added to ``into``."""
    serials = host.serials[:size]
    for serial in serials:
        reset_phone(host.adb, host.adb_port, serial)
    tasks = [host.demo] * size + [host.check] * size * (per_phone - 1)
    options = BatchOptions(tasks=tasks, devices=",".join(serials), log_dir=host.log_dir, adb_port=host.adb_port,
                           processes=host.processes)
    prepared = prepare(options)  # adb connect, the checks and the workers: not part of the measure
    workers = [w.process.pid for w in getattr(prepared.engine, "workers", [])]
    try:
        run = BatchRun(prepared, QuietView(Board(prepared.tasks), sys.stderr))
        before, wall = host.cpu(workers), time.perf_counter()
        found = asyncio.run(timed_loop(run.execute(), into.late))
        wall, after = time.perf_counter() - wall, host.cpu(workers)
    finally:
        prepared.engine.close()
    last = [r.attempts[-1].outcome for r in found if r.attempts]
    into.tasks += len(found)
    into.steps += sum(o.steps for r in found for o in (a.outcome for a in r.attempts))
    into.finish += sum(o.status == "FINISH" for o in last)
    into.wall += wall
    for who in into.cpu:
        into.cpu[who] += after[who] - before[who]
    for outcome in (a.outcome for r in found for a in r.attempts):
        if outcome.run_dir:
            into.observe += [float(s["timings"].get("data_collection", 0.0)) for s in read_steps(Path(outcome.run_dir))]


async def timed_loop(work: Coroutine[Any, Any, T], late: list[float], tick: float = 0.01) -> T:
    """``work``'s result; meanwhile how late a ``tick``-second timer fires each time, into ``late``."""
    done = False

    async def ticker() -> None:
        while not done:
            asked = time.perf_counter()
            await asyncio.sleep(tick)
            late.append(max(0.0, time.perf_counter() - asked - tick))

    watch = asyncio.ensure_future(ticker())
    try:
        return await work
    finally:
        done = True
        await watch


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) > 1 else (values[0] if values else 0.0)


def report(rounds: dict[int, list[Round]], latency: float, profile: str) -> None:
    print(f"\nbatch throughput, local engine, emulated phones ({profile} profile) over a private adb server, "
          f"scripted model waiting {latency:g} s per reply; medians of {len(rounds[min(rounds)])} round(s)\n")
    print(f"{'':47}{'CPU ms per step':-^34}  {'CPU busy':-^17}  {'latency ms':-^16}")
    print(f"{'phones':>6}  {'tasks':>5}  {'FINISH':>7}  {'wall s':>6}  {'steps/s':>7}  {'scaling':>7}  "
          f"{'run':>6}  {'phones':>6}  {'adb':>6}  {'all':>6}  {'run':>7}  {'host':>7}  {'observe':>7}  {'loop':>6}")
    sizes = sorted(rounds)
    base = statistics.median(r.rate for r in rounds[sizes[0]])
    cores = os.cpu_count() or 1
    for size in sizes:
        rs = rounds[size]
        rate = statistics.median(r.rate for r in rs)
        each = {who: statistics.median(r.per_step_ms(who) for r in rs) for who in ("run", "phones", "adb")}
        run_load = statistics.median(r.cpu["run"] / r.wall for r in rs)
        load = statistics.median(sum(r.cpu.values()) / r.wall / cores for r in rs)
        print(f"{size:>6}  {rs[0].tasks:>5}  {min(r.finish for r in rs):>3}/{rs[0].tasks:<3}  "
              f"{statistics.median(r.wall for r in rs):>6.1f}  {rate:>7.2f}  {rate / base:>6.2f}x  "
              f"{each['run']:>6.1f}  {each['phones']:>6.1f}  {each['adb']:>6.1f}  {sum(each.values()):>6.1f}  "
              f"{100 * run_load:>6.0f}%  {100 * load:>6.0f}%  "
              f"{1000 * statistics.median(v for r in rs for v in r.observe or [0.0]):>7.0f}  "
              f"{1000 * statistics.median(p95(r.late) for r in rs):>6.0f}")
    print(f"\nFINISH: the fewest of the rounds. CPU busy: the run process's CPU time over the wall time (its "
          f"Python code runs one\nthread at a time: near 100% it is the limit), and all three kinds of "
          f"process together over the wall time of {cores} core(s).\nLatency: a step's observation "
          f"(median), and the event loop's lateness on a 10 ms timer (95th percentile: while the loop is "
          f"late,\nevery run of the batch waits).")
    for size, goal in GOALS.items():
        if size in rounds and size != sizes[0]:
            scaling = statistics.median(r.rate for r in rounds[size]) / base
            verdict = "met" if scaling >= goal else "not met"
            print(f"goal: {sizes[0]} -> {size} phones at least {goal:g}x: {scaling:.2f}x ({verdict})")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="rounds per pool size (medians)")
    parser.add_argument("--tasks-per-phone", type=int, default=2, metavar="K")
    parser.add_argument("--model-latency", type=float, default=1.0, metavar="S", help="seconds per scripted reply")
    parser.add_argument("--profile", default="pixel-14", help="the emulated phones' realism profile (see sim --help)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), metavar="N,N,...",
                        help="the pool sizes, the first the one the others scale against (default 1,2,4,8,16)")
    parser.add_argument("--processes", type=int, default=1, metavar="P",
                        help="each batch's worker processes (batch --processes; default 1: all in this process)")
    parser.add_argument("--ports", type=int, default=0, metavar="PORT",
                        help="the adb server on PORT and the phones on the ports after it (default: free ports)")
    args = parser.parse_args(argv)
    try:
        args.sizes = tuple(int(n) for n in args.sizes.split(","))
    except ValueError:
        parser.error("--sizes: comma-separated numbers of phones")
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    if args.repeat < 1 or args.tasks_per_phone < 1 or args.model_latency < 0:
        parser.error("--repeat and --tasks-per-phone must be at least 1, --model-latency at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    args = parse(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp, PrivateAdbServer(port=args.ports or None) as server:
        folder = Path(tmp)
        os.environ["HOME"] = str(folder)  # the phones' label caches stay in the temporary folder
        procs, serials = start_phones(max(args.sizes), args.profile, folder, args.ports + 1 if args.ports else 0)
        assert server._proc is not None  # the adb server's own process, for its CPU time
        host = Host(server.adb, server.port, server._proc.pid, [p.pid for p in procs], serials,
                    write_task(folder, args.model_latency), write_check_task(folder, args.model_latency),
                    folder / "logs", args.processes)
        try:
            for serial in serials:
                server.run("connect", serial)
            for serial in serials:
                server.run("-s", serial, "wait-for-device")
            warm = Round(len(serials))
            one_batch(host, len(serials), 1, warm)
            print(f"warm-up: {warm.finish}/{warm.tasks} tasks ended FINISH in {warm.wall:.1f} s", file=sys.stderr)
            rounds: dict[int, list[Round]] = {size: [] for size in args.sizes}
            for n in range(args.repeat):
                for size in args.sizes:
                    rounds[size].append(Round(size))
                    one_batch(host, size, args.tasks_per_phone, rounds[size][-1])
                print(f"  round {n + 1} of {args.repeat} done", file=sys.stderr)
        finally:
            stop_phones(procs)
            server.run("disconnect")
    report(rounds, args.model_latency, args.profile)
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
