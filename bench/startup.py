"""Start-up benchmark: how long ``python -m ufo_mobile --help`` takes against ``python -c pass``.

    python bench/startup.py [--repeat N]

Each command runs N times (default 15) as a fresh process, alternating, and the median wall time of
each is printed with the ratio (the issue's goal: ``--help`` at most 10x ``python -c pass``). A
command's own ``--help`` (``run --help``, ``batch --help``) and ``import ufo_mobile`` are measured in
the same run as further rows. Nothing here is asserted: tests/unit/test_startup.py checks what
``--help`` imports instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "python -m ufo_mobile --help": ["-m", "ufo_mobile", "--help"],
    "python -m ufo_mobile run --help": ["-m", "ufo_mobile", "run", "--help"],
    "python -m ufo_mobile batch --help": ["-m", "ufo_mobile", "batch", "--help"],
    "python -c 'import ufo_mobile'": ["-c", "import ufo_mobile"],
}


def wall(args: list[str]) -> float:
    """Seconds one fresh interpreter takes to run ``args`` to the end."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each command (default 15)")
    repeat = parser.parse_args().repeat
    for args in ROWS.values():  # warm the file cache and the bytecode caches once
        wall(args)
    times: dict[str, list[float]] = {name: [] for name in ROWS}
    for _ in range(repeat):
        for name, args in ROWS.items():
            times[name].append(wall(args))
    base = statistics.median(times["python -c pass"])
    print(f"{'command':40} {'median':>9} {'vs python -c pass':>18}")
    for name, each in times.items():
        median = statistics.median(each)
        print(f"{name:40} {median * 1000:7.0f}ms {median / base:17.1f}x")
    print(f"(median of {repeat} runs each; goal: --help <= 10x python -c pass)")


if __name__ == "__main__":
    main()
