"""Fleet benchmark: batch throughput over 1, 2, 4, 8 and 16 emulated phones, and the runtime's CPU per step.

    python bench/fleet.py [--repeat N] [--tasks-per-phone K] [--model-latency S] [--profile NAME] [--sizes 1,2,4,8,16]

Starts 16 emulated phones (``python -m ufo_mobile sim --port 0``, each a process of its own) behind a
private real adb server on 127.0.0.1, then runs the local engine's batch (``ufo_mobile.fleet``, the
code behind ``python -m ufo_mobile batch``) in this process over the first 1, 2, 4, 8 and 16 of them:
K tasks per phone (the demo task, 4 steps) with the scripted model waiting S seconds (default 1) before
every reply, a stand-in for a real model's latency. A warm-up batch over all the phones runs first
(each phone's app labels are read from its APKs once, then cached).

For each pool size it prints the median over N rounds of: steps per second, the scaling against one
phone (steps/s over the 1-phone steps/s), and the runtime's own CPU time per step: user+sys time of
this process during the batch (every thread: the agent loop, drawing the annotated screenshots,
writing the run directories, the adb client) over the steps done. The phones and the adb server are
other processes and are not counted; the time spent waiting on them and on the model is not CPU
time. From the CPU per step and the step rate of one phone follows how many phones one core drives.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import structlog
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adb_server import PrivateAdbServer  # noqa: E402
from ufo_mobile.fleet.batch import BatchOptions, BatchRun, prepare  # noqa: E402
from ufo_mobile.fleet.progress import Board, QuietView  # noqa: E402
from ufo_mobile.shipped import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1, 2, 4, 8, 16)
DEMO_SCRIPT = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"


@dataclass
class Round:
    phones: int
    tasks: int
    steps: int
    finished: int
    wall: float
    cpu: float

    @property
    def rate(self) -> float:
        return self.steps / self.wall if self.wall > 0 else 0.0

    @property
    def cpu_per_step_ms(self) -> float:
        return 1000 * self.cpu / self.steps if self.steps else 0.0


def start_phones(count: int, profile: str, folder: Path, first_port: int = 0) -> tuple[list[subprocess.Popen[str]],
                                                                                      list[str]]:
    """``count`` emulated phones on free ports, or on ``first_port`` and the ports after it."""
    procs: list[subprocess.Popen[str]] = []
    serials: list[str] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for n in range(count):
        port = str(first_port + n if first_port else 0)
        proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "sim", "--port", port, "--profile", profile],
                                cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "127.0.0.1:" not in line:
            raise SystemExit(f"the emulated phone did not start: {line!r}")
        serials.append("127.0.0.1:" + line.split("127.0.0.1:")[1].split(";")[0])
    return procs, serials


def write_task(folder: Path, latency: float) -> Path:
    script = yaml.safe_load(DEMO_SCRIPT.read_text())
    script.pop("modes", None)
    script["delay_seconds"] = latency
    (folder / "script.yaml").write_text(json.dumps(script))
    task = folder / "wifi.yaml"
    task.write_text("task: {name: wifi, text: Turn on Wi-Fi}\nmodel: {script: script.yaml}\nlimits: {max_steps: 8}\n")
    return task


def one_batch(task: Path, serials: list[str], tasks: int, adb_port: int, log_dir: Path) -> Round:
    options = BatchOptions(tasks=[task] * tasks, devices=",".join(serials), log_dir=log_dir, adb_port=adb_port)
    prepared = prepare(options)  # adb connect and the checks: not part of the measure
    run = BatchRun(prepared, QuietView(Board(prepared.tasks), sys.stderr))
    cpu, wall = time.process_time(), time.perf_counter()
    found = asyncio.run(run.execute())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    attempts = [a.outcome for r in found for a in r.attempts]
    return Round(len(serials), tasks, sum(o.steps for o in attempts), sum(r.state == "finished" for r in found),
                 wall, cpu)


def report(rounds: dict[int, list[Round]], latency: float, profile: str) -> None:
    print(f"\nbatch throughput, local engine, emulated phones ({profile} profile) over a private adb server, "
          f"scripted model waiting {latency:g} s per reply; medians of {len(rounds[min(rounds)])} round(s)\n")
    print(f"{'phones':>6}  {'tasks':>5}  {'steps':>5}  {'finished':>8}  {'wall s':>7}  {'steps/s':>8}  "
          f"{'scaling':>7}  {'CPU ms/step':>11}  {'CPU of a core':>13}")
    sizes = sorted(rounds)
    base = statistics.median(r.rate for r in rounds[sizes[0]])
    for size in sizes:
        rs = rounds[size]
        rate = statistics.median(r.rate for r in rs)
        cpu_step = statistics.median(r.cpu_per_step_ms for r in rs)
        load = statistics.median(r.cpu / r.wall for r in rs)
        print(f"{size:>6}  {rs[0].tasks:>5}  {statistics.median(r.steps for r in rs):>5.0f}  "
              f"{min(r.finished for r in rs):>5}/{rs[0].tasks:<2}  {statistics.median(r.wall for r in rs):>7.1f}  "
              f"{rate:>8.2f}  {rate / base:>7.2f}  {cpu_step:>11.1f}  {100 * load:>12.0f}%")
    one = rounds[sizes[0]]
    step_seconds = statistics.median(r.wall / r.steps for r in one)  # one phone: the time of a step
    cpu_step = statistics.median(r.cpu_per_step_ms for size in sizes for r in rounds[size]) / 1000
    print(f"\none phone makes a step every {step_seconds:.2f} s (model {latency:g} s + phone + runtime); the runtime "
          f"spends a median {1000 * cpu_step:.1f} ms of CPU per step,\nso one core drives about "
          f"{step_seconds / cpu_step:.0f} phones at this pace (CPU-bound beyond that; the phones and the adb server "
          "ran in other processes, on the same cores).")


def main(argv: list[str] | None = None) -> int:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="rounds per pool size (medians)")
    parser.add_argument("--tasks-per-phone", type=int, default=2, metavar="K")
    parser.add_argument("--model-latency", type=float, default=1.0, metavar="S", help="seconds per scripted reply")
    parser.add_argument("--profile", default="pixel-14", help="the emulated phones' realism profile (see sim --help)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), metavar="N,N,...",
                        help="the pool sizes, the first the one the others scale against (default 1,2,4,8,16)")
    parser.add_argument("--ports", type=int, default=0, metavar="PORT",
                        help="the adb server on PORT and the phones on the ports after it (default: free ports)")
    args = parser.parse_args(argv)
    try:
        sizes = tuple(int(n) for n in args.sizes.split(","))
    except ValueError:
        parser.error("--sizes: comma-separated numbers of phones")
    if args.repeat < 1 or args.tasks_per_phone < 1 or args.model_latency < 0:
        parser.error("--repeat and --tasks-per-phone must be at least 1, --model-latency at least 0")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp, PrivateAdbServer(port=args.ports or None) as server:
        folder = Path(tmp)
        os.environ["HOME"] = str(folder)  # the phones' label caches stay in the temporary folder
        task = write_task(folder, args.model_latency)
        procs, serials = start_phones(max(sizes), args.profile, folder, args.ports + 1 if args.ports else 0)
        try:
            warm = one_batch(task, serials, len(serials), server.port, folder / "logs")
            print(f"warm-up: {warm.finished}/{warm.tasks} tasks finished in {warm.wall:.1f} s", file=sys.stderr)
            rounds: dict[int, list[Round]] = {size: [] for size in sizes}
            for n in range(args.repeat):
                for size in sizes:
                    rounds[size].append(one_batch(task, serials[:size], size * args.tasks_per_phone, server.port,
                                                  folder / "logs"))
                print(f"  round {n + 1} of {args.repeat} done", file=sys.stderr)
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGINT)
            for proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            server.run("disconnect")
    report(rounds, args.model_latency, args.profile)
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
