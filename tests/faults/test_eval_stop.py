"""Ctrl-C and SIGTERM during ``eval``: the runs in flight end in FAIL with their reason and their records
written, no further run starts, the scores of what ended are printed, and the exit is 128+N."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.faults.conftest import Cli, wait_until
from ufo_mobile.shipped import CONFIG_DIR

SUITE = CONFIG_DIR / "suite"


@pytest.mark.parametrize(("signum", "reason"), [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")])
def test_a_signal_stops_the_evaluation_and_keeps_its_records(tmp_path: Path, signum: int, reason: str) -> None:
    (tmp_path / "slow.yaml").write_text(  # a model that takes an hour to answer: the run is stopped mid-call
        "delay_seconds: 3600\nreplies:\n  - {status: FAIL, result: never}\n")
    (tmp_path / "defaults.yaml").write_text("model: {kind: scripted, script: slow.yaml}\nlogs: {report: false}\n")
    cli = Cli("eval", str(SUITE), "--tasks", "shop-*", "--config", str(tmp_path / "defaults.yaml"), "--log-dir",
              str(tmp_path / "logs"), cwd=tmp_path)
    cli.wait_line("eval: ")
    runs = tmp_path / "logs"
    wait_until(lambda: any(runs.glob("eval-*/runs/*/steps")) or any(runs.glob("eval-*/runs/*/run.json")),
               "the first run started")
    cli.signal(signum)
    code, out, err = cli.finish()
    assert code == 128 + signum, (out, err)
    assert "Traceback" not in err
    (eval_dir,) = runs.glob("eval-*")
    records = [json.loads(line) for line in (eval_dir / "results.jsonl").read_text().splitlines()]
    assert len(records) == 1, records  # one run at a time: only the one in flight ran
    assert (records[0]["status"], records[0]["reason"], records[0]["passed"]) == ("FAIL", reason, False)
    assert json.loads((Path(records[0]["run_dir"]) / "run.json").read_text())["status"] == "FAIL"
    assert records[0]["interrupted"] is True and records[0]["outcome"] == "interrupted"
    # the run that was stopped did not end: not a failure, and not in the success rate
    assert f"stopped ({reason}): 0 of 6 runs ended, 1 interrupted" in out
    assert "success rate: 0/0 runs that ended (none ended); 1 interrupted, not counted" in out
    assert ": fail " not in out and "not passed:" not in out
    summary = json.loads((eval_dir / "summary.json").read_text())
    assert (summary["stopped"], summary["runs"], summary["ended"], summary["interrupted"]) == (reason, 1, 0, 1)
