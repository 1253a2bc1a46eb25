"""One job on one phone: an ordinary Session run with the phone's device settings, and an outcome
that says whether the phone was to blame."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ufo_mobile.core.session import RunResult
from ufo_mobile.errors import ConfigError
from ufo_mobile.fleet import runner
from ufo_mobile.fleet.devices import Phone
from ufo_mobile.fleet.jobs import Event, Job, Task, run_id_for
from ufo_mobile.fleet.local import LocalEngine
from ufo_mobile.fleet.runner import RunControl, TaskSettings, device_error, run_job, settings_for
from ufo_mobile.settings import load_settings
from ufo_mobile.shipped import CONFIG_DIR

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"


def result(status: str = "FAIL", reason: str = "", interrupted: bool = False) -> RunResult:
    return RunResult("r", status, reason, "", 2, 0, 0, 0.0, Path("."), 1.0, interrupted=interrupted)


@pytest.mark.parametrize(("run", "steps", "expected"), [
    (result("FINISH"), [], None),
    (result(reason="the model gave up"), [{"error": None}], None),
    (result(reason="cannot connect to the device: [x] adb connect x: refused"), [], "gone"),
    (result(reason="data_collection failed: [x] screenshot: device offline"),
     [{"error": "DeviceDisconnectedError: [x] screenshot: device offline"}], "gone"),
    (result(reason="action_execution failed: [x] tap timed out after 20 s"),
     [{"error": "DeviceTimeoutError: [x] tap timed out after 20 s"}], "gone"),
    (result(reason="data_collection failed: [x] dump: exit 1"), [{"error": "DeviceCommandError: [x] dump: exit 1"}],
     "command"),
    (result(reason="interrupted", interrupted=True), [{"error": "DeviceDisconnectedError: x"}], None),
])
def test_whether_the_phone_was_to_blame(run: RunResult, steps: list[dict[str, object]], expected: str | None) -> None:
    assert device_error(run, steps) == expected


def demo_job(attempt: int = 1) -> Job:
    task = Task(3, str(DEMO), None, "turn-on-wifi", "Turn on Wi-Fi")
    return Job(task, attempt, run_id_for(task, attempt))


def test_the_phone_overrides_the_tasks_device_and_the_batch_its_log_dir(tmp_path: Path) -> None:
    task = demo_job().task
    adb = settings_for(task, Phone("adb", "127.0.0.1:5555", adb_port=5038), tmp_path, driver="u2")
    assert (adb.device.kind, adb.device.serial, adb.device.adb_port, adb.logs.dir) == ("u2", "127.0.0.1:5555", 5038,
                                                                                       tmp_path)
    assert adb.limits.max_steps == 8 and adb.task.text == "Turn on Wi-Fi"  # the rest is the task's
    sim = settings_for(task, Phone("sim", "sim-1"), tmp_path)
    assert sim.device.kind == "sim"


def test_a_job_is_a_run_like_any_other(tmp_path: Path) -> None:
    events: list[Event] = []
    outcome = asyncio.run(run_job(demo_job(), Phone("sim", "sim-2"), tmp_path, on_event=events.append))
    assert (outcome.status, outcome.steps, outcome.answer, outcome.phone) == ("FINISH", 4, "Wi-Fi is on.", "sim-2")
    assert outcome.run_id == "t03-turn-on-wifi-a1" and outcome.run_dir == str(tmp_path / "t03-turn-on-wifi-a1")
    run = json.loads((tmp_path / "t03-turn-on-wifi-a1" / "run.json").read_text())
    assert run["status"] == "FINISH" and (tmp_path / "t03-turn-on-wifi-a1" / "report.html").is_file()
    assert [e.kind for e in events] == ["start", "step", "step", "step", "step", "end"]
    assert events[1].action == "open_app(text='Settings')" and events[-1].status == "FINISH"
    assert outcome.device_error is None and outcome.archive is None


def test_a_stop_before_the_run_starts_ends_it_as_interrupted(tmp_path: Path) -> None:
    control = RunControl()
    control.interrupt("interrupted", 2)
    outcome = asyncio.run(run_job(demo_job(), Phone("sim", "sim-1"), tmp_path, control=control))
    assert (outcome.status, outcome.reason, outcome.interrupted, outcome.signal) == ("FAIL", "interrupted", True, 2)
    run = json.loads((tmp_path / outcome.run_id / "run.json").read_text())
    assert (run["status"], run["reason"]) == ("FAIL", "interrupted")


def test_a_task_file_that_no_longer_loads_is_an_error_outcome(tmp_path: Path) -> None:
    task = Task(1, str(tmp_path / "gone.yaml"), None, "gone", "x")
    outcome = asyncio.run(run_job(Job(task, 1, "t01-gone-a1"), Phone("sim", "sim-1"), tmp_path))
    assert outcome.status == "ERROR" and outcome.reason.startswith("the task does not load here: ")
    assert outcome.device_error is None


def test_the_local_engine_loads_a_task_file_once_for_all_its_runs(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Path] = []

    def counted(path: Path, **kwargs: object) -> object:
        loads.append(path)
        return load_settings(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "load_settings", counted)
    engine = LocalEngine(tmp_path)
    first, second = demo_job(), demo_job(attempt=2)
    ended = [asyncio.run(engine.run(job, Phone("sim", f"sim-{n}"), lambda event: None))
             for n, job in enumerate((first, second), start=1)]
    assert [o.status for o in ended] == ["FINISH", "FINISH"]
    assert loads == [DEMO]


def test_kept_task_settings_follow_a_changed_file_and_a_bad_one_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(DEMO.read_text().replace("scripts/demo_wifi.yaml", str(DEMO.parent / "scripts/demo_wifi.yaml")))
    task = Task(1, str(path), None, "t", "Turn on Wi-Fi")
    kept = TaskSettings()
    assert kept.get(task) is kept.get(task)
    assert kept.get(task).limits.max_steps == 8
    path.write_text(path.read_text().replace("max_steps: 8", "max_steps: 12"))
    assert kept.get(task).limits.max_steps == 12
    path.write_text("task: [not, a, mapping]\n")
    for _ in range(2):
        with pytest.raises(ConfigError):
            kept.get(task)
