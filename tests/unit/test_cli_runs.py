"""End-to-end runs through the command line on the simulated phone with the scripted model."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.cli import main
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.session import Session
from ufo_mobile.settings import load_settings
from ufo_mobile.shipped import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[2]
DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
TASKS = ROOT / "tests" / "data" / "tasks"
STEP_FILES = {"screenshot.png", "annotated.jpg", "controls.json", "screen.txt", "prompt.json", "reply.txt",
              "timings.json", "result.json", "state.json", "model.json"}


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def only_run_dir(log_dir: Path) -> Path:
    (run_dir,) = list(log_dir.iterdir())
    return run_dir


def steps_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]


def test_demo_finishes_and_leaves_every_file_for_every_step(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path))
    assert code == 0, out
    assert "FINISH after 4 steps" in out and "Wi-Fi is on." in out
    assert out.count("\nstep ") == 4
    run_dir = only_run_dir(tmp_path)
    result = json.loads((run_dir / "run.json").read_text())
    assert result["status"] == "FINISH" and result["outcome"] == "success" and result["steps"] == 4
    assert result["prompt_tokens"] == 0 and result["cost_usd"] == 0
    assert result["task"] == "Turn on Wi-Fi" and result["settings"]["limits"]["max_steps"] == 8  # kept at the end
    assert (run_dir / "report.html").is_file() and out.rstrip().endswith(f"report: {run_dir / 'report.html'}")
    finish = json.loads((run_dir / "steps" / "0004" / "result.json").read_text())
    assert finish == {"success": True, "summary": "Wi-Fi is on.", "status": "FINISH", "action": None}
    lines = steps_of(run_dir)
    assert [x["step"] for x in lines] == [1, 2, 3, 4]
    for line in lines:
        folder = run_dir / "steps" / f"{line['step']:04d}"
        present = {p.name for p in folder.iterdir()}
        assert STEP_FILES <= present, (line["step"], present)
        assert json.loads((folder / "result.json").read_text())["success"] is True  # FINISH's too
        if line["status"] == "CONTINUE":
            assert "action.json" in present
        state = json.loads((folder / "state.json").read_text())
        assert len(state["step_records"]) == line["step"] == state["step_records"][-1]["step"]
        assert set(line["timings"]) == {"data_collection", "llm_interaction", "action_execution", "memory_update"}
        assert (folder / "screenshot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert json.loads((folder / "controls.json").read_text())
        assert line["files"]["screenshot"] == f"steps/{line['step']:04d}/screenshot.png"
    recorded = [json.loads(x) for x in (run_dir / "actions.jsonl").read_text().splitlines()]
    assert [a["action"] for a in recorded] == ["start_app", "tap", "tap"]
    assert [a["observation"] for a in recorded] == [x["observation_id"] for x in lines[:3]]
    assert all(a["ok"] for a in recorded)
    transitions = [json.loads(x) for x in (run_dir / "run.log").read_text().splitlines()
                   if '"transition"' in x]
    assert [(t["from"], t["to"]) for t in transitions] == [
        ("NONE", "CONTINUE"), ("CONTINUE", "CONTINUE"), ("CONTINUE", "CONTINUE"), ("CONTINUE", "CONTINUE"),
        ("CONTINUE", "FINISH")]
    assert all(t["run_id"] == run_dir.name for t in transitions)


async def test_demo_turns_wifi_on_in_the_simulator(tmp_path: Path) -> None:
    settings = load_settings(DEMO, overrides={"logs": {"dir": str(tmp_path)}})
    driver = SimDriver()
    assert driver.phone.state("com.android.settings")["wifi"] is False
    result = await Session(settings, device=driver).run()
    assert result.status == "FINISH"
    assert driver.phone.state("com.android.settings")["wifi"] is True
    assert 'checked="true"' in (await driver.get_ui_tree())


@pytest.mark.parametrize(("task", "steps", "said", "reason"), [
    ("fail_model.yaml", 2, "2 steps", "no fax app is installed on this phone"),
    # the third action asked for did not run: the last step of the budget is the answer's
    ("out_of_steps.yaml", 3, "2 steps (3 turns)", "reached the step limit (3 steps) without finishing"),
    ("malformed.yaml", 2, "1 step (2 turns)", "llm_interaction failed: the model's reply was invalid twice: "
                                              "the JSON object in the reply is not closed"),
    ("unknown_status.yaml", 2, "1 step (2 turns)", "the model answered with unknown status 'DONE' (expected one "
                                                   "of CONTINUE, FINISH, FAIL, PENDING, TAKEOVER)"),
])
def test_failing_tasks_end_in_fail_with_reason_and_steps_on_disk(tmp_path: Path, task: str, steps: int, said: str,
                                                                   reason: str) -> None:
    code, out = run_cli("run", str(TASKS / task), "--log-dir", str(tmp_path))
    assert code == 1, out
    assert f"FAIL after {said} in " in out and reason in out
    run_dir = only_run_dir(tmp_path)
    result = json.loads((run_dir / "run.json").read_text())
    assert (result["status"], result["outcome"], result["reason"], result["steps"]) == ("FAIL", "failed", reason,
                                                                                         steps)
    lines = steps_of(run_dir)
    assert len(lines) == steps
    for line in lines:
        assert (run_dir / "steps" / f"{line['step']:04d}" / "screenshot.png").exists()
    assert (run_dir / "final.png").exists()
    moves = [(t["from"], t["to"]) for t in map(json.loads, (run_dir / "run.log").read_text().splitlines())
             if t["event"] == "transition"]
    assert moves[-1] == ("CONTINUE", "FAIL")  # FAIL ends the round; its work (final.png) ran once


def test_malformed_reply_was_reasked_once(tmp_path: Path) -> None:
    run_cli("run", str(TASKS / "malformed.yaml"), "--log-dir", str(tmp_path))
    step2 = steps_of(only_run_dir(tmp_path))[1]
    assert len(step2["parse_errors"]) == 2
    assert step2["parse_errors"][0] == "the reply contains no JSON object"


@pytest.mark.parametrize(("args", "message"), [
    (["run", "missing.yaml"], "missing.yaml: cannot read"),
    (["run", str(DEMO), "--max-steps", "0"], "--max-steps: must be a positive number"),
    (["run", str(DEMO), "--device", "sim", "--driver", "u2"], "--driver: --driver is for real phones"),
])
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    code, _ = run_cli(*args, "--log-dir", str(tmp_path))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert "Traceback" not in err


async def test_a_runs_action_recording_replays_onto_a_fresh_phone(tmp_path: Path) -> None:
    from ufo_mobile.core.device.recording import load_recording, replay

    settings = load_settings(DEMO, overrides={"logs": {"dir": str(tmp_path)}})
    result = await Session(settings, device=SimDriver()).run()
    fresh = SimDriver()
    replayed = await replay(load_recording(result.run_dir / "actions.jsonl"), fresh, speed=100.0)
    assert replayed.replayed == [0, 1, 2]
    assert fresh.phone.state("com.android.settings")["wifi"] is True


def test_a_bad_model_script_leaves_no_half_run_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text("replies: []\n")
    task = tmp_path / "t.yaml"
    task.write_text("task: x\nmodel: {script: s.yaml}\n")
    code, _ = run_cli("run", str(task), "--log-dir", str(tmp_path / "logs"))
    assert code == 2
    assert "s.yaml: replies" in capsys.readouterr().err
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(("mode", "agents"), [("direct", {"MobileAgent"}), ("reasoning", {"Manager", "Executor"}),
                                              ("codeact", {"CodeActAgent"})])
def test_the_demo_runs_in_every_mode(tmp_path: Path, mode: str, agents: set[str]) -> None:
    code, out = run_cli("run", str(DEMO), "--mode", mode, "--log-dir", str(tmp_path))
    assert code == 0 and "FINISH after" in out and "Wi-Fi is on." in out
    run_dir = only_run_dir(tmp_path)
    assert {s["agent"] for s in steps_of(run_dir)} == agents
    assert json.loads((run_dir / "run.json").read_text())["settings"]["mode"] == mode


def test_an_unknown_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli("run", str(DEMO), "--mode", "magic", "--log-dir", str(tmp_path))
    assert exited.value.code == 2 and "invalid choice: 'magic'" in capsys.readouterr().err


def test_the_report_switch_turns_the_end_of_run_report_off(tmp_path: Path) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(DEMO.read_text().replace("limits:", "logs: {report: false}\nlimits:")
                    .replace("scripts/demo_wifi.yaml", str(DEMO.parent / "scripts" / "demo_wifi.yaml")))
    code, out = run_cli("run", str(task), "--log-dir", str(tmp_path / "logs"))
    assert code == 0, out
    assert not (only_run_dir(tmp_path / "logs") / "report.html").exists() and "report:" not in out


@pytest.mark.parametrize(("device", "options", "kind"), [
    ("{kind: u2}", [], "u2"),                       # --device SERIAL keeps the file's driver
    ("{kind: u2}", ["--driver", "adb"], "adb"),     # --driver changes it
    ("{kind: adb}", ["--driver", "u2"], "u2"),
    ("{kind: sim}", [], "adb"),                     # a task for the simulated phone: plain adb on a real one
    ("{kind: sim}", ["--driver", "u2"], "u2"),
])
def test_device_serial_keeps_the_task_files_driver_unless_driver_is_given(
        tmp_path: Path, device: str, options: list[str], kind: str) -> None:
    from ufo_mobile.cli import build_parser, on_a_real_phone, run_settings
    from ufo_mobile.cli.replay_cmd import replay_overrides
    from ufo_mobile.settings import settings_of_run

    task = tmp_path / "task.yaml"
    task.write_text(f"task: x\nmodel: {{script: s.yaml}}\ndevice: {device}\n", encoding="utf-8")
    args = build_parser().parse_args(["run", str(task), "--device", "R58M41", *options])
    settings = run_settings(args)
    assert (settings.device.kind, settings.device.serial) == (kind, "R58M41")
    # --resume and replay start from a run's settings, and treat --device and --driver alike
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    recorded = load_settings(task, env={}).model_dump(mode="json")
    (run_dir / "run.json").write_text(json.dumps({"status": "FAIL", "settings": recorded}), encoding="utf-8")
    resumed = run_settings(build_parser().parse_args(["run", "--resume", str(run_dir), "--device", "R58M41",
                                                      *options]))
    assert (resumed.device.kind, resumed.device.serial) == (kind, "R58M41")
    replay_args = build_parser().parse_args(["replay", str(run_dir), "--device", "R58M41", *options])
    replayed = on_a_real_phone(settings_of_run({"settings": recorded}, overrides=replay_overrides(replay_args)),
                               replay_args)
    assert (replayed.device.kind, replayed.device.serial) == (kind, "R58M41")


FAILING_CLICKS = """replies:
  - {status: CONTINUE, actions: [{name: open_app, args: {text: Settings}}]}
  - {status: CONTINUE, actions: [{name: click, args: {index: 99}}]}
  - {status: CONTINUE, actions: [{name: click, args: {index: 98}}, {name: click, args: {index: 3, text: Wi-Fi}}]}
  - {status: CONTINUE, actions: [{name: click, args: {index: 3, text: Wi-Fi}}]}
  - {status: CONTINUE, actions: [{name: click, args: {index: 3, text: Use Wi-Fi}}]}
  - {status: FINISH, result: Wi-Fi is on.}
"""


def failing_clicks_task(tmp_path: Path) -> Path:
    """Wi-Fi turned on after two clicks on controls that do not exist (the second of a turn of two:
    the action after it did not run, and is not counted)."""
    (tmp_path / "s.yaml").write_text(FAILING_CLICKS, encoding="utf-8")
    task = tmp_path / "t.yaml"
    task.write_text("task: Turn on Wi-Fi\nmodel: {kind: scripted, script: s.yaml}\nlimits: {max_steps: 10}\n",
                    encoding="utf-8")
    return task


def test_a_run_whose_actions_failed_says_so_at_the_end_and_in_its_records(tmp_path: Path) -> None:
    code, out = run_cli("run", str(failing_clicks_task(tmp_path)), "--log-dir", str(tmp_path / "logs"))
    assert code == 0, out
    assert re.search(r"^FINISH after 6 steps in [0-9.]+ s, 2 actions failed: Wi-Fi is on\.$", out, re.M), out
    run_dir = only_run_dir(tmp_path / "logs")
    assert json.loads((run_dir / "run.json").read_text())["actions_failed"] == 2
    assert 'data-failed="2">2 actions failed<' in (run_dir / "report.html").read_text(encoding="utf-8")


async def test_the_run_result_counts_failed_actions_not_steps(tmp_path: Path) -> None:
    settings = load_settings(failing_clicks_task(tmp_path), overrides={"logs": {"dir": str(tmp_path / "logs")}})
    result = await Session(settings, device=SimDriver()).run()
    assert (result.status, result.actions_failed) == ("FINISH", 2)
    assert result.to_json()["actions_failed"] == 2


def test_a_clean_run_says_nothing_of_failed_actions(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path))
    assert code == 0, out
    assert re.search(r"^FINISH after 4 steps in [0-9.]+ s: Wi-Fi is on\.$", out, re.M), out
    assert "failed" not in out
    run_dir = only_run_dir(tmp_path)
    assert json.loads((run_dir / "run.json").read_text())["actions_failed"] == 0
    assert 'id="actions-failed"' not in (run_dir / "report.html").read_text(encoding="utf-8")


def test_quiet_prints_only_the_summary(tmp_path: Path) -> None:
    code, out = run_cli("run", str(failing_clicks_task(tmp_path)), "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 0, out
    run_dir = only_run_dir(tmp_path / "logs")
    lines = out.splitlines()
    assert len(lines) == 4, out
    assert re.fullmatch(r"FINISH after 6 steps in [0-9.]+ s, 2 actions failed: Wi-Fi is on\.", lines[0])
    assert lines[1:] == [f"run directory: {run_dir}",
                         "tokens: 0 prompt + 0 completion in 6 model calls, cost $0.0000",
                         f"report: {run_dir / 'report.html'}"]


def test_a_turn_of_several_actions_shows_each_on_its_line(tmp_path: Path) -> None:
    script = tmp_path / "chain.yaml"
    script.write_text(json.dumps({"replies": [
        {"status": "CONTINUE", "thought": "open, then home",
         "actions": [{"name": "open_app", "args": {"text": "Settings"}},
                     {"name": "system_button", "args": {"button": "home"}}]},
        {"status": "FINISH", "thought": "done", "result": "ok"}]}))
    task = tmp_path / "task.yaml"
    task.write_text(f"task: Open Settings, then go home\nmodel: {{script: {script}}}\n")
    code, out = run_cli("run", str(task), "--log-dir", str(tmp_path / "logs"))
    assert code == 0, out
    line = next(line for line in out.splitlines() if line.startswith("step   1"))
    assert "2 actions: open_app, system_button" in line  # the chain, not its first action alone
    code, report = run_cli("report", str(only_run_dir(tmp_path / "logs")))
    assert code == 0 and "2 actions: open_app, system_button" in report  # read back the same way
