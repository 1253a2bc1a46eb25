"""What the fleet and memory benchmarks share: the demo task with a slow scripted model, emulated
phones in processes of their own, a fresh phone state between tasks, and the CPU time of a process.

``write_task`` writes the demo (turn on Wi-Fi, 4 steps) with the scripted model waiting a given time
before every reply, ``write_check_task`` a task honest on a phone where the demo ran (is Wi-Fi on? 3
steps); ``start_phones`` starts ``python -m ufo_mobile sim`` processes and ``stop_phones``
stops them; ``reset_phone`` clears the Settings app's data over adb (``pm clear``: Wi-Fi off again,
its screens closed, the home screen in front), so every task starts where the demo is honest;
``cpu_seconds`` reads a process's user+system time from ``/proc``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEMO_SCRIPT = ROOT / "ufo_mobile" / "config" / "tasks" / "scripts" / "demo_wifi.yaml"
SETTINGS = "com.android.settings"


def write_task(folder: Path, latency: float, device: dict[str, Any] | None = None) -> Path:
    """The demo task in ``folder`` with a scripted model that waits ``latency`` seconds per reply."""
    script = yaml.safe_load(DEMO_SCRIPT.read_text())
    script.pop("modes", None)
    return _task(folder, "wifi", "Turn on Wi-Fi", script["replies"], latency, device)


def write_check_task(folder: Path, latency: float, device: dict[str, Any] | None = None) -> Path:
    """A task honest on a phone where the demo ran: read whether Wi-Fi is on (3 steps; the answer is
    given only when the screen shows the switch on, as the demo's last reply)."""
    replies = yaml.safe_load(DEMO_SCRIPT.read_text())["replies"]
    look, answer = replies[:2], replies[-1]
    answer["reply"] = {**answer["reply"], "observation": "The Use Wi-Fi switch is on.",
                       "thought": "The switch answers the question.", "result": "Yes, Wi-Fi is on."}
    return _task(folder, "wifi-check", "Is Wi-Fi on? Look in Settings", [*look, answer], latency, device)


def _task(folder: Path, name: str, text: str, replies: list[Any], latency: float,
          device: dict[str, Any] | None) -> Path:
    (folder / f"{name}-script.yaml").write_text(json.dumps({"replies": replies, "delay_seconds": latency}))
    task: dict[str, Any] = {"task": {"name": name, "text": text}, "model": {"script": f"{name}-script.yaml"},
                            "limits": {"max_steps": 8}}
    if device:
        task["device"] = device
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(task))
    return path


def start_phones(count: int, profile: str, folder: Path,
                 first_port: int = 0) -> tuple[list[subprocess.Popen[str]], list[str]]:
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
            stop_phones(procs)
            raise SystemExit(f"the emulated phone did not start: {line!r}")
        serials.append("127.0.0.1:" + line.split("127.0.0.1:")[1].split(";")[0])
    return procs, serials


def stop_phones(procs: list[subprocess.Popen[str]]) -> None:
    """Stop the phones ``start_phones`` started (Ctrl-C, then a kill after 10 s)."""
    for proc in procs:
        proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 10  # one deadline for all: a phone that ignores Ctrl-C (started from a
    for proc in procs:                # shell's background job, which ignores SIGINT) costs 10 s once, not each
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def reset_phone(adb: str, adb_port: int, serial: str, tries: int = 5) -> None:
    """A fresh phone for the demo: the Settings app's data cleared (Wi-Fi off, the home screen in front).
    A phone just connected may not take commands yet: up to ``tries`` attempts, half a second apart."""
    for attempt in range(tries):
        done = subprocess.run([adb, "-P", str(adb_port), "-s", serial, "shell", "pm", "clear", SETTINGS],
                              capture_output=True, text=True, timeout=30, check=False)
        if "Success" in done.stdout:
            return
        if attempt + 1 < tries:
            time.sleep(0.5)
    raise SystemExit(f"pm clear {SETTINGS} on {serial} failed: {done.stdout.strip()} {done.stderr.strip()}")


def cpu_seconds(pid: int) -> float:
    """User+system CPU time of process ``pid`` so far (Linux ``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
