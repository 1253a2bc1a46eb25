"""``run --resume``: a run killed with SIGKILL in the middle of step 4 is continued from its last
completed step (3) on the same phone, in the same run directory, and finishes; steps 1-3 are not
done again. Also the refusals: a live run, a finished one, both a task and --resume."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from tests.faults.conftest import Cli, ServedPhone, cli, only_run_dir, run_json, step_lines, wait_until, write_task

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
