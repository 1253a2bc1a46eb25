"""Scores of an evaluation (success rate, pass@k, totals), its JSONL records, and comparing two."""

from __future__ import annotations

import errno
import json
import re
from math import comb
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.cli.eval_cmd import cannot_write_line, score_lines
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.eval.live import progress_line
from ufo_mobile.eval.results import ResultsWriter, compare, pass_at_k, read_results, summarize


def record(task: str, passed: bool, *, kind: str = "feasible", steps: int = 3, cost: float | None = 0.01,
           seed: int = 0) -> dict[str, Any]:
    return {"task_id": task, "seed": seed, "kind": kind, "passed": passed, "status": "FINISH" if passed else "FAIL",
            "steps": steps, "duration_seconds": 1.5, "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": cost}


def interrupted(task: str, *, passed: bool = False, kind: str = "feasible", seed: int = 0,
                reason: str = "interrupted") -> dict[str, Any]:
    """A run stopped from outside (Ctrl-C): FAIL with the signal's reason, and ``interrupted``."""
    return {**record(task, passed, kind=kind, seed=seed), "status": "FAIL", "reason": reason, "interrupted": True,
            "outcome": "interrupted", "budget": 8, "why": "-"}


@pytest.mark.parametrize(("n", "c", "k"), [(1, 0, 1), (1, 1, 1), (3, 1, 1), (3, 1, 2), (3, 1, 3), (5, 2, 3),
                                           (10, 0, 4), (10, 9, 2)])
def test_pass_at_k_is_the_chance_that_one_of_k_draws_passes(n: int, c: int, k: int) -> None:
    # by counting: of all k-subsets of the n runs, the share holding at least one passed run
    failing_only = comb(n - c, k)
    assert pass_at_k(n, c, k) == pytest.approx(1 - failing_only / comb(n, k))
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_pass_at_k_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="pass@4"):
        pass_at_k(3, 1, 4)


def test_summary_scores_per_task_and_per_kind() -> None:
    records = [record("a", True), record("a", False, seed=1), record("a", False, seed=2),
               record("b", True, kind="retrieval"), record("b", True, kind="retrieval", seed=1),
               record("b", True, kind="retrieval", seed=2),
               record("c", False, kind="impossible"), record("c", False, kind="impossible", seed=1),
               record("c", False, kind="impossible", seed=2)]
    summary = summarize(records)
    assert (summary.tasks, summary.runs_per_task) == (3, 3)
    assert (summary.totals.runs, summary.totals.passed, summary.totals.steps) == (9, 4, 27)
    assert summary.totals.success_rate == pytest.approx(4 / 9)
    assert summary.pass_at[1] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert summary.pass_at[3] == pytest.approx((1 + 1 + 0) / 3)
    assert {k: (t.passed, t.runs) for k, t in summary.by_kind.items()} == {
        "feasible": (1, 3), "retrieval": (3, 3), "impossible": (0, 3)}
    assert summary.totals.cost_usd == pytest.approx(0.09)
    data = summary.to_json()
    assert data["pass_at"] == {"pass@1": pytest.approx(0.4444, abs=1e-4), "pass@3": pytest.approx(0.6667, abs=1e-4)}


def test_one_unknown_cost_makes_the_total_unknown_not_zero() -> None:
    summary = summarize([record("a", True), record("b", True, cost=None), record("c", True)])
    assert summary.totals.cost_usd is None
    assert summary.to_json()["cost_usd"] is None


def test_records_round_trip_through_the_jsonl_file(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path / "eval")
    for r in (record("a", True), record("b", False)):
        writer.write(r)
    writer.close()
    assert read_results(tmp_path / "eval") == read_results(writer.path) == [record("a", True), record("b", False)]


@pytest.mark.parametrize(("text", "message"), [
    ('{"task_id": "a"}\n', "line 1: not a run record (no passed, steps, status)"),
    (json.dumps(record("a", True)) + "\n{oops\n", "line 2: not JSON"),
    ("\n\n", "no run records"),
    ("[1, 2]\n", "line 1: not a run record"),
])
def test_a_bad_results_file_is_one_error_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        read_results(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_results_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the results"):
        read_results(tmp_path / "nothing-here")


def test_comparison_is_task_by_task() -> None:
    a = [record("a", True), record("b", False), record("c", True)]
    b = [record("a", True), record("b", True), record("d", False)]
    comparison = compare(a, b)
    by_id = {t.task_id: t for t in comparison.tasks}
    assert list(by_id) == ["a", "b", "c", "d"]
    assert by_id["a"].delta == 0 and by_id["b"].delta == 1
    assert by_id["c"].b is None and by_id["c"].delta is None
    assert by_id["d"].a is None
    assert [t.task_id for t in comparison.better] == ["b"] and comparison.worse == []


def test_interrupted_runs_are_counted_apart_and_left_out_of_the_success_rate() -> None:
    # the oracle's 27 runs that ended all passed; Ctrl-C cut 2 short: 27/27, not 27/29
    records = [record(f"t{i}", True) for i in range(27)] + [interrupted("t27"), interrupted("t28", kind="retrieval")]
    summary = summarize(records)
    t = summary.totals
    assert (t.runs, t.ended, t.interrupted, t.passed) == (29, 27, 2, 27)
    assert t.success_rate == 1.0
    assert summary.pass_at == {1: 1.0}  # over the 27 tasks with a run that ended
    assert summary.tasks == 29 and summary.runs_per_task == 1
    assert t.steps == 29 * 3  # what the interrupted runs spent still counts in the totals
    data = summary.to_json()
    assert [data[k] for k in ("runs", "ended", "interrupted", "passed", "success_rate")] == [29, 27, 2, 27, 1.0]
    assert data["by_kind"]["retrieval"] == {**data["by_kind"]["retrieval"], "runs": 1, "ended": 0, "interrupted": 1}
    scores = score_lines(summary).splitlines()
    assert scores[0] == "success rate: 27/27 runs that ended (100.0%); pass@1 1.000; 2 interrupted, not counted"
    assert scores[1] == "by kind: feasible 27/27 (1 interrupted), retrieval 0/0 (1 interrupted)"


def test_an_interrupted_run_is_neither_a_pass_nor_a_failure() -> None:
    # a feasible run stopped after the phone was already right: its check held, but the run did not end
    summary = summarize([record("a", False), record("a", True, seed=1), interrupted("a", passed=True, seed=2),
                         interrupted("b")])
    t = summary.totals
    assert (t.ended, t.passed, t.interrupted) == (2, 1, 2)
    assert t.success_rate == 0.5
    assert summary.pass_at == {1: 0.5, 2: 1.0}  # task a ended twice; b never ended and has no score
    assert summary.per_task["b"].success_rate == 0.0 and summary.per_task["b"].ended == 0
    assert score_lines(summary).splitlines()[0] == ("success rate: 1/2 runs that ended (50.0%); pass@1 0.500; "
                                                    "pass@2 1.000; 2 interrupted, not counted")


def test_when_no_run_ended_there_is_no_rate_to_give() -> None:
    summary = summarize([interrupted("a")])
    assert summary.pass_at == {} and summary.runs_per_task == 0
    assert score_lines(summary).splitlines()[0] == ("success rate: 0/0 runs that ended (none ended); "
                                                    "1 interrupted, not counted")


def test_without_interruptions_the_scores_line_is_as_before() -> None:
    assert score_lines(summarize([record("a", True), record("b", False)])).splitlines()[0] == (
        "success rate: 1/2 runs (50.0%); pass@1 0.500")


def test_the_line_of_an_interrupted_run_says_so_and_no_failure() -> None:
    line = progress_line({**interrupted("shop-price"), "seed": 0, "duration_seconds": 0.4}, 3, 7)
    assert line.startswith("[3/7] shop-price s0: interrupted (interrupted)  3/8 steps")
    assert "fail" not in line.lower()


def test_a_task_whose_runs_were_interrupted_on_one_side_is_not_compared() -> None:
    comparison = compare([record("a", True), record("b", True)], [record("a", False), interrupted("b")])
    by_id = {t.task_id: t for t in comparison.tasks}
    assert by_id["a"].delta == -1 and by_id["b"].delta is None
    assert [t.task_id for t in comparison.worse] == ["a"] and comparison.better == []
    assert comparison.b.totals.success_rate == 0.0 and comparison.b.totals.ended == 1


def test_a_line_that_does_not_fit_is_tried_again_with_the_reserve_given_back(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path / "eval")
    reserve = tmp_path / "eval" / ".reserve"
    assert reserve.stat().st_size > 0
    real, calls = writer._lines.append, []

    def full_once(line: str) -> None:
        calls.append(line)
        if len(calls) == 1:
            raise RunWriteError("cannot write results.jsonl: the disk is full", errno=errno.ENOSPC)
        real(line)

    writer._lines.append = full_once  # type: ignore[method-assign]
    writer.write(record("a", True))
    assert len(calls) == 2 and not reserve.exists()  # the reserve was given back for the second try
    writer.close()
    assert read_results(tmp_path / "eval") == [record("a", True)]


def test_a_results_directory_that_cannot_be_made_is_a_config_error_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError, match="cannot write the results") as caught:
        ResultsWriter(tmp_path / "a-file" / "eval")
    assert caught.value.key == "logs.dir"


def test_the_line_that_says_what_could_not_be_written() -> None:
    disk = RunWriteError("cannot write runs/x/steps.jsonl: full", errno=errno.ENOSPC)
    summary = RunWriteError("cannot write summary.json: full", errno=errno.ENOSPC)
    assert cannot_write_line(disk, None, True) == ("cannot write runs/x/steps.jsonl: full; the evaluation stopped "
                                                   "there; summary.json holds the runs that ended")
    assert cannot_write_line(disk, None, False).endswith("the evaluation stopped there, before any run ended")
    assert cannot_write_line(disk, summary, True) == ("cannot write runs/x/steps.jsonl: full; summary.json could "
                                                      "not be written either: cannot write summary.json: full")
    assert cannot_write_line(None, summary, True) == ("summary.json could not be written: "
                                                      "cannot write summary.json: full")
