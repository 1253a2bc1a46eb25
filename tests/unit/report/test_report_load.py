"""Reading a run directory back for the report: every file optional, torn lines skipped, runs that
were cut off or are still going told apart."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from tests.unit.report.fake_runs import make_run, step_line, write_step
from ufo_mobile.core.trace.files import RunLock
from ufo_mobile.report import render_report, write_report
from ufo_mobile.report.load import load_run


def test_a_finished_run_is_read_whole(tmp_path: Path) -> None:
    run = load_run(make_run(tmp_path, steps=3))
    assert (run.status, run.failed, run.running, run.mode) == ("FINISH", False, False, "direct")
    assert [s.number for s in run.steps] == [1, 2, 3] and all(s.recorded for s in run.steps)
    assert [(t.source, t.target) for t in run.transitions][:2] == [("NONE", "CONTINUE"), ("CONTINUE", "CONTINUE")]
    first = run.steps[0]
    assert first.screen_size == (1080, 2400)
    assert first.image is not None and first.image.name == "annotated.png"
    assert first.controls and first.controls[2]["index"] == 3
    assert first.result == {"success": True, "summary": "clicked [3] 'Wi-Fi' at (540, 346)"}
    assert not run.problems and not first.missing


def test_annotated_jpg_is_the_steps_picture_and_a_run_written_before_it_shows_annotated_png(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2)
    folder = run_dir / "steps" / "0001"
    with Image.open(folder / "annotated.png") as image:
        image.save(folder / "annotated.jpg", format="JPEG")
    run = load_run(run_dir)
    first, second = run.steps
    assert first.image == folder / "annotated.jpg"  # preferred to annotated.png
    assert second.image is not None and second.image.name == "annotated.png"  # an older run's step
    page = render_report(run_dir)
    assert 'href="steps/0001/annotated.jpg"' in page and 'href="steps/0002/annotated.png"' in page
    assert 'alt="step 1: annotated screenshot"' in page and 'alt="step 2: annotated screenshot"' in page


def test_missing_run_json_and_step_files_are_named_not_fatal(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2)
    (run_dir / "run.json").unlink()
    folder = run_dir / "steps" / "0001"
    for name in ("annotated.png", "prompt.json", "reply.txt", "controls.json"):
        (folder / name).unlink()
    run = load_run(run_dir)
    assert run.status == "UNKNOWN" and any("run.json" in p for p in run.problems)
    step = run.steps[0]
    assert step.image is not None and step.image.name == "screenshot.png"  # the raw one stands in
    assert step.missing == ["annotated.png", "controls.json", "prompt.json", "reply.txt"]
    page = render_report(run_dir)
    assert "Files missing: annotated.png, controls.json, prompt.json, reply.txt" in page
    assert 'data-outcome="UNKNOWN"' in page and "run.json unreadable" in page


def test_a_torn_last_line_and_an_unrecorded_step_folder(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2, status="RUNNING")
    with (run_dir / "steps.jsonl").open("a") as f:
        f.write('{"step": 3, "agent": "Mobi')  # a kill in the middle of a line
    write_step(run_dir, step_line(3))  # the files of step 3 were written, its line was not
    (run_dir / "steps" / "0004").mkdir()  # a step that had only begun
    run = load_run(run_dir)
    assert run.problems == ["steps.jsonl: 1 line could not be read (torn by a crash, or not a JSON object)"]
    assert [(s.number, s.recorded) for s in run.steps] == [(1, True), (2, True), (3, False), (4, False)]
    assert run.steps[3].image is None
    page = render_report(run_dir)
    assert "the run stopped while it was under way" in page
    assert 'data-steps="2"' in page and "(+2 not recorded)" in page
    assert "no screenshot" in page


def test_a_run_whose_process_died_is_shown_as_cut_off(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=1, status="RUNNING")
    (run_dir / "run.lock").write_text("1\n")  # nobody holds it: the process is gone
    run = load_run(run_dir)
    assert run.status == "FAIL" and run.data["cut_off"] is True and run.failed
    assert json.loads((run_dir / "run.json").read_text())["status"] == "FAIL"  # settled, as `report` does
    page = render_report(run_dir)
    assert 'id="break"' in page and "cut off" in page
    assert page.index('id="failure"') < page.index('id="timeline"')


def test_a_run_still_going_is_shown_as_running(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=1, status="RUNNING")
    lock = RunLock(run_dir)  # its process is alive
    try:
        run = load_run(run_dir)
        assert run.running and not run.failed
        page = render_report(run_dir)
    finally:
        lock.release()
    assert 'data-outcome="RUNNING"' in page and 'class="break running"' in page
    assert "still running" in page and 'id="failure"' not in page


def test_no_steps_file_at_all(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=0, status="FAIL", reason="cannot connect to the device")
    (run_dir / "steps.jsonl").unlink()
    (run_dir / "run.log").unlink()
    run = load_run(run_dir)
    assert run.steps == [] and "steps.jsonl is missing" in run.problems and run.transitions == []
    path = write_report(run_dir)
    page = path.read_text()
    assert path == run_dir / "report.html"
    assert "No step was recorded." in page and "run.log has no state transitions" in page
    assert "cannot connect to the device" in page


def test_hostile_json_shapes_do_not_break_loading(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=1)
    (run_dir / "steps.jsonl").write_text('[1, 2]\n"text"\n' + json.dumps(step_line(
        1, action={"name": "click", "args": ["not", "a", "dict"]}, timings=None, cache="odd", dump_refusals="idle",
        usage={"calls": "x"})) + "\n")
    folder = run_dir / "steps" / "0001"
    (folder / "controls.json").write_text('{"not": "a list"}')
    (folder / "prompt.json").write_text("not json at all")
    run = load_run(run_dir)
    assert run.problems == ["steps.jsonl: 2 lines could not be read (torn by a crash, or not a JSON object)"]
    page = render_report(run_dir)
    assert "not json at all" in page and 'id="step-1"' in page


def test_reasoning_state_usage_and_raw_screenshot_are_read(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, steps=2, mode="reasoning")
    state = {"plan": ["Open Wi-Fi", "Switch Wi-Fi on"], "manager_memory": ["Wi-Fi lives in Settings."],
             "current_subgoal": "Open Wi-Fi",
             "step_records": [{"step": 1, "agent": "Manager", "subgoal": ""},
                              {"step": 2, "agent": "Executor", "subgoal": "Open Wi-Fi"}]}
    (run_dir / "steps" / "0002" / "state.json").write_text(json.dumps(state))
    (run_dir / "steps" / "0001" / "state.json").write_text(json.dumps({"plan": [], "manager_memory": []}))
    (run_dir / "steps" / "0002" / "model.json").write_text(json.dumps({"usage": {"prompt_tokens": 7, "calls": 1}}))
    lines = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    del lines[1]["usage"]  # an older line without its usage: model.json has it
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    first, second = load_run(run_dir).steps
    assert first.plan is None  # nothing planned: no fields
    assert second.plan is not None
    assert second.plan.plan == ("Open Wi-Fi", "Switch Wi-Fi on") and second.plan.memory == ("Wi-Fi lives in Settings.",)
    assert (second.plan.current_subgoal, second.plan.subgoal) == ("Open Wi-Fi", "Open Wi-Fi")
    assert first.usage == {"prompt_tokens": 100, "cached_tokens": 0, "completion_tokens": 20, "cost_usd": 0.001,
                           "calls": 1}
    assert second.usage == {"prompt_tokens": 7, "calls": 1}
    assert first.screenshot == run_dir / "steps" / "0001" / "screenshot.png"
    (first.folder / "screenshot.png").unlink()
    assert first.screenshot is None and first.image is not None  # the annotated one is still there
