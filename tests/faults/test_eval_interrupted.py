"""Ctrl-C during an oracle evaluation: the run it cuts short did not end, so it is no failure of the agent.
It is counted apart (per-run line, table, scores line, ``summary.json``) and left out of the success
rate, which stays the oracle's 100% of the runs that ended."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import yaml

from tests.faults.conftest import Cli, wait_until
from ufo_mobile.shipped import CONFIG_DIR

SHIPPED = CONFIG_DIR / "suite"
HELD_REPLY = 2  # the held task's oracle waits an hour before this reply: Ctrl-C lands mid-run, on a step


def oracle_suite(folder: Path) -> Path:
    """Three copies of the shipped clock-turn-off task with its oracle: ``alarm-off`` as shipped,
    ``alarm-off-held`` whose oracle stops for an hour after its first step, and ``alarm-off-later``."""
    suite = folder / "suite"
    (suite / "scripts").mkdir(parents=True)
    task = (SHIPPED / "clock-turn-off.yaml").read_text()
    script = (SHIPPED / "scripts" / "clock-turn-off.yaml").read_text()
    for name in ("alarm-off", "alarm-off-held", "alarm-off-later"):
        (suite / f"{name}.yaml").write_text(task.replace("id: clock-turn-off", f"id: {name}"))
        (suite / "scripts" / f"{name}.yaml").write_text(script)
    held = yaml.safe_load(script)  # JSON is YAML: the held script is written as JSON
    held["replies"][HELD_REPLY - 1] = {"delay_seconds": 3600, "reply": held["replies"][HELD_REPLY - 1]}
    (suite / "scripts" / "alarm-off-held.yaml").write_text(json.dumps(held))
    return suite


def test_ctrl_c_during_an_oracle_eval_counts_the_interrupted_run_apart(tmp_path: Path) -> None:
    suite = oracle_suite(tmp_path)
    (tmp_path / "defaults.yaml").write_text("logs: {report: false}\n")
    logs = tmp_path / "logs"
    cli = Cli("eval", str(suite), "--model", "oracle", "--config", str(tmp_path / "defaults.yaml"),
              "--log-dir", str(logs), cwd=tmp_path)
    assert cli.wait_line("[1/3] ").startswith("[1/3] alarm-off s0: PASS  FINISH")
    held_steps = lambda: [p for p in logs.glob("eval-*/runs/*alarm-off-held*/steps.jsonl")  # noqa: E731
                          if p.read_text().count("\n") >= HELD_REPLY - 1]
    wait_until(lambda: bool(held_steps()), "the held run recorded its first step and waits for its model")
    cli.signal(signal.SIGINT)
    code, out, err = cli.finish()
    assert code == 128 + signal.SIGINT, (out, err)
    assert "Traceback" not in err

    lines = out.splitlines()
    assert [line for line in lines if line.startswith("[2/3] ")] == [
        line for line in lines if line.startswith("[2/3] alarm-off-held s0: interrupted (interrupted)  ")]
    assert not any(line.startswith("[3/3]") for line in lines)  # nothing starts after Ctrl-C
    # no failure anywhere: no per-run "fail", no FAIL in the table, no "not passed" line
    assert not re.search(r": fail\b", out) and "FAIL" not in out and "not passed:" not in out
    assert "success rate: 1/1 runs that ended (100.0%); pass@1 1.000; 1 interrupted, not counted" in lines
    assert "by kind: feasible 1/1 (1 interrupted)" in lines
    assert "stopped (interrupted): 1 of 3 runs ended, 1 interrupted; the records of every run are kept" in lines
    table = [line for line in lines if "alarm-off-held" in line and not line.startswith("[")]
    assert len(table) == 1 and "interrupted" in table[0]

    (eval_dir,) = logs.glob("eval-*")
    records = [json.loads(line) for line in (eval_dir / "results.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["passed"], r["interrupted"]) for r in records] == [
        ("alarm-off", True, False), ("alarm-off-held", False, True)]
    assert (records[1]["status"], records[1]["reason"], records[1]["signal"]) == ("FAIL", "interrupted", "SIGINT")
    summary = json.loads((eval_dir / "summary.json").read_text())
    assert {k: summary[k] for k in ("runs", "ended", "interrupted", "passed", "success_rate", "stopped")} == {
        "runs": 2, "ended": 1, "interrupted": 1, "passed": 1, "success_rate": 1.0, "stopped": "interrupted"}
    assert summary["pass_at"] == {"pass@1": 1.0}
