"""Step CPU benchmark: how much of this process's CPU one step of a run costs, against the 50 ms goal.

    python bench/step_cpu.py [--repeat N] [--steps N] [--top K] [--no-profile]

A fleet is bounded by the runtime's own CPU per step, so this measures the run process alone. The
simulated phone is served by the emulated adbd in another process (``python -m ufo_mobile sim
--port 0``, the default ``pixel-14`` profile), behind a private real adb server (the binary in the
adbutils wheel) on 127.0.0.1; both are other processes and do not count. The demo task
(``ufo_mobile/config/tasks/demo.yaml``, scripted model) then runs in this process through the command line's
own entry point with ``--driver adb``: once limited to 1 step (``--max-steps 1``) and once for
``--steps`` steps (default 4: the whole demo), and the CPU time of this process (user + sys, all
threads: ``time.process_time``) is taken around each run. The CPU of one step is

    (CPU(N steps) - CPU(1 step)) / (N - 1)

so what every run pays once (settings, connecting, listing the apps, the report's fonts) cancels
out; the figure is the median over ``--repeat`` pairs (default 15: on a shared machine single pairs
scatter by +-10 ms, so the quartiles are printed too), after one warm-up pair. The 1-step run ends
in FAIL (the step limit) and records the final screen; the whole demo ends in FINISH.

Then both runs are profiled once more (``cProfile`` in every thread, on each thread's CPU clock)
and the functions are listed by cumulative CPU per step, the same difference divided by N - 1, so
the reader sees where a step's CPU goes. The profiler slows everything down: the headline figure
comes from the unprofiled runs. Timings describe this loopback set-up, not a real phone.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adb_server import PrivateAdbServer  # noqa: E402
from tests.faults.conftest import Cli  # noqa: E402
from ufo_mobile.cli import main as cli_main  # noqa: E402
from ufo_mobile.shipped import CONFIG_DIR

REPO = Path(__file__).resolve().parents[1]
DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
GOAL_MS = 50.0
DEMO_STEPS = 4


class Bench:
    """The served phone, the private adb server and the runs of the demo against them."""

    def __init__(self, serial: str, log_dir: Path) -> None:
        self.serial = serial
        self.log_dir = log_dir
        self.runs = 0

    def run(self, steps: int) -> None:
        """One run of the demo, in this process, limited to ``steps`` steps."""
        self.runs += 1
        out = io.StringIO()
        code = cli_main(["run", str(DEMO), "--device", self.serial, "--driver", "adb", "--max-steps", str(steps),
                         "--log-dir", str(self.log_dir), "--run-id", f"bench-{self.runs}", "--quiet"], out=out)
        expected = 0 if steps >= DEMO_STEPS else 1
        if code != expected:
            raise SystemExit(f"the {steps}-step run exited {code}, expected {expected}: {out.getvalue()}")

    def cpu(self, steps: int) -> float:
        """Seconds of this process's CPU (user + sys, every thread) that one run took."""
        start = time.process_time()
        self.run(steps)
        return time.process_time() - start


def per_step(bench: Bench, steps: int, repeat: int) -> tuple[list[float], list[float], list[float]]:
    """CPU of the 1-step runs, of the N-step runs, and per step (seconds), pair by pair."""
    bench.run(1)  # warm-up: imports, the app labels' cache, the adb connection
    bench.run(steps)
    ones, alls, each = [], [], []
    for number in range(repeat):
        one, full = bench.cpu(1), bench.cpu(steps)
        ones.append(one)
        alls.append(full)
        each.append((full - one) / (steps - 1))
        print(f"  pair {number + 1}/{repeat}: 1 step {one * 1000:.0f} ms, {steps} steps {full * 1000:.0f} ms CPU",
              file=sys.stderr)
    return ones, alls, each


# --- profile: cProfile in every thread, on each thread's CPU clock ----------------------------


def profiled(action: Callable[[], None]) -> pstats.Stats:
    """Run ``action`` with a CPU-time ``cProfile`` in this thread and in every thread it starts."""
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start_in_thread(*_: Any) -> None:
        profile = cProfile.Profile(time.thread_time)
        with lock:
            profiles.append(profile)
        profile.enable()  # replaces this hook in the new thread

    main = cProfile.Profile(time.thread_time)
    threading.setprofile(start_in_thread)
    main.enable()
    try:
        action()
    finally:
        main.disable()
        threading.setprofile(None)  # type: ignore[arg-type]
    with lock:
        for profile in profiles:
            profile.disable()  # a thread still alive keeps its figures so far
        return pstats.Stats(main, *profiles)


Key = tuple[str, int, str]


def cumulative(stats: pstats.Stats) -> dict[Key, tuple[float, int]]:
    """Cumulative CPU seconds and primitive calls per function."""
    table: dict[Key, tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    return {key: (value[3], value[0]) for key, value in table.items()}


def where(key: Key) -> str:
    path, line, name = key
    if path == "~":
        return name
    for root in (str(REPO) + os.sep, sys.prefix + os.sep, sys.base_prefix + os.sep):
        if path.startswith(root):
            path = path[len(root):]
            break
    path = path.replace("lib/python3.11/site-packages/", "").replace(f"lib/python{sys.version_info[0]}."
                                                                       f"{sys.version_info[1]}/", "")
    return f"{path}:{line}({name})"


def print_profile(bench: Bench, steps: int, top: int) -> None:
    one = cumulative(profiled(lambda: bench.run(1)))
    full = cumulative(profiled(lambda: bench.run(steps)))
    rows = []
    for key, (cum, calls) in full.items():
        before, calls_before = one.get(key, (0.0, 0))
        rows.append(((cum - before) / (steps - 1), (calls - calls_before) / (steps - 1), key))
    rows.sort(key=lambda row: -row[0])
    print(f"\nWhere a step's CPU goes (cProfile in every thread, each thread's CPU clock; cumulative ms per "
          f"step = (N-step run - 1-step run) / {steps - 1}; the profiler adds its own overhead):")
    print(f"{'ms/step':>9} {'calls/step':>11}  function")
    for ms_each, calls_each, key in rows[:top]:
        print(f"{ms_each * 1000:>9.1f} {calls_each:>11.1f}  {where(key)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15, help="pairs of runs (median); default 15")
    parser.add_argument("--steps", type=int, default=DEMO_STEPS,
                        help=f"steps of the longer run (2-{DEMO_STEPS}; default {DEMO_STEPS}, the whole demo)")
    parser.add_argument("--top", type=int, default=30, help="functions listed in the profile; default 30")
    parser.add_argument("--no-profile", action="store_true", help="skip the profile")
    args = parser.parse_args(argv)
    if not 2 <= args.steps <= DEMO_STEPS or args.repeat < 1:
        parser.error(f"--steps must be 2-{DEMO_STEPS} and --repeat at least 1")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ufo-step-cpu-") as tmp, PrivateAdbServer() as server:
        home = Path(tmp) / "home"  # the runs' caches (app labels) stay in the temporary directory
        home.mkdir()
        os.environ.update({"ANDROID_ADB_SERVER_PORT": str(server.port), "HOME": str(home)})
        sim = Cli("sim", "--port", "0", cwd=Path(tmp))
        try:
            line = sim.wait_line("simulated phone listening on 127.0.0.1:")
            serial = "127.0.0.1:" + line.split("127.0.0.1:")[1].split(";")[0]
            bench = Bench(serial, Path(tmp) / "logs")
            ones, alls, each = per_step(bench, args.steps, args.repeat)
            figure = statistics.median(each) * 1000
            print(f"Step CPU: the demo over adb against the emulated adbd in another process ({serial}); "
                  f"medians of {args.repeat} pairs")
            print(f"  1-step run {statistics.median(ones) * 1000:.0f} ms CPU, {args.steps}-step run "
                  f"{statistics.median(alls) * 1000:.0f} ms CPU")
            low, _, high = statistics.quantiles(each, n=4) if len(each) > 1 else (each[0], 0.0, each[0])
            print(f"  CPU per step: {figure:.1f} ms (quartiles {low * 1000:.1f}-{high * 1000:.1f} ms; pairs: "
                  f"{', '.join(f'{s * 1000:.1f}' for s in each)})")
            verdict = "PASS" if figure <= GOAL_MS else "MISS"
            print(f"  {verdict}  CPU per step <= {GOAL_MS:.0f} ms: {figure:.1f} ms = {figure / GOAL_MS:.2f}x the goal")
            if not args.no_profile:
                print_profile(bench, args.steps, args.top)
        finally:
            sim.signal(signal.SIGINT)  # the simulated phone's own Ctrl-C: it stops and exits
            sim.finish()
            server.run("disconnect")
    print(f"\nbench took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
