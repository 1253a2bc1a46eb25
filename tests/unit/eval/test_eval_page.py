"""``eval.html`` and the ``--compare`` page: the score first, the failures first, each run linked to its
report by a relative path that exists, run text escaped; and the command writes both."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.unit.eval.conftest import SUITE
from tests.unit.test_cli_runs import run_cli
from ufo_mobile.eval.page import PAGE_FILE, compare_page_path, eval_page, write_compare_page, write_eval_page
from ufo_mobile.eval.results import compare, read_results, summarize
from ufo_mobile.report import runs_page

HOSTILE = "gave up\x1b]0;pwned\x07 <script>alert(1)</script>"


def record(task: str, passed: bool, *, seed: int = 0, interrupted: bool = False, **more: Any) -> dict[str, Any]:
    return {"task_id": task, "seed": seed, "kind": "feasible", "status": "FINISH" if passed else "FAIL",
            "reason": "" if passed else HOSTILE, "answer": "", "passed": passed, "why": "the check held" if passed
            else "the alarm is still on", "steps": 3, "budget": 6, "duration_seconds": 1.25, "prompt_tokens": 1000,
            "completion_tokens": 234, "cost_usd": 0.0123, "run_id": f"r-{task}-s{seed}", "run_dir": "",
            "outcome": "interrupted" if interrupted else "success" if passed else "failed",
            "interrupted": interrupted, **more}


def with_reports(eval_dir: Path, records: list[dict[str, Any]], missing: tuple[str, ...] = ()) -> None:
    for r in records:
        run_dir = eval_dir / "runs" / r["run_id"]
        run_dir.mkdir(parents=True, exist_ok=True)
        r["run_dir"] = str(run_dir)
        if r["run_id"] not in missing:
            (run_dir / "report.html").write_text("<html></html>")


def rows_of(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr class="\w+" data-tone="(\w+)" data-key="([^"]*)"', page)


def hrefs(page: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', page)


def test_the_page_gives_the_score_and_puts_the_failures_first(tmp_path: Path) -> None:
    records = [record("a", True), record("b", False), record("c", False, interrupted=True), record("d", False)]
    with_reports(tmp_path, records, missing=("r-d-s0",))
    meta = {"suite": ["suite"], "setup": "direct · simulated phone (in-process) · oracle", "planned_runs": 5,
            "repeat": 1, "seed": 0, "stopped": "interrupted"}
    page = write_eval_page(tmp_path, records, summarize(records), meta).read_text()
    assert (tmp_path / PAGE_FILE).is_file()
    assert rows_of(page) == [("fail", "b s0"), ("fail", "d s0"), ("other", "c s0"), ("ok", "a s0")]
    assert '<p id="score" class="score other">1/3 runs that ended passed (33.3%); 1 interrupted, not counted</p>' \
        in page
    for fact in ("direct · simulated phone (in-process) · oracle", "4 of 5 planned", "pass@1 0.333",
                 "by kind", "feasible 1/3 (1 interrupted)", "4,000 prompt + 936 completion tokens", "stopped"):
        assert fact in page, fact
    # each run with a report is linked relatively; the one without names its run instead
    assert hrefs(page) == ["runs/r-b-s0/report.html", "runs/r-c-s0/report.html", "runs/r-a-s0/report.html"]
    assert all((tmp_path / h).is_file() for h in hrefs(page))
    assert "no report (r-d-s0)" in page
    assert "<script>" not in page and "&lt;script&gt;" in page and "\x1b" not in page and "\\x1b" in page
    assert "the alarm is still on" in page and "not judged: the run did not end" in page
    assert "1,234" in page and "$0.0123" in page and "3/6" in page


def test_a_report_outside_the_evaluation_is_linked_by_a_relative_path(tmp_path: Path) -> None:
    elsewhere = tmp_path / "moved" / "r-a-s0"
    elsewhere.mkdir(parents=True)
    (elsewhere / "report.html").write_text("")
    records = [record("a", False, run_dir=str(elsewhere))]
    eval_dir = tmp_path / "eval"
    eval_dir.mkdir()
    page = runs_page.render(eval_page(records, summarize(records), {}, eval_dir))
    assert hrefs(page) == ["../moved/r-a-s0/report.html"]


def test_the_comparison_puts_the_tasks_that_got_worse_first_and_links_both_sides(tmp_path: Path) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a = [record("same", True), record("worse", True), record("better", False), record("only-a", True)]
    b = [record("same", True), record("worse", False), record("better", True), record("only-b", False)]
    with_reports(a_dir, a)
    with_reports(b_dir, b)
    path = write_compare_page(compare(a, b), a, b, a_dir, b_dir / "results.jsonl")
    assert path == compare_page_path(a_dir, b_dir) == b_dir / "compare-a.html"
    page = path.read_text()
    assert [key for _, key in rows_of(page)] == ["worse", "better", "only-a", "only-b", "same"]
    assert "success rate: A 75.0% -&gt; B 50.0% (-25.0 points)" in page and 'class="score fail"' in page
    links = hrefs(page)
    assert links[:2] == ["../a/runs/r-worse-s0/report.html", "runs/r-worse-s0/report.html"]
    assert len(links) == 8 and all((b_dir / h).is_file() for h in links)


def test_eval_writes_its_page_and_compare_writes_one_in_bs_directory(tmp_path: Path) -> None:
    config = tmp_path / "fast.yaml"
    config.write_text("perception: {annotate: false, settle_timeout_seconds: 0}\n")
    dirs = []
    for model in ("oracle", "give-up"):
        code, out = run_cli("eval", str(SUITE), "--tasks", "clock-turn-off,clock-impossible-delete", "--model", model,
                            "--config", str(config), "--log-dir", str(tmp_path / model))
        assert code == 0, out
        (directory,) = (tmp_path / model).iterdir()
        assert out.rstrip().endswith(f"report: {directory / PAGE_FILE}")
        page = (directory / PAGE_FILE).read_text()
        assert len(hrefs(page)) == 2 and all((directory / h).is_file() for h in hrefs(page))
        dirs.append(directory)
    page = (dirs[1] / PAGE_FILE).read_text()
    assert [key for _, key in rows_of(page)] == ["clock-turn-off s0", "clock-impossible-delete s0"]
    assert "direct · simulated phone (in-process) · give-up (a model that fails at once)" in page
    assert [r["task_id"] for r in read_results(dirs[1])] == ["clock-impossible-delete", "clock-turn-off"]

    code, out = run_cli("eval", "--compare", str(dirs[0]), str(dirs[1] / "results.jsonl"))
    assert code == 0, out
    path = compare_page_path(dirs[0], dirs[1])
    assert out.rstrip().endswith(f"report: {path}")
    page = path.read_text()
    assert [key for _, key in rows_of(page)] == ["clock-turn-off", "clock-impossible-delete"]
    assert len(hrefs(page)) == 4 and all((path.parent / h).is_file() for h in hrefs(page))


def test_a_comparison_page_that_cannot_be_written_is_one_line_and_exit_3(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "results.jsonl").write_text(json.dumps(record("x", side == "a")) + "\n")
    blocked = compare_page_path(tmp_path / "a", tmp_path / "b")
    (blocked / "in-the-way").mkdir(parents=True)  # a directory where the page would go
    code, out = run_cli("eval", "--compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert code == 3 and "success rate: A 100.0% (1/1) -> B 0.0% (0/1), -100.0 points" in out
    assert "report: " not in out
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: the comparison page could not be written: cannot write ")
