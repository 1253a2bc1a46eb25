"""``batch --processes N``: the phones spread over worker processes of this machine. The runs are the
same runs, their directories in the batch's folder; a stop reaches every worker; a worker that dies
ends its job as an ERROR naming it while the batch goes on; a batch process that dies leaves its
workers to end their runs with a reason, on disk, and exit."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.faults.conftest import Cli, wait_until
from ufo_mobile.fleet.processes import GONE
from ufo_mobile.shipped import CONFIG_DIR

pytestmark = pytest.mark.integration

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
OPEN = {"status": "CONTINUE", "thought": "open Settings", "action": {"name": "open_app", "args": {"text": "Settings"}}}


def slow_task(folder: Path) -> Path:
    """A task whose second reply takes ten minutes: its runs are inside it until something stops them."""
    (folder / "script.yaml").write_text(json.dumps({"replies": [OPEN, {"delay_seconds": 600, "reply": {
        "status": "FINISH", "result": "done"}}]}))
    task = folder / "slow.yaml"
    task.write_text("task: {name: slow, text: Open Settings}\nmodel: {script: script.yaml}\n")
    return task


def stepped(batch_dir: Path) -> list[Path]:
    """The run directories that have recorded their first step."""
    return [steps.parent for steps in batch_dir.glob("*/steps.jsonl") if steps.read_text().count("\n") >= 1]


def run_json(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "run.json").read_text())  # type: ignore[no-any-return]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_the_runs_are_spread_over_the_workers_and_recorded_as_in_one_process(tmp_path: Path) -> None:
    batch = Cli("batch", *[str(DEMO)] * 5, "--devices", "sim:4", "--processes", "2", "--log-dir", "logs",
                "--batch-id", "b", cwd=tmp_path)
    code, out, err = batch.finish()

    assert code == 0, out + err
    batch_dir = tmp_path / "logs" / "b"
    lines = [json.loads(x) for x in (batch_dir / "batch.jsonl").read_text().splitlines()]
    assert sorted((x["task"], x["status"]) for x in lines) == [(n, "FINISH") for n in range(1, 6)]
    pids = {run_json(batch_dir / x["run_dir"])["pid"] for x in lines}
    assert len(pids) == 2 and batch.proc.pid not in pids  # two workers ran them, not the batch's process
    for line in lines:
        assert (batch_dir / line["run_dir"] / "report.html").is_file()
    assert json.loads((batch_dir / "batch.json").read_text())["processes"] == 2
    assert "batch b: 5 tasks on 4 phones (local engine, 2 processes)" in out
    assert "finished 5, failed 0, not run 0" in out
    assert "<th>engine</th><td>local, 2 processes</td>" in (batch_dir / "batch.html").read_text()


def test_more_processes_than_phones_is_one_per_phone(tmp_path: Path) -> None:
    code, out, err = Cli("batch", str(DEMO), str(DEMO), "--devices", "sim:2", "--processes", "8", "--log-dir",
                         "logs", "--batch-id", "b", cwd=tmp_path).finish()
    assert code == 0, out + err
    assert "2 tasks on 2 phones (local engine, 2 processes)" in out


def test_a_signal_stops_the_runs_in_every_worker(tmp_path: Path) -> None:
    batch = Cli("batch", *[str(slow_task(tmp_path))] * 3, "--devices", "sim:2", "--processes", "2", "--log-dir",
                "logs", "--batch-id", "b", cwd=tmp_path)
    batch_dir = tmp_path / "logs" / "b"
    wait_until(lambda: len(stepped(batch_dir)) == 2, "both phones' runs recorded a step")
    batch.signal(signal.SIGTERM)
    code, out, err = batch.finish()

    assert code == 128 + signal.SIGTERM, out + err
    assert "Traceback" not in err
    lines = [json.loads(x) for x in (batch_dir / "batch.jsonl").read_text().splitlines()]
    assert sorted(x["task"] for x in lines) == [1, 2]
    for line in lines:
        assert (line["status"], line["reason"], line["interrupted"]) == ("FAIL", "terminated", True)
        run = run_json(batch_dir / line["run_dir"])
        assert (run["status"], run["reason"], run["signal"]) == ("FAIL", "terminated", "SIGTERM")
    assert len({run_json(batch_dir / x["run_dir"])["pid"] for x in lines}) == 2
    assert "  t03 slow: not run: stopped: terminated" in out


def test_a_worker_that_dies_ends_its_job_and_the_batch_goes_on(tmp_path: Path) -> None:
    batch = Cli("batch", str(slow_task(tmp_path)), str(slow_task(tmp_path)), str(DEMO), "--devices", "sim:2",
                "--processes", "2", "--log-dir", "logs", "--batch-id", "b", cwd=tmp_path)
    batch_dir = tmp_path / "logs" / "b"
    wait_until(lambda: len(stepped(batch_dir)) == 2, "both phones' runs recorded a step")
    victim = next(p for p in stepped(batch_dir) if p.name.startswith("t01"))
    os.kill(int(run_json(victim)["pid"]), signal.SIGKILL)  # type: ignore[call-overload]
    # the third task (the demo) then runs on the freed phone, in the worker that is left
    wait_until(lambda: (batch_dir / "t03-turn-on-wifi-a1" / "run.json").is_file()
               and run_json(batch_dir / "t03-turn-on-wifi-a1")["status"] == "FINISH", "the demo finished")
    batch.signal(signal.SIGTERM)  # the other slow run would wait ten minutes
    code, out, err = batch.finish()

    assert code == 128 + signal.SIGTERM, out + err
    assert "Traceback" not in err
    lines = {json.loads(x)["task"]: json.loads(x) for x in (batch_dir / "batch.jsonl").read_text().splitlines()}
    assert lines[1]["status"] == "ERROR"
    assert "the batch's worker process" in lines[1]["reason"] and "ended (exit code -9)" in lines[1]["reason"]
    assert (lines[2]["status"], lines[2]["reason"]) == ("FAIL", "terminated")
    assert lines[3]["status"] == "FINISH"
    assert run_json(batch_dir / lines[3]["run_dir"])["pid"] == run_json(batch_dir / lines[2]["run_dir"])["pid"]


def test_workers_whose_batch_process_dies_end_their_runs_and_exit(tmp_path: Path) -> None:
    batch = Cli("batch", *[str(slow_task(tmp_path))] * 2, "--devices", "sim:2", "--processes", "2", "--log-dir",
                "logs", "--batch-id", "b", cwd=tmp_path)
    batch_dir = tmp_path / "logs" / "b"
    wait_until(lambda: len(stepped(batch_dir)) == 2, "both phones' runs recorded a step")
    runs = stepped(batch_dir)
    workers = [int(run_json(run)["pid"]) for run in runs]  # type: ignore[call-overload]
    os.kill(batch.proc.pid, signal.SIGKILL)
    batch.finish()
    wait_until(lambda: not any(alive(pid) for pid in workers), "the workers exited")

    for run in runs:
        record = run_json(run)
        assert (record["status"], record["reason"], record["interrupted"]) == ("FAIL", GONE, True)
