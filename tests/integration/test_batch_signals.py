"""A batch stopped by a signal ends each run in flight as ``run`` would (FAIL with the signal's reason,
on disk), starts nothing more, prints the summary, writes its record and exits 128+N."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.faults.conftest import Cli, wait_until

pytestmark = pytest.mark.integration

OPEN = {"status": "CONTINUE", "thought": "open Settings", "action": {"name": "open_app", "args": {"text": "Settings"}}}


def stepped_runs(batch_dir: Path) -> int:
    return sum(1 for steps in batch_dir.glob("*/steps.jsonl") if steps.read_text().count("\n") >= 1)


@pytest.mark.parametrize(("signum", "reason"), [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")])
def test_a_signal_stops_the_batch_and_every_run_in_flight(tmp_path: Path, signum: int, reason: str) -> None:
    script = tmp_path / "script.yaml"  # the second reply takes ten minutes: the runs are inside it when signalled
    script.write_text(json.dumps({"replies": [OPEN, {"delay_seconds": 600, "reply": {"status": "FINISH",
                                                                                     "result": "done"}}]}))
    task = tmp_path / "t.yaml"
    task.write_text("task: {name: slow, text: Open Settings}\nmodel: {script: script.yaml}\n")
    batch = Cli("batch", *[str(task)] * 4, "--devices", "sim:2", "--log-dir", "logs", "--batch-id", "b",
                cwd=tmp_path)
    batch_dir = tmp_path / "logs" / "b"
    wait_until(lambda: stepped_runs(batch_dir) == 2, "both phones' runs recorded a step")
    batch.signal(signum)
    code, out, err = batch.finish()

    assert code == 128 + signum, out + err
    assert "Traceback" not in err
    lines = [json.loads(x) for x in (batch_dir / "batch.jsonl").read_text().splitlines()]
    assert sorted(x["task"] for x in lines) == [1, 2]
    for line in lines:
        assert (line["status"], line["reason"], line["interrupted"], line["retried"]) == ("FAIL", reason, True, False)
        run = json.loads((batch_dir / line["run_dir"] / "run.json").read_text())
        assert (run["status"], run["reason"], run["signal"]) == ("FAIL", reason, signal.Signals(signum).name)
        steps = [json.loads(x) for x in (batch_dir / line["run_dir"] / "steps.jsonl").read_text().splitlines()]
        # the signal lands in step 2 (which is then recorded, with the reason) or, on a busy machine, just
        # before it began (then no step 2 runs): both are the run ending as ``run`` ends on a signal
        assert [x["step"] for x in steps] in ([1], [1, 2]) and steps[0]["status"] == "CONTINUE"
        assert all((x["status"], x["reason"]) == ("FAIL", reason) for x in steps[1:])
    assert sorted(p.name for p in batch_dir.iterdir() if p.is_dir()) == ["t01-slow-a1", "t02-slow-a1"]
    assert f"batch b: 4 tasks on 2 phones (local engine), stopped: {reason}" in out
    # the runs the batch's own stop cut short are interrupted, not failed
    assert ("finished 0, failed 0, interrupted 2 (stopped before they ended, not counted as failed), not run 2; "
            "retried 0 after a lost phone; 2 attempts") in out
    assert "  t03 slow: not run: stopped: " + reason in out
    summary = json.loads((batch_dir / "batch.json").read_text())
    assert summary["stopped"] == reason and (batch_dir / "batch.html").is_file()
