"""``python -m ufo_mobile replay RUN_DIR`` through the command line: exit codes, the lines it prints,
one-line errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from tests.unit.replay.helpers import click, finish, record_demo, settings_app, steps_of
from tests.unit.test_cli_runs import only_run_dir as only_run
from tests.unit.test_cli_runs import run_cli
from ufo_mobile.core.session import RunResult


@pytest.fixture
def demo(tmp_path: Path) -> RunResult:
    """A recorded demo run (the command line runs its own event loop: recorded outside of one)."""
    return asyncio.run(record_demo(tmp_path / "recorded"))


def change_recorded_phone(run_dir: Path, app: Path, script: Path | None = None) -> None:
    """The recorded run's settings now name another Settings app (and model script): the replay's phone."""
    run = json.loads((run_dir / "run.json").read_text())
    run["settings"]["device"]["sim"]["apps"] = [str(app)]
    if script is not None:
        run["settings"]["model"]["script"] = str(script)
    (run_dir / "run.json").write_text(json.dumps(run))


def test_replay_prints_its_steps_and_the_account_and_exits_0(demo: RunResult, tmp_path: Path) -> None:
    code, out = run_cli("replay", str(demo.run_dir), "--device", "sim", "--log-dir", str(tmp_path / "r"))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].endswith(f": replay of {demo.run_id}: Turn on Wi-Fi  "
                             "[direct · simulated phone (in-process) · no model (replay only)]")
    assert [line.split()[2] for line in lines if line.startswith("step ")] == ["CONTINUE"] * 3 + ["FINISH"]
    assert f"replay of run {demo.run_id}: 4 of 4 recorded steps replayed, finished without the model" in lines
    assert lines[-2] == "tokens: 0 prompt + 0 completion, cost $0.0000"
    assert lines[-1] == f"report: {only_run(tmp_path / 'r') / 'report.html'}"  # written when the run ended
    assert {s["agent"] for s in steps_of(only_run(tmp_path / "r"))} == {"Replay"}


def test_a_mismatch_exits_1_with_the_report_one_line_per_item(demo: RunResult, tmp_path: Path) -> None:
    change_recorded_phone(demo.run_dir, settings_app(tmp_path, "redesigned"))
    code, out = run_cli("replay", str(demo.run_dir), "--log-dir", str(tmp_path / "r"), "--quiet")
    assert code == 1
    lines = out.splitlines()  # --quiet: the summary only, no header
    assert lines[0].startswith("FAIL after 1 step (2 turns) in ")
    assert "replay stopped at step 2 (recorded step 2): the control the action names is not on" in lines[0]
    assert lines[1] == f"replay of run {demo.run_id}: 1 of 4 recorded steps replayed, stopped at step 2"
    assert lines[2:6] == ["  step: recorded step 2 (MobileAgent): click(index=3, text='Wi-Fi')",
                          "  app: com.android.settings (as recorded)", "  score: 0.94 >= threshold 0.80",
                          lines[5]]
    assert lines[5].startswith("  problem: the control the action names is not on this screen")


def test_with_fallback_agent_the_runs_model_does_the_rest(demo: RunResult, tmp_path: Path) -> None:
    script = tmp_path / "rest.yaml"  # the first reply was the recorded run's: skipped, as for run --resume
    script.write_text(yaml.safe_dump({"replies": [
        {"status": "FAIL", "thought": "never given", "result": "the replay skipped this"},
        click(3, "Network & internet"), click(3, "Use Wi-Fi"), finish("Wi-Fi is on.")]}))
    change_recorded_phone(demo.run_dir, settings_app(tmp_path, "redesigned"), script)
    code, out = run_cli("replay", str(demo.run_dir), "--fallback", "agent", "--log-dir", str(tmp_path / "r"))
    assert code == 0, out
    assert "handed over to the agent at step 2" in out and "in 3 model calls" in out
    agents = [s["agent"] for s in steps_of(only_run(tmp_path / "r"))]
    assert agents == ["Replay", "Replay", "MobileAgent", "MobileAgent", "MobileAgent"]


def test_a_lower_threshold_is_an_option(demo: RunResult, tmp_path: Path) -> None:
    code, _ = run_cli("replay", str(demo.run_dir), "--threshold", "0.5", "--log-dir", str(tmp_path / "r"))
    assert code == 0
    run = json.loads((only_run(tmp_path / "r") / "run.json").read_text())
    assert run["replay"]["threshold"] == 0.5 and run["settings"]["replay"]["threshold"] == 0.5


@pytest.mark.parametrize(("args", "message"), [
    (["--threshold", "1.5"], "error: argument --threshold: must be between 0 and 1, not 1.5"),
    (["--threshold", "high"], "error: argument --threshold: not a number: 'high'"),
    (["--fallback", "model"], "error: argument --fallback: invalid choice: 'model'"),
])
def test_bad_options_are_one_line_and_exit_2(demo: RunResult, args: list[str], message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli("replay", str(demo.run_dir), *args)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.startswith(message) and err.count("\n") == 1


def test_a_directory_that_is_not_a_run_is_one_line_and_exit_2(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli("replay", str(tmp_path))
    err = capsys.readouterr().err
    assert code == 2 and out == ""
    assert err == f"error: {tmp_path}: not a run directory (it has no run.json)\n"
    assert list(tmp_path.iterdir()) == []


def test_a_run_with_nothing_to_replay_is_one_line_and_exit_2(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = asyncio.run(record_demo(tmp_path / "recorded"))
    (run.run_dir / "steps.jsonl").write_text("")
    code, _ = run_cli("replay", str(run.run_dir))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "the run has no step to replay" in err


def test_a_real_phone_option_with_the_simulator_is_refused(demo: RunResult,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("replay", str(demo.run_dir), "--device", "sim", "--driver", "u2")
    assert code == 2 and "--driver is for real phones" in capsys.readouterr().err
