"""Phones that freeze or are not there, and runs stopped by signals: the process always exits, and
``run.json`` always ends in a final state with a reason (or, after SIGKILL, is settled as cut off)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.adb_server import free_port
from tests.faults.conftest import (
    Cli,
    ServedPhone,
    cli,
    log_events,
    only_run_dir,
    run_json,
    step_lines,
    wait_until,
    write_task,
)

LAUNCH = {"status": "CONTINUE", "thought": "open", "action": {"name": "open_app", "args": {"text": "Settings"}}}
TAP_WIFI = {"status": "CONTINUE", "thought": "tap", "action": {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}}}


def slow(reply: dict[str, Any], seconds: float = 600) -> dict[str, Any]:
    """A reply the model takes ``seconds`` to give: the run is certainly inside it when signalled."""
    return {"delay_seconds": seconds, "reply": reply}


@pytest.mark.parametrize("driver", ["adb", "u2"])
def test_a_frozen_phone_ends_the_run_and_the_process(tmp_path: Path, served_phone: ServedPhone,
                                                     driver: str) -> None:
    task = write_task(tmp_path, [LAUNCH, TAP_WIFI, {"status": "FINISH", "result": "done"}],
                      extra="device: {command_timeout_seconds: 2}\n")
    run = Cli("run", str(task), "--device", served_phone.serial, "--driver", driver, "--log-dir", "logs",
              cwd=tmp_path, env=served_phone.env)
    run.wait_line("step   1")
    served_phone.freeze()  # SIGSTOP: the phone's transport stays open and never answers again
    code, out, err = run.finish()  # before the fix: never exited
    assert code == 1, out + err
    assert "Traceback" not in err and "Exception ignored" not in err
    run_dir = only_run_dir(tmp_path / "logs")
    result = run_json(run_dir)
    assert result["status"] == "FAIL" and "timed out" in result["reason"]
    used, turns = result["steps_used"], result["steps"]  # the action of the step that timed out did not run
    assert f"FAIL after {used} step{'s' if used != 1 else ''}" + (f" ({turns} turns)" if turns != used else "") in out
    assert step_lines(run_dir)[0]["result"]["success"] is True


def test_nothing_listening_is_refused_at_once(tmp_path: Path, adb_server: Any) -> None:
    task = write_task(tmp_path, [LAUNCH])
    address = f"127.0.0.1:{free_port()}"
    code, out, err = cli("run", str(task), "--device", address, "--log-dir", "logs", cwd=tmp_path,
                         env={"ANDROID_ADB_SERVER_PORT": str(adb_server.port)})
    assert code == 1, out + err
    reason = run_json(only_run_dir(tmp_path / "logs"))["reason"]
    # adb's answer follows, in adb's words (not asserted); "adb connect" refused, not timed out (our words)
    assert reason.startswith(f"cannot connect to the device: [{address}] adb connect {address}: ")
    assert reason.removeprefix(f"cannot connect to the device: [{address}] adb connect {address}: ").strip()
    assert "timed out" not in reason


@pytest.mark.parametrize(("signum", "code", "reason"), [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "terminated"),
    (signal.SIGHUP, 129, "hung up"),
])
def test_a_signal_ends_the_run_in_fail_with_the_step_recorded(tmp_path: Path, signum: int, code: int,
                                                              reason: str) -> None:
    task = write_task(tmp_path, [LAUNCH, slow(TAP_WIFI)])
    run = Cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    run.wait_line("step   1")
    _wait_for_model(run, tmp_path / "logs")
    run.signal(signum)
    exit_code, out, err = run.finish()
    assert exit_code == code, out + err
    assert "FAIL after 1 step (2 turns)" in out and out.rstrip().splitlines()[-4].endswith(reason)
    run_dir = only_run_dir(tmp_path / "logs")
    result = run_json(run_dir)
    assert (result["status"], result["reason"], result["steps"]) == ("FAIL", reason, 2)
    assert result["signal"] == signal.Signals(signum).name
    lines = step_lines(run_dir)
    assert [x["step"] for x in lines] == [1, 2]
    assert (lines[1]["status"], lines[1]["reason"]) == ("FAIL", reason)
    report = (run_dir / "report.html").read_text(encoding="utf-8")  # written for an interrupted run too
    assert reason in report and out.rstrip().splitlines()[-1] == f"report: logs/{run_dir.name}/report.html"


def test_an_ignored_signal_stays_ignored(tmp_path: Path) -> None:
    """``nohup python -m ufo_mobile run ...``: SIGHUP is ignored, so closing the terminal does not stop
    the run; SIGTERM still does."""
    task = write_task(tmp_path, [LAUNCH, slow(TAP_WIFI)])
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # what nohup does before it starts the command
    try:
        run = Cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    finally:
        signal.signal(signal.SIGHUP, previous)
    run.wait_line("step   1")
    run_dir = _wait_for_model(run, tmp_path / "logs")
    run.signal(signal.SIGHUP)
    run.signal(signal.SIGTERM)
    code, out, err = run.finish()
    assert code == 143, out + err
    assert run_json(run_dir)["reason"] == "terminated"
    assert "hung up" not in (run_dir / "run.log").read_text()


def test_a_second_ctrl_c_stops_waiting_and_still_records_interrupted(tmp_path: Path,
                                                                    served_phone: ServedPhone) -> None:
    """The first Ctrl-C cancels the step; the run then waits for the final screenshot of a frozen
    phone (a 600 s timeout). The second stops waiting: FAIL("interrupted") is still on disk."""
    task = write_task(tmp_path, [LAUNCH, slow(TAP_WIFI)], extra="device: {command_timeout_seconds: 600}\n")
    run = Cli("run", str(task), "--device", served_phone.serial, "--log-dir", "logs", cwd=tmp_path,
              env=served_phone.env)
    run.wait_line("step   1")
    run_dir = _wait_for_model(run, tmp_path / "logs")
    served_phone.freeze()
    run.signal(signal.SIGINT)
    _wait_for_log(run_dir, "run_failed")  # the FAIL state is waiting for the frozen phone
    run.signal(signal.SIGINT)
    code, out, err = run.finish()
    assert code == 130, out + err
    assert "Traceback" not in err and "CancelledError" not in out + err
    assert "FAIL after 1 step (2 turns)" in out and "interrupted" in out
    result = run_json(run_dir)
    assert (result["status"], result["reason"]) == ("FAIL", "interrupted")
    assert [x["step"] for x in step_lines(run_dir)] == [1, 2]
    events = [e["event"] for e in log_events(tmp_path / "logs")]
    assert "signal_again" in events and "run_abandoned" in events  # the second Ctrl-C did the stopping


def test_after_sigkill_the_next_run_and_report_say_cut_off(tmp_path: Path) -> None:
    task = write_task(tmp_path, [LAUNCH, slow(TAP_WIFI)])
    run = Cli("run", str(task), "--log-dir", "logs", "--run-id", "killed", cwd=tmp_path)
    run.wait_line("step   1")
    run.signal(signal.SIGKILL)
    code, _, _ = run.finish()
    assert code == -signal.SIGKILL
    killed = tmp_path / "logs" / "killed"
    assert run_json(killed)["status"] == "RUNNING"  # nothing could be written at SIGKILL

    code, out, _ = cli("report", str(killed), cwd=tmp_path)
    assert code == 1
    assert "FAIL after 1 step" in out and "cut off" in out
    assert run_json(killed)["status"] == "FAIL"

    again = tmp_path / "again"
    again.mkdir()
    run = Cli("run", str(write_task(again, [LAUNCH, slow(TAP_WIFI)])), "--log-dir", str(again / "logs"),
              "--run-id", "killed2", cwd=again)
    run.wait_line("step   1")
    run.signal(signal.SIGKILL)
    run.finish()
    code, out, _ = cli("run", str(write_task(again, [{"status": "FINISH", "result": "ok"}], name="next.yaml")),
                       "--log-dir", str(again / "logs"), cwd=again)
    assert code == 0, out
    cut = run_json(again / "logs" / "killed2")
    assert (cut["status"], cut["steps"], cut["cut_off"]) == ("FAIL", 1, True)
    assert cut["reason"] == ("cut off: the process ended without finishing the run (killed, or the machine "
                             "stopped); 1 step recorded")


def test_two_runs_with_the_same_id_take_the_next_free_one(tmp_path: Path) -> None:
    task = write_task(tmp_path, [{"status": "FINISH", "result": "ok"}])
    runs = [Cli("run", str(task), "--log-dir", "logs", "--run-id", "same", cwd=tmp_path) for _ in range(4)]
    results = [r.finish() for r in runs]
    assert [code for code, _, _ in results] == [0, 0, 0, 0], results
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["same", "same-2", "same-3", "same-4"]
    headers = {out.splitlines()[0] for _, out, _ in results}
    assert headers == {f"run {name}: test task  [direct · simulated phone (in-process) · scripted model "
                       "task-script.yaml]" for name in ("same", "same-2", "same-3", "same-4")}


def _wait_for_model(run: Cli, log_dir: Path) -> Path:
    """The run directory, once step 2 is waiting for the (slow) model."""
    def step_2_asked() -> bool:
        assert run.proc.poll() is None, "the run ended early"
        return any(e.get("event") == "model_call" and e.get("step") == 2 for e in log_events(log_dir))

    wait_until(step_2_asked, "step 2 asks the model")
    return only_run_dir(log_dir)


def _wait_for_log(run_dir: Path, event: str) -> None:
    wait_until(lambda: any(e.get("event") == event for e in log_events(run_dir.parent)), event)
