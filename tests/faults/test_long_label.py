"""A screen with a huge unbroken label (900 KB): the run observes it, bounded, and SIGTERM still
stops the run with FAIL (before the fix its wrap, quadratic, ran for many minutes on the event
loop, deaf to signals; the crashes of longer or wider labels are tested in tests/unit/sim)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.faults.conftest import Cli, log_events, only_run_dir, run_json, step_lines, wait_until, write_task

LABEL = 900 * 1024
LOOK = {"status": "CONTINUE", "thought": "look", "action": {"name": "wait", "args": {"duration": 0.01}}}


def _app(folder: Path) -> None:
    (folder / "app.yaml").write_text(
        "package: com.example.long\nlabel: Long\nstart: main\nscreens:\n  main:\n    title: Main\n"
        f'    body:\n      - {{id: label, text: "{"A" * LABEL}"}}\n', encoding="utf-8")


def test_sigterm_stops_a_run_on_a_screen_with_a_900_kb_label(tmp_path: Path) -> None:
    _app(tmp_path)
    slow_look = {"delay_seconds": 600, "reply": LOOK}  # the run is surely waiting for it when signalled
    task = write_task(tmp_path, [LOOK, slow_look],
                      extra="device: {sim: {apps: [app.yaml], start_app: com.example.long}}\n")
    run = Cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    run.wait_line("step   1")  # the big screen was observed, and the step acted

    def step_2_asked() -> bool:
        assert run.proc.poll() is None, "the run ended early"
        return any(e.get("event") == "model_call" and e.get("step") == 2 for e in log_events(tmp_path / "logs"))

    wait_until(step_2_asked, "step 2 asks the model")  # so step 2 observed the screen again
    run.signal(signal.SIGTERM)
    code, out, err = run.finish()
    assert code == 143, out + err
    assert "Traceback" not in err
    run_dir = only_run_dir(tmp_path / "logs")
    result = run_json(run_dir)
    assert (result["status"], result["reason"], result["signal"]) == ("FAIL", "terminated", "SIGTERM")
    lines = step_lines(run_dir)
    assert [x["step"] for x in lines] == [1, 2] and lines[-1]["status"] == "FAIL"
    screen = (run_dir / "steps" / "0001" / "screen.txt").read_text(encoding="utf-8")
    assert "AAAA" in screen and len(screen) < 20_000  # the label is there, and what is kept is bounded
