"""``batch --engine ray``: a local Ray instance with 2 CPUs, started (and stopped) by the command, runs 4
tasks on simulated phones, each Ray worker building its own; every run directory comes back to the
driver's log directory whole."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.faults.conftest import Cli
from ufo_mobile.shipped import CONFIG_DIR

pytest.importorskip("ray", reason="the Ray engine is an optional extra: pip install 'ufo-mobile[fleet]'")
pytestmark = pytest.mark.integration

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"


def test_four_tasks_on_simulated_phones_through_ray(tmp_path: Path) -> None:
    batch = Cli("batch", *[str(DEMO)] * 4, "--engine", "ray", "--cpus", "2", "--devices", "sim:4",
                "--log-dir", "logs", "--batch-id", "b", cwd=tmp_path, env={"RAY_USAGE_STATS_ENABLED": "0"})
    code, out, err = batch.finish()  # also checks that nothing of Ray is left running
    assert code == 0, out + err
    batch_dir = tmp_path / "logs" / "b"
    lines = [json.loads(x) for x in (batch_dir / "batch.jsonl").read_text().splitlines()]
    assert sorted((x["task"], x["attempt"], x["status"]) for x in lines) == [(n, 1, "FINISH") for n in range(1, 5)]
    assert {x["phone"] for x in lines} <= {"sim-1", "sim-2", "sim-3", "sim-4"}
    for line in lines:
        run_dir = batch_dir / line["run_dir"]
        assert run_dir.name == f"t{line['task']:02d}-turn-on-wifi-a1"
        run = json.loads((run_dir / "run.json").read_text())
        assert (run["status"], run["steps"], run["run_dir"]) == ("FINISH", 4, str(Path("logs") / "b" / run_dir.name))
        steps = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
        assert [x["step"] for x in steps] == [1, 2, 3, 4]
        for n in range(1, 5):
            assert (run_dir / "steps" / f"{n:04d}" / "screenshot.png").is_file()
        assert (run_dir / "report.html").is_file() and not (run_dir / "run.lock").exists()
    assert not list(batch_dir.glob(".incoming-*"))
    assert "4 tasks on 4 phones (ray engine)" in out and "finished 4, failed 0" in out


def test_ctrl_c_on_the_driver_stops_the_runs_on_the_workers(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"  # the second reply takes ten minutes: only a stop ends these runs
    script.write_text(json.dumps({"replies": [
        {"status": "CONTINUE", "thought": "open", "action": {"name": "open_app", "args": {"text": "Settings"}}},
        {"delay_seconds": 600, "reply": {"status": "FINISH", "result": "done"}}]}))
    task = tmp_path / "t.yaml"
    task.write_text("task: {name: slow, text: Open Settings}\nmodel: {script: script.yaml}\n")
    batch = Cli("batch", *[str(task)] * 3, "--engine", "ray", "--cpus", "2", "--devices", "sim:2",
                "--log-dir", "logs", "--batch-id", "b", cwd=tmp_path, env={"RAY_USAGE_STATS_ENABLED": "0"})
    batch.wait_line("start t01 slow on sim-")  # a run is on its worker (the second may still be starting)
    batch.signal(signal.SIGINT)
    code, out, err = batch.finish()
    assert code == 130, out + err
    batch_dir = tmp_path / "logs" / "b"
    lines = [json.loads(x) for x in (batch_dir / "batch.jsonl").read_text().splitlines()]
    ran = {x["task"] for x in lines}
    assert 1 in ran and ran <= {1, 2}, lines
    assert all((x["status"], x["reason"]) == ("FAIL", "interrupted") for x in lines), lines
    for line in lines:  # each run ended as run ends on Ctrl-C, and came back to the driver
        run = json.loads((batch_dir / line["run_dir"] / "run.json").read_text())
        assert (run["status"], run["reason"], run["signal"]) == ("FAIL", "interrupted", "SIGINT")
    for task in {1, 2, 3} - ran:  # what had not started when Ctrl-C came never starts
        assert f"  t0{task} slow: not run: stopped: interrupted" in out
