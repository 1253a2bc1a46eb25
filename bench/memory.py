"""Memory benchmark: a batch's peak resident memory over 8 and 16 simulated phones against one run's.

    python bench/memory.py [--repeat N] [--model-latency S]

Each measure is a fresh process of the command line, and its peak resident set (``ru_maxrss`` of that
child, from ``os.wait4``) is the figure: ``python -m ufo_mobile run TASK`` for one run, then
``python -m ufo_mobile batch TASK x N --devices sim:N`` for N = 8 and 16 (the simulated phones live in
the batch's process, as ``sim:N`` puts them). TASK is the demo (4 steps) with the scripted model
waiting S seconds (default 1) before every reply, a stand-in for a real model's latency. Medians of
N rounds (default 3), each round taking the commands in turn, and each batch as a ratio to one run
measured in the same round (the issue's goal: a 16-phone batch at most 2x one run). A last row runs
the 16-phone batch with glibc's own bound on arenas (``MALLOC_ARENA_MAX`` at 8 per core, which also
turns off the batch's bound of two), for comparison.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._phones import ROOT, write_task  # noqa: E402


def peak_mb(args: list[str], folder: Path, env: dict[str, str] | None = None) -> float:
    """The peak resident memory, in MB, of ``python -m ufo_mobile ARGS`` run to its end."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(folder), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", *args], cwd=folder, env=full,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"python -m ufo_mobile {' '.join(args[:2])} ... exited {proc.returncode}")
    return usage.ru_maxrss / 1024  # KB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="rounds (medians; default 3)")
    parser.add_argument("--model-latency", type=float, default=1.0, metavar="S", help="seconds per scripted reply")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        folder = Path(tmp)
        task = str(write_task(folder, args.model_latency, device={"kind": "sim"}))

        def batch(n: int) -> list[str]:
            return ["batch", *[task] * n, "--devices", f"sim:{n}", "--log-dir", "logs", "--quiet"]

        rows: dict[str, tuple[list[str], dict[str, str]]] = {
            "one run": (["run", task, "--log-dir", "logs", "--quiet"], {}),
            "batch, 8 phones": (batch(8), {}),
            "batch, 16 phones": (batch(16), {}),
            "batch, 16 phones, glibc's arenas": (batch(16), {"MALLOC_ARENA_MAX": str(8 * (os.cpu_count() or 1))}),
        }
        peaks: dict[str, list[float]] = {name: [] for name in rows}
        ratios: dict[str, list[float]] = {name: [] for name in rows}
        for n in range(args.repeat):
            for name, (command, env) in rows.items():
                peaks[name].append(peak_mb(command, folder, env))
                ratios[name].append(peaks[name][-1] / peaks["one run"][-1])
            print(f"  round {n + 1} of {args.repeat} done", file=sys.stderr)
    print(f"\npeak resident memory, scripted model waiting {args.model_latency:g} s per reply, simulated phones "
          f"in the batch's process; medians of {args.repeat} round(s)\n")
    print(f"{'command':40} {'peak MB':>8} {'vs one run':>11}")
    for name in rows:
        print(f"{name:40} {statistics.median(peaks[name]):8.0f} {statistics.median(ratios[name]):10.2f}x")
    print("(goal: a 16-phone batch at most 2x one run)")


if __name__ == "__main__":
    main()
