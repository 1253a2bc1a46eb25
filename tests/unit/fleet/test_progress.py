"""The progress views: the table's model kept from events, the rich table, the plain lines."""

from __future__ import annotations

import io

from rich.console import Console

from tests.unit.fleet.fakes import tasks
from ufo_mobile.fleet.jobs import Event, Outcome
from ufo_mobile.fleet.progress import Board, PlainView, QuietView
from ufo_mobile.fleet.scheduler import Attempt, TaskResult

HOSTILE = "type(text='\x1b[2J\x1b]0;pwned\x07')"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_board_follows_each_tasks_current_attempt() -> None:
    clock = Clock()
    board = Board(tasks(2), clock)
    board.event(Event("start", 1, 1, "p1"))
    board.event(Event("step", 1, 1, "p1", step=1, status="CONTINUE", action="open_app(text='Settings')"))
    clock.now = 103.25
    row = board.rows[1]
    assert (row.phone, row.state, row.step, row.action, row.elapsed(clock.now)) == (
        "p1", "running", 1, "open_app(text='Settings')", "3.2 s")
    board.ended(TaskResult(tasks(1)[0]), Attempt(Outcome(1, 1, "p1", "r", "FAIL", steps=1), retried=True))
    assert board.rows[1].state == "FAIL (retrying)"
    board.event(Event("start", 1, 2, "p2"))
    board.event(Event("step", 1, 1, "p1", step=9))  # a late event of the first attempt is ignored
    assert (board.rows[1].phone, board.rows[1].attempt, board.rows[1].step) == ("p2", 2, 0)
    assert board.rows[2].state == "waiting" and board.counts() == {"running": 1, "waiting": 1}


def render(board: Board, max_rows: int | None = None) -> str:
    out = io.StringIO()
    Console(file=out, width=160, force_terminal=False, color_system=None).print(board.table(max_rows))
    return out.getvalue()


def test_the_table_shows_run_text_made_safe_and_not_as_markup() -> None:
    board = Board(tasks(1), Clock())
    board.event(Event("start", 1, 1, "[bold]p1[/bold]"))
    board.event(Event("step", 1, 1, "[bold]p1[/bold]", step=2, action=HOSTILE))
    text = render(board)
    for word in ("task", "phone", "state", "step", "last action", "elapsed", "t01 task 1", "running"):
        assert word in text
    assert "[bold]p1[/bold]" in text  # shown as typed, not read as markup
    assert "\x1b" not in text and "\\x1b[2J" in text


def test_on_a_narrow_terminal_the_tables_cells_wrap_and_are_never_cut() -> None:
    board = Board(tasks(2), Clock())
    phone = "emulator-5554-a-long-phone-name"
    board.event(Event("start", 1, 1, phone))
    board.event(Event("step", 1, 1, phone, step=3, status="CONTINUE", action="open_app(text='Settings')"))
    out = io.StringIO()
    Console(file=out, width=60, force_terminal=True, color_system=None).print(board.table())
    text = out.getvalue()
    assert "…" not in text and all(len(line) <= 60 for line in text.splitlines())
    body = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    column = ["".join(row[i].strip() for row in body) for i in range(1, 7)]  # each column's cells, unwrapped
    assert column[1].startswith(phone) and column[2] == "runningwaiting" and column[3] == "3"
    assert column[4] == "open_app(text='Settings')"


def test_a_long_batch_shows_the_running_tasks_first() -> None:
    board = Board(tasks(30), Clock())
    board.event(Event("start", 25, 1, "p1"))
    text = render(board, max_rows=5)
    assert "t25 task 25" in text and "t06 task 6" not in text and "1 running, 29 waiting" in text


def test_plain_lines_only_for_starts_ends_and_notices() -> None:
    out = io.StringIO()
    view = PlainView(Board(tasks(1), Clock()), out)
    view.event(Event("start", 1, 1, "p1"))
    view.event(Event("step", 1, 1, "p1", step=1, action=HOSTILE))
    view.attempt_ended(TaskResult(tasks(1)[0]), Attempt(Outcome(1, 1, "p1", "r", "FINISH", answer="ok\nFINISH",
                                                                steps=1, duration_seconds=1.25)))
    view.notice("phone p1 lost (\x1b[31m)")
    assert out.getvalue().splitlines() == [
        "start t01 task 1 on p1 (attempt 1)",
        "end   t01 task 1 on p1 (attempt 1): FINISH after 1 step in 1.2 s: ok\\nFINISH",
        "phone p1 lost (\\x1b[31m)"]
    quiet = io.StringIO()
    QuietView(Board(tasks(1), Clock()), quiet).notice("x")
    assert quiet.getvalue() == ""
