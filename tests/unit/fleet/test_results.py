"""What a batch leaves: batch.jsonl (one line per attempt), batch.html (links to every run's report), the summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ufo_mobile.fleet import results
from ufo_mobile.fleet.jobs import Outcome, Task
from ufo_mobile.fleet.scheduler import Attempt, TaskResult

HOSTILE = "done\x1b]0;pwned\x07\n<script>alert(1)</script>"


def task(index: int, name: str = "wifi") -> Task:
    return Task(index, f"/t/{name}.yaml", None, name, "Turn on Wi-Fi")


def outcome(batch_dir: Path, index: int, attempt: int, phone: str, status: str, **more: object) -> Outcome:
    run_id = f"t{index:02d}-wifi-a{attempt}"
    (batch_dir / run_id).mkdir()
    (batch_dir / run_id / "report.html").write_text("<html></html>")
    return Outcome(index, attempt, phone, run_id, status, run_dir=str(batch_dir / run_id), steps=4,
                   duration_seconds=2.5, **more)  # type: ignore[arg-type]


def sample(batch_dir: Path) -> tuple[results.BatchInfo, list[TaskResult]]:
    info = results.BatchInfo("batch-x", batch_dir, "local", ["p1", "p2"], 2, duration_seconds=10.0,
                             removed={"p1": "data_collection failed: device offline"})
    retried = TaskResult(task(1), [
        Attempt(outcome(batch_dir, 1, 1, "p1", "FAIL", reason="data_collection failed: device offline",
                        device_error="gone"), phone_lost=True, retried=True),
        Attempt(outcome(batch_dir, 1, 2, "p2", "FINISH", answer=HOSTILE))])
    failed = TaskResult(task(2, "fax"), [Attempt(outcome(batch_dir, 2, 1, "p2", "FAIL", reason="gave up"))])
    never = TaskResult(task(3, "maps"), note="no phone left in the pool")
    return info, [retried, failed, never]


def test_every_attempt_is_one_jsonl_line_with_paths_relative_to_the_batch(tmp_path: Path) -> None:
    info, found = sample(tmp_path)
    for result in found:
        for attempt in result.attempts:
            results.append_attempt(info, result, attempt)
    lines = [json.loads(x) for x in (tmp_path / "batch.jsonl").read_text().splitlines()]
    assert [(x["task"], x["attempt"], x["phone"], x["status"]) for x in lines] == [
        (1, 1, "p1", "FAIL"), (1, 2, "p2", "FINISH"), (2, 1, "p2", "FAIL")]
    first = lines[0]
    assert first["run_dir"] == "t01-wifi-a1" and first["report"] == "t01-wifi-a1/report.html"
    assert (first["phone_lost"], first["retried"], first["device_error"]) == (True, True, "gone")
    assert first["batch_id"] == "batch-x" and first["task_file"] == "/t/wifi.yaml" and first["steps"] == 4
    assert lines[1]["answer"] == HOSTILE  # data keeps the text as it was; printing makes it safe


def test_the_summary_counts_and_names_what_did_not_finish(tmp_path: Path) -> None:
    info, found = sample(tmp_path)
    lines = results.summary_lines(info, found)
    assert lines[0] == "batch batch-x: 3 tasks on 2 phones (local engine)"
    assert lines[1] == ("finished 1, failed 1, not run 1; retried 1 after a lost phone; 3 attempts, 12 steps in "
                        "10.0 s (1.20 steps/s)")
    assert lines[2] == "phone lost: p1: data_collection failed: device offline"
    assert "  t02 fax: failed: FAIL on p2: gave up" in lines
    assert "  t03 maps: not run: no phone left in the pool" in lines
    assert lines[-2:] == [f"batch directory: {tmp_path}", f"report: {tmp_path / 'batch.html'}"]


def test_the_page_links_each_runs_report_and_escapes_run_text(tmp_path: Path) -> None:
    info, found = sample(tmp_path)
    page = results.write_html(info, found).read_text()
    for run_id in ("t01-wifi-a1", "t01-wifi-a2", "t02-wifi-a1"):
        assert f'href="{run_id}/report.html"' in page
    assert "<script>" not in page and "&lt;script&gt;" in page and "\x1b" not in page
    assert "phone lost, retried" in page and "no phone left in the pool" in page
    assert page.count("<tr>") == 9 + 1  # 8 facts and a lost phone, the header
    # a row per attempt and per task not run, the failed task first, the finished one last
    assert re.findall(r'<tr class="\w+" data-tone="(\w+)" data-key="([\w-]+)"', page) == [
        ("fail", "t02-a1"), ("other", "t03"), ("ok", "t01-a1"), ("ok", "t01-a2")]
    assert '<p id="score" class="score other">1/3 tasks finished, 1 failed, 1 not run</p>' in page


def test_a_run_that_stopped_for_a_person_is_counted_apart(tmp_path: Path) -> None:
    info, found = sample(tmp_path)
    why = "needs a person: the agent asked the user: Which Anna?"
    asked = TaskResult(task(4, "anna"), [Attempt(outcome(tmp_path, 4, 1, "p1", "FAIL", needs_person=True, reason=why))])
    lines = results.summary_lines(info, [*found, asked])
    assert lines[1].startswith("finished 1, failed 2 (1 of them stopped for a person), not run 1;")
    record = results.attempt_record(info, asked, asked.attempts[0])
    assert record["outcome"] == "needs_person"
    assert results.attempt_record(info, found[1], found[1].attempts[0])["outcome"] == "failed"


def test_a_task_the_batchs_own_stop_cut_short_is_interrupted_not_failed(tmp_path: Path) -> None:
    info, found = sample(tmp_path)
    info.stopped = "interrupted"
    cut = TaskResult(task(4, "alarm"), [Attempt(outcome(tmp_path, 4, 1, "p1", "FAIL", interrupted=True, signal=2,
                                                        reason="interrupted"))])
    everything = [*found, cut]
    t = results.totals(everything)
    assert (t.finished, t.failed, t.interrupted, t.not_run) == (1, 1, 1, 1)
    lines = results.summary_lines(info, everything)
    assert lines[1].startswith("finished 1, failed 1, interrupted 1 (stopped before they ended, not counted as "
                               "failed), not run 1;")
    assert "  t04 alarm: interrupted: FAIL on p1: interrupted" in lines
    record = results.attempt_record(info, cut, cut.attempts[0])
    assert (record["outcome"], record["interrupted"]) == ("interrupted", True)
    page = results.render_html(info, everything)
    assert "1 finished, 1 failed, 1 interrupted, 1 not run of 4" in page
    results.write_summary_json(info, everything)
    data = json.loads((tmp_path / "batch.json").read_text())
    assert (data["failed"], data["interrupted"]) == (1, 1)
    assert [r["state"] for r in data["results"]] == ["finished", "failed", "not run", "interrupted"]
