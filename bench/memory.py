"""Memory benchmark: a batch's peak resident memory over 8 and 16 simulated phones against one run's.

    python bench/memory.py [--repeat N] [--model-latency S] [--first-port P]

Each measure is a fresh process of the command line, and its peak resident set (``ru_maxrss`` of that
child, from ``os.wait4``) is the figure: ``python -m ufo_mobile run TASK`` for one run, then
``python -m ufo_mobile batch TASK x N --devices sim:N`` for N = 8 and 16 (the simulated phones live in
the batch's process, as ``sim:N`` puts them). TASK is the demo (4 steps) with the scripted model
waiting S seconds (default 1) before every reply, a stand-in for a real model's latency. Medians of
N rounds (default 3), each round taking the commands in turn, and each batch as a ratio to one run
measured in the same round (the issue's goal: a 16-phone batch at most 2x one run). A last row runs
the 16-phone batch with glibc's own bound on arenas (``MALLOC_ARENA_MAX`` at 8 per core, which also
turns off the batch's bound of two), for comparison.

A second table puts the phones where real phones are, outside the batch's process: 16 emulated
phones (``python -m ufo_mobile sim --port 0``, each a process of its own) behind a private adb
server (the binary in the adbutils wheel, on 127.0.0.1), the same task run on one of them with
``run --device SERIAL`` and as a batch over 8 and 16 of them with ``batch --devices SERIAL,...``;
each phone's Settings are cleared before every command (so the demo is honest), and the figure is
the run process's peak alone: the runtime's own memory, which ``sim:N`` mixes with the simulated
phones' drawing (each in-process phone holds a few MB of rendered screens). ``--first-port P`` puts
the 16 phones on ports P to P+15 and the adb server on P+16 (default: free ports).
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

from bench._phones import ROOT, reset_phone, start_phones, stop_phones, write_task  # noqa: E402
from tests.adb_server import PrivateAdbServer  # noqa: E402


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
    parser.add_argument("--first-port", type=int, default=0, metavar="P",
                        help="the emulated phones on P..P+15, the adb server on P+16 (default: free ports)")
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
    print_table(peaks, ratios)
    print(f"\nthe same over emulated phones in processes of their own (as real phones are), behind a private adb "
          f"server: the run process's peak alone; medians of {args.repeat} round(s)\n")
    peaks, ratios = outside_phones(args.repeat, args.model_latency, args.first_port)
    print_table(peaks, ratios)
    print("(goal: a 16-phone batch at most 2x one run)")


def print_table(peaks: dict[str, list[float]], ratios: dict[str, list[float]]) -> None:
    print(f"{'command':40} {'peak MB':>8} {'vs one run':>11}")
    for name in peaks:
        print(f"{name:40} {statistics.median(peaks[name]):8.0f} {statistics.median(ratios[name]):10.2f}x")


def outside_phones(repeat: int, latency: float,
                   first_port: int = 0) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """One run and batches over 8 and 16 emulated phones in processes of their own (module docstring)."""
    adb_port = first_port + 16 if first_port else None
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp, PrivateAdbServer(port=adb_port) as server:
        folder = Path(tmp)
        task = str(write_task(folder, latency))
        procs, serials = start_phones(16, "pixel-14", folder, first_port=first_port)
        try:
            for serial in serials:
                server.run("connect", serial)
            env = {"ANDROID_ADB_SERVER_PORT": str(server.port)}
            rows = {
                "one run": ["run", task, "--device", serials[0]],
                "batch, 8 phones": ["batch", *[task] * 8, "--devices", ",".join(serials[:8])],
                "batch, 16 phones": ["batch", *[task] * 16, "--devices", ",".join(serials)],
            }
            peaks: dict[str, list[float]] = {name: [] for name in rows}
            ratios: dict[str, list[float]] = {name: [] for name in rows}
            for n in range(repeat):
                for name, command in rows.items():
                    for serial in serials:
                        reset_phone(server.adb, server.port, serial)
                    peaks[name].append(peak_mb([*command, "--adb-port", str(server.port), "--log-dir", "logs",
                                                "--quiet"] if name != "one run" else
                                               [*command, "--log-dir", "logs", "--quiet"], folder, env))
                    ratios[name].append(peaks[name][-1] / peaks["one run"][-1])
                print(f"  round {n + 1} of {repeat} done (phones in their own processes)", file=sys.stderr)
            server.run("disconnect")
        finally:
            stop_phones(procs)
    return peaks, ratios


if __name__ == "__main__":
    main()
