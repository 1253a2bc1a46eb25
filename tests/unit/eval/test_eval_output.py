"""What ``eval`` prints never cuts a cell: off a terminal (a pipe, a CI log) plain lines that are
never wrapped or cut whatever ``COLUMNS`` says; at a terminal a table fitted to its width, or the
plain lines when it cannot fit."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ufo_mobile.cli.eval_cmd import print_comparison, print_results
from ufo_mobile.eval.results import compare, read_results, summarize
from ufo_mobile.eval.table import Grid, column_widths, fitted_table, plain_lines

ROOT = Path(__file__).resolve().parents[3]


def eval_cli(*args: str, columns: int) -> str:
    """The real command with its stdout a pipe and ``COLUMNS`` set."""
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ufo_mobile", "eval", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_whole(out: str, records: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    """Every run id and number of the records and the summary appears whole, and nothing is cut."""
    lines = out.splitlines()
    whys = {f"  not passed: {r['task_id']} s{r['seed']}: {r['why']}" for r in records if not r["passed"]}
    assert all(line in whys for line in lines if "…" in line), out  # only a check's own words (match.show) cut
    for r in records:
        (line,) = [x for x in lines if r["run_id"] in x]  # the run's row, on one line
        for cell in (r["task_id"], r["kind"], f"{r['steps']}/{r['budget']}", f"{r['duration_seconds']:.1f}s",
                     f"{r['prompt_tokens'] + r['completion_tokens']:,}", f"${r['cost_usd']:.4f}"):
            assert f" {cell} " in f" {line} ", (cell, line)
    (total,) = [x for x in lines if x.startswith("total ")]
    for cell in (f"{summary['passed']}/{summary['ended']}", str(summary["steps"])):
        assert f" {cell} " in f" {total} ", (cell, total)
    # summary.json keeps the seconds to the millisecond: the printed tenth may round the other way
    assert any(f" {summary['seconds'] + d:.1f}s " in total for d in (-0.001, 0, 0.001)), total
    assert f"success rate: {summary['passed']}/{summary['runs']} runs ({summary['success_rate']:.1%})" in out


@pytest.fixture(scope="module")
def two_evals(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, str]]:
    """The oracle on the clock tasks at 80 columns, the give-up model at 100 (a pipe each time)."""
    base = tmp_path_factory.mktemp("evals")
    config = base / "fast.yaml"
    config.write_text("logs: {report: false}\nperception: {annotate: false, settle_timeout_seconds: 0}\n")
    made = []
    for model, columns in (("oracle", 80), ("give-up", 100)):
        out = eval_cli("suite", "--model", model, "--tasks", "clock-*", "--config", str(config),
                       "--log-dir", str(base / model), columns=columns)
        (directory,) = (base / model).iterdir()
        made.append((directory, out))
    return made


def test_off_a_terminal_every_cell_is_whole_at_80_and_100_columns(two_evals: list[tuple[Path, str]]) -> None:
    for directory, out in two_evals:
        summary = json.loads((directory / "summary.json").read_text())
        records = read_results(directory)
        assert len(records) == 4
        assert_whole(out, records, summary)
        assert "┃" not in out and "│" not in out  # plain lines, no box drawing
    oracle_out = two_evals[0][1]
    assert any(len(line) > 80 for line in oracle_out.splitlines())  # longer than COLUMNS, and not wrapped
    assert 'FAIL (There is no alarm labelled "School run", so there is nothing to delete.)  2/5 steps' in oracle_out


def test_compare_off_a_terminal_is_whole(two_evals: list[tuple[Path, str]]) -> None:
    (a, _), (b, _) = two_evals
    out = eval_cli("--compare", str(a), str(b), columns=80)
    assert "…" not in out and f"A: {a}\nB: {b}\n" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("clock-")}
    comparison = compare(read_results(a), read_results(b))
    for change in comparison.tasks:
        assert change.a is not None and change.b is not None
        a_, b_ = change.a, change.b
        assert rows[change.task_id][1:3] == [f"{a_.passed}/{a_.ended}", f"{b_.passed}/{b_.ended}"]
        assert rows[change.task_id][4:] == [f"{a_.steps / a_.runs:.1f}", f"{b_.steps / b_.runs:.1f}"]


def _record(task: str, reason: str, passed: bool, seed: int = 0) -> dict[str, Any]:
    return {"task_id": task, "seed": seed, "kind": "feasible", "status": "FINISH" if passed else "FAIL",
            "reason": reason, "answer": "", "passed": passed, "why": "the check did not hold", "steps": 12,
            "budget": 15, "duration_seconds": 123.456, "prompt_tokens": 1234567, "completion_tokens": 89012,
            "cost_usd": 12.3456, "run_id": f"20261126-101636-{task}-s{seed}-60f6", "outcome": "success",
            "interrupted": False, "write_error": None, "repeat": 0}


RECORDS = [_record("a-task-with-a-rather-long-identifier", "", True),
           _record("shop-checkout", "the cart was empty after the third attempt to add the item "
                   "so the checkout could not be completed at all", False)]


def _terminal(width: int) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width, color_system=None, highlight=False, markup=False)
    return console, out


@pytest.mark.parametrize("width", [80, 100, 160])
def test_at_a_terminal_no_cell_is_cut(width: int) -> None:
    console, out = _terminal(width)
    print_results(console, RECORDS, summarize(RECORDS))
    text = out.getvalue()
    assert "…" not in text
    for cell in ("a-task-with-a-rather-long-identifier", "12/15", "123.5s", "1,323,579", "$12.3456", "completed",
                 "2,647,158", "$24.6912", "246.9s"):
        assert cell in text, cell
    table = [line for line in text.splitlines() if line.startswith(("┃", "│", "┏", "└"))]
    if width >= 160:  # wide enough: the table, its outcome wrapped between words
        assert table and all(len(line) <= width for line in table)
    else:  # too narrow for the ids and numbers: the plain form
        assert not table
        assert any(line.startswith("a-task-with-a-rather-long-identifier ") for line in text.splitlines())


def test_at_an_80_column_terminal_the_comparison_is_a_table() -> None:
    console, out = _terminal(80)
    comparison = compare(RECORDS, RECORDS[:1])
    print_comparison(console, comparison, Path("a/results.jsonl"), Path("b/results.jsonl"))
    text = out.getvalue()
    assert "…" not in text and "a-task-with-a-rather-long-identifier" in text
    assert "┃" in text and all(len(line) <= 80 for line in text.splitlines())
    (row,) = [line for line in text.splitlines() if "shop-checkout" in line]
    assert row.split("│")[2:4] == [" 0/1 ", "   - "]  # the cells whole; "only in A" may wrap between its words


def test_columns_narrow_by_wrapping_their_words_never_below_the_longest_word() -> None:
    grid = Grid(["id", "words"], [["an-identifier", "one two three four five six seven"]], right=frozenset())
    widths = column_widths(grid, 40)
    assert widths is not None and widths[0] == len("an-identifier") and sum(widths) + 3 * 2 + 1 == 40
    assert column_widths(grid, 3 * 2 + 1 + len("an-identifier") + len("three") - 1) is None
    console, out = _terminal(30)
    table = fitted_table(grid, 30)
    assert table is not None
    console.print(table)
    assert "an-identifier" in out.getvalue() and "…" not in out.getvalue()
    assert all(len(line) <= 30 for line in out.getvalue().splitlines())


def test_plain_lines_are_as_wide_as_their_longest_cell() -> None:
    grid = Grid(["task", "n"], [["a", "1"], ["longer", "123"]], footer=["total", "124"], right=frozenset({1}))
    assert plain_lines(grid) == ["task      n", "------  ---", "a         1", "longer  123", "------  ---",
                                 "total   124"]
