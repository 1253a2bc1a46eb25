"""``run --resume``: a run killed with SIGKILL in the middle of step 4 is continued from its last
completed step (3) on the same phone, in the same run directory, and finishes; steps 1-3 are not
done again. Also the refusals: a live run, a finished one, both a task and --resume; a run whose
files were damaged (a state or a step record of the wrong shape is refused in one line, leaving the
run as it was; a last state cut short is passed over for the newest whole one, and the run says so)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.faults.conftest import (
    Cli,
    ServedPhone,
    cli,
    one_line_error,
    only_run_dir,
    run_json,
    step_lines,
    wait_until,
    write_task,
)

OPEN = {"status": "CONTINUE", "thought": "open", "action": {"name": "open_app", "args": {"text": "Settings"}}}
WIFI = {"status": "CONTINUE", "thought": "tap", "action": {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}}}
SWITCH = {"status": "CONTINUE", "thought": "on", "action": {"name": "click", "args": {"index": 3, "text": "Use Wi-Fi"}}}
DONE = {"status": "FINISH", "thought": "done", "result": "Wi-Fi is on."}


def test_a_run_killed_at_step_4_resumes_after_step_3_and_finishes(tmp_path: Path,
                                                                  served_phone: ServedPhone) -> None:
    replies: list[Any] = [OPEN, WIFI, SWITCH, {"delay_seconds": 600, "reply": DONE}]
    task = write_task(tmp_path, replies, task="Turn on Wi-Fi")
    run = Cli("run", str(task), "--device", served_phone.serial, "--driver", "adb", "--log-dir", "logs",
              cwd=tmp_path, env=served_phone.env)
    run.wait_line("step   3")
    logs = tmp_path / "logs"
    wait_until(lambda: len(step_lines(only_run_dir(logs))) == 3, "3 steps on disk")
    run.signal(signal.SIGKILL)  # in step 4, waiting for the model: nothing can be written now
    run.finish()
    run_dir = only_run_dir(logs)
    assert run_json(run_dir)["status"] == "RUNNING"
    actions_before = (run_dir / "actions.jsonl").read_text().splitlines()
    script = tmp_path / "task-script.yaml"  # the model answers at once this time
    script.write_text(json.dumps({"replies": [OPEN, WIFI, SWITCH, DONE]}))

    code, out, err = cli("run", "--resume", str(run_dir), cwd=tmp_path, env=served_phone.env)
    assert code == 0, out + err
    assert "FINISH after 4 steps" in out and "Wi-Fi is on." in out
    assert "step   1" not in out and "step   4" in out  # only the rest ran
    lines = step_lines(run_dir)
    assert [line["step"] for line in lines] == [1, 2, 3, 4]
    assert lines[3]["status"] == "FINISH"
    screen = (run_dir / "steps" / "0004" / "screen.txt").read_text()
    assert 'Switch "Use Wi-Fi" click check=on' in screen  # the phone kept its state: the switch is on
    actions_after = (run_dir / "actions.jsonl").read_text().splitlines()
    assert actions_after[:len(actions_before)] == actions_before and len(actions_after) == len(actions_before)
    result = run_json(run_dir)
    assert result["status"] == "FINISH" and result["task"] == "Turn on Wi-Fi"
    (resumed,) = result["resumed"]
    assert resumed["at_step"] == 3 and resumed["previous_status"] == "FAIL"
    assert resumed["previous_reason"].startswith("cut off")
    events = [json.loads(x) for x in (run_dir / "run.log").read_text().splitlines()]
    assert [e["at_step"] for e in events if e["event"] == "run_resumed"] == [3]
    report = (run_dir / "report.html").read_text(encoding="utf-8")  # the report shows the break
    assert "The run stopped after step 3 (FAIL: cut off" in report and "after step 3" in report


TARS = ["Thought: Settings holds Wi-Fi.\nAction: open_app(app_name='Settings')",
        "Thought: The Wi-Fi row.\nAction: click(point='<point>252 155</point>')",
        "Thought: The switch is off.\nAction: click(point='<point>252 164</point>')",
        "Thought: It is on.\nAction: finished(content='Wi-Fi is on.')"]


def test_a_run_in_a_pointing_format_resumes_with_its_own_turns(tmp_path: Path, served_phone: ServedPhone) -> None:
    script = tmp_path / "task-script.yaml"
    script.write_text(json.dumps({"replies": [DONE], "formats": {"ui-tars": [*TARS[:3], {"delay_seconds": 600,
                                                                                          "reply": TARS[3]}]}}))
    task = tmp_path / "task.yaml"
    task.write_text(f"task: Turn on Wi-Fi\nmodel: {{script: {script.name}, format: ui-tars}}\n")
    run = Cli("run", str(task), "--device", served_phone.serial, "--driver", "adb", "--log-dir", "logs",
              cwd=tmp_path, env=served_phone.env)
    run.wait_line("step   3")
    wait_until(lambda: len(step_lines(only_run_dir(tmp_path / "logs"))) == 3, "3 steps on disk")
    run.signal(signal.SIGKILL)
    run.finish()
    run_dir = only_run_dir(tmp_path / "logs")
    script.write_text(json.dumps({"replies": [DONE], "formats": {"ui-tars": TARS}}))

    code, out, err = cli("run", "--resume", str(run_dir), cwd=tmp_path, env=served_phone.env)
    assert code == 0, out + err
    assert "FINISH after 4 steps" in out and "Wi-Fi is on." in out
    assert [line["action"]["name"] if line["action"] else line["status"] for line in step_lines(run_dir)] == [
        "open_app", "click_at", "click_at", "FINISH"]
    prompt = json.loads((run_dir / "steps" / "0004" / "prompt.json").read_text())
    said = [m["content"] for m in prompt if m["role"] == "assistant"]  # its own turns, as it wrote them
    assert said == TARS[:3]


def test_resume_refuses_a_finished_run_and_a_task_with_it(tmp_path: Path) -> None:
    task = write_task(tmp_path, [DONE])
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 0, out + err
    run_dir = only_run_dir(tmp_path / "logs")
    code, out, err = cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert code == 2 and err.count("\n") == 1 and "the run finished: there is nothing to resume" in err
    code, out, err = cli("run", str(task), "--resume", str(run_dir), cwd=tmp_path)
    assert code == 2 and "give a task file or --resume RUN_DIR, not both" in err
    code, out, err = cli("run", "--resume", str(tmp_path), cwd=tmp_path)
    assert code == 2 and "not a run directory" in err


def run_stopped_after_3_steps(tmp_path: Path) -> Path:
    """A run on the built-in simulated phone that hit its step limit after step 3 (FAIL: resumable)."""
    task = write_task(tmp_path, [OPEN, WIFI, SWITCH, DONE], task="Turn on Wi-Fi")
    code, out, err = cli("run", str(task), "--log-dir", "logs", "--max-steps", "3", cwd=tmp_path)
    assert code == 1, out + err
    run_dir = only_run_dir(tmp_path / "logs")
    assert [line["step"] for line in step_lines(run_dir)] == [1, 2, 3]
    return run_dir


def state_path(run_dir: Path, step: int) -> Path:
    return run_dir / "steps" / f"{step:04d}" / "state.json"


def edit_state(run_dir: Path, step: int, change: Any) -> None:
    path = state_path(run_dir, step)
    state = json.loads(path.read_text())
    change(state)
    path.write_text(json.dumps(state))


def without_status(state: dict[str, Any]) -> None:
    del state["step_records"][0]["status"]


@pytest.mark.parametrize(("change", "field"), [
    (lambda state: state.update(fast_memory=5), "fast_memory"),
    (lambda state: state.update(plan={"a": 1}), "plan"),
    (without_status, "step_records.0.status"),  # a step record missing a field
    (lambda state: state.update(steps_used="many"), "steps_used"),
])
def test_a_state_of_the_wrong_shape_is_refused_in_one_line_and_the_run_is_left_as_it_was(
        tmp_path: Path, change: Any, field: str) -> None:
    run_dir = run_stopped_after_3_steps(tmp_path)
    edit_state(run_dir, 3, change)
    before = (run_json(run_dir), (run_dir / "steps.jsonl").read_text())
    code, out, err = cli("run", "--resume", str(run_dir), "--max-steps", "10", cwd=tmp_path)
    one_line_error(code, err, str(state_path(run_dir, 3)), f": {field}: ")
    assert (run_json(run_dir), (run_dir / "steps.jsonl").read_text()) == before  # FAIL, as it was: not RUNNING
    assert run_json(run_dir)["status"] == "FAIL"


@pytest.mark.parametrize(("line", "where"), [
    ('{"step": "three", "usage": {}}', "steps.jsonl:4: step: "),
    ('{"step": 4, "usage": [1, 2]}', "steps.jsonl:4: usage: "),
    ('{"step": 4, "model_calls": 7}', "steps.jsonl:4: model_calls: "),
    ("[4]", "steps.jsonl:4: "),
])
def test_a_step_record_of_the_wrong_shape_is_refused_in_one_line(tmp_path: Path, line: str, where: str) -> None:
    run_dir = run_stopped_after_3_steps(tmp_path)
    with (run_dir / "steps.jsonl").open("a") as steps:
        steps.write(line + "\n")
    code, out, err = cli("run", "--resume", str(run_dir), "--max-steps", "10", cwd=tmp_path)
    one_line_error(code, err, where)
    assert run_json(run_dir)["status"] == "FAIL"


def test_a_list_of_breaks_of_the_wrong_shape_is_refused_in_one_line(tmp_path: Path) -> None:
    run_dir = run_stopped_after_3_steps(tmp_path)
    (run_dir / "run.json").write_text(json.dumps({**run_json(run_dir), "resumed": 5}))
    code, out, err = cli("run", "--resume", str(run_dir), "--max-steps", "10", cwd=tmp_path)
    one_line_error(code, err, "run.json: resumed: ")
    assert run_json(run_dir)["status"] == "FAIL"


def test_a_last_state_cut_short_resumes_with_the_newest_whole_one_and_says_so(tmp_path: Path) -> None:
    run_dir = run_stopped_after_3_steps(tmp_path)
    whole = state_path(run_dir, 3).read_text()
    state_path(run_dir, 3).write_text(whole[:len(whole) // 2])  # a crash or a full disk cut it short
    code, out, err = cli("run", "--resume", str(run_dir), "--max-steps", "10", cwd=tmp_path)
    assert code == 0, out + err
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: resuming after step 3 with the plan and memory of step 2: steps/0003/state.json is "
                     f"not whole JSON: {notes[0].split('not whole JSON: ', 1)[1]}"]
    assert notes[0].endswith("; what step 3 added to them is lost (the phone and the run's record keep it)")
    # step 3's share of the step budget went with its state: the summary counts the turns apart
    assert "FINISH after 3 steps (4 turns)" in out and "step   3" not in out and "step   4" in out
    assert [line["step"] for line in step_lines(run_dir)] == [1, 2, 3, 4]  # nothing done twice, nothing lost
    (resumed,) = run_json(run_dir)["resumed"]
    assert (resumed["at_step"], resumed["state_from_step"]) == (3, 2) and resumed["note"] == notes[0][6:]
    assert state_path(run_dir, 3).read_text() == whole[:len(whole) // 2]  # the record is left as it was


def test_no_whole_state_at_all_is_refused_in_one_line(tmp_path: Path) -> None:
    run_dir = run_stopped_after_3_steps(tmp_path)
    for step in (1, 2, 3):
        state_path(run_dir, step).write_text('{"plan": ["a"')
    code, out, err = cli("run", "--resume", str(run_dir), "--max-steps", "10", cwd=tmp_path)
    one_line_error(code, err, "no step left a whole state.json to continue from (steps/0003/state.json is not "
                              "whole JSON")
    assert run_json(run_dir)["status"] == "FAIL"
