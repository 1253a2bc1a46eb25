"""Settling run directories: a dead run's ``RUNNING`` becomes FAIL("cut off"), a live one is left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ufo_mobile.core.trace import runs
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]


def killed_run(log_dir: Path, steps: int, *, partial_line: bool = False) -> Path:
    """A run whose process died (SIGKILL) after ``steps`` steps, made by a real child process."""
    program = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from ufo_mobile.core.trace.writer import RunWriter\n"
        "w = RunWriter.open(Path(sys.argv[1]), 'killed')\n"
        "w.write_run({'run_id': 'killed', 'status': 'RUNNING', 'task': 'a task'})\n"
        "for n in range(1, int(sys.argv[2]) + 1):\n"
        "    w.append_step({'step': n, 'status': 'CONTINUE'})\n"
        "if sys.argv[3] == '1':\n"
        "    open(w.run_dir / 'steps.jsonl', 'a').write('{\"step\": 99, \"stat')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", program, str(log_dir), str(steps), "1" if partial_line else "0"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert proc.returncode == -9
    return log_dir / "killed"


def test_a_killed_run_is_settled_as_cut_off_with_its_steps(tmp_path: Path) -> None:
    run_dir = killed_run(tmp_path, 3, partial_line=True)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "RUNNING"
    data = runs.settle(run_dir)
    assert (data["status"], data["outcome"], data["steps"], data["cut_off"]) == ("FAIL", "failed", 3, True)
    assert data["reason"].startswith("cut off: the process ended without finishing the run")
    assert data["reason"].endswith("3 steps recorded")
    assert data["task"] == "a task"
    assert json.loads((run_dir / "run.json").read_text()) == data
    assert not (run_dir / "run.lock").exists()
    assert [s["step"] for s in runs.read_steps(run_dir)] == [1, 2, 3]  # the torn line is left out


def test_a_live_run_is_left_running(tmp_path: Path) -> None:
    writer = RunWriter.open(tmp_path, "alive")
    writer.write_run({"run_id": "alive", "status": "RUNNING"})
    assert runs.settle(writer.run_dir)["status"] == "RUNNING"
    assert runs.sweep(tmp_path) == []
    writer.write_run({"run_id": "alive", "status": "FINISH"})
    writer.close()
    assert runs.settle(writer.run_dir)["status"] == "FINISH"


def test_the_sweep_finds_only_the_dead(tmp_path: Path) -> None:
    dead = killed_run(tmp_path, 1)
    alive = RunWriter.open(tmp_path, "alive")
    alive.write_run({"run_id": "alive", "status": "RUNNING"})
    done = RunWriter.open(tmp_path, "done")
    done.write_run({"run_id": "done", "status": "FINISH"})
    done.close()
    assert runs.sweep(tmp_path) == [dead]
    assert runs.sweep(tmp_path) == []  # settled once
    assert json.loads((alive.run_dir / "run.json").read_text())["status"] == "RUNNING"
    alive.close()


def test_the_sweep_does_not_read_the_runs_of_its_own_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = killed_run(tmp_path, 1)
    alive = RunWriter.open(tmp_path, "alive")  # a batch's other run, in this process: certainly alive
    alive.write_run({"run_id": "alive", "status": "RUNNING"})
    settled: list[Path] = []
    settle = runs.settle
    monkeypatch.setattr(runs, "settle", lambda run_dir: settled.append(run_dir) or settle(run_dir))
    assert runs.sweep(tmp_path) == [dead] and settled == [dead]
    alive.write_run({"run_id": "alive", "status": "FINISH"})
    alive.close()
    (alive.run_dir / "run.lock").write_text("")  # a lock file nobody holds: read again
    assert runs.sweep(tmp_path) == [] and settled == [dead, alive.run_dir]


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a run directory"):
        runs.settle(tmp_path)
