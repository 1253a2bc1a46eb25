"""What a batch shows while it runs: a live table at a terminal (``rich``), plain lines elsewhere.

The table has one row per task (its current or last attempt): task, phone, state, step, last
action, elapsed; it is redrawn from the runs' events a few times a second, and stays on the
terminal when the batch ends. On a narrow terminal its cells wrap, never cut short. Without a terminal
(a pipe, a CI log) one line is printed when an attempt starts and when it ends, and for each phone
lost: no per-step lines. Text from the runs (actions, reasons) arrives redacted and is made
printable here, and never read as ``rich`` markup.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ufo_mobile.fleet.jobs import Event, Task
from ufo_mobile.fleet.scheduler import INTERRUPTED, Attempt, TaskResult
from ufo_mobile.safe_text import printable

Clock = Callable[[], float]
ACTION_WIDTH, DETAIL_LIMIT = 48, 160
_STYLE = {"FINISH": "green", "FAIL": "red", "ERROR": "red", "running": "yellow", "waiting": "dim",
          INTERRUPTED: "dim"}


def _status(attempt: Attempt) -> str:
    """How the attempt ended: its run's status, or ``interrupted`` (stopped from outside: not a FAIL of its own)."""
    o = attempt.outcome
    return INTERRUPTED if o.interrupted and not o.ok else o.status


@dataclass
class Row:
    """One task's line in the table: its phone, state, attempt, step, last action and times."""

    task: Task
    phone: str = ""
    state: str = "waiting"
    attempt: int = 0
    step: int = 0
    action: str = ""
    started: float | None = None
    ended: float | None = None

    def elapsed(self, now: float) -> str:
        """The time the attempt took (or has taken by ``now``), as ``12.3 s``; empty before it starts."""
        if self.started is None:
            return ""
        return f"{(self.ended or now) - self.started:.1f} s"


class Board:
    """The state of every task, kept from events (the table's model; no I/O)."""

    def __init__(self, tasks: list[Task], clock: Clock = time.monotonic) -> None:
        self.rows = {t.index: Row(t) for t in tasks}
        self.clock = clock

    def event(self, event: Event) -> None:
        """Update the task's row from an event of its attempt (an older attempt's event is ignored)."""
        row = self.rows.get(event.task)
        if row is None or event.attempt < row.attempt:
            return
        if event.kind == "start":
            row.phone, row.attempt, row.state, row.step, row.action = event.phone, event.attempt, "running", 0, ""
            row.started, row.ended = self.clock(), None
        elif event.kind == "step":
            row.step = event.step
            row.action = event.action or event.detail
        elif event.kind == "end":
            row.state, row.ended = event.status, self.clock()
            row.step = max(row.step, event.step)

    def ended(self, result: TaskResult, attempt: Attempt) -> None:
        """Record how an attempt ended (``retrying`` when the task is tried again)."""
        row = self.rows[result.task.index]
        row.state = _status(attempt) + (" (retrying)" if attempt.retried else "")
        row.step = attempt.outcome.steps
        if row.ended is None:
            row.ended = self.clock()

    def counts(self) -> dict[str, int]:
        """How many tasks are in each state (waiting, running, FINISH, FAIL, ...)."""
        out: dict[str, int] = {}
        for row in self.rows.values():
            key = row.state.split(" ")[0]
            out[key] = out.get(key, 0) + 1
        return out

    def table(self, max_rows: int | None = None) -> Any:
        """The ``rich`` table of the tasks, with the counts as its caption. With more tasks than
        ``max_rows``, it shows the running ones, then those that ended last (in task order)."""
        from rich.table import Table
        from rich.text import Text

        now = self.clock()
        rows = list(self.rows.values())
        if max_rows is not None and len(rows) > max_rows:  # the running ones first, then the latest ended
            rows.sort(key=lambda r: (r.state != "running", -(r.ended or 0.0), r.task.index))
            rows = sorted(rows[:max_rows], key=lambda r: r.task.index)
        counts = ", ".join(f"{n} {state}" for state, n in sorted(self.counts().items()))
        table = Table(caption=counts, caption_justify="left", expand=False)
        for name, justify in (("task", "left"), ("phone", "left"), ("state", "left"), ("step", "right"),
                              ("last action", "left"), ("elapsed", "right")):
            # a narrow terminal wraps (or folds) a cell, never cuts it short with an ellipsis
            table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for row in rows:
            style = _STYLE.get(row.state.split(" ")[0], "")
            label = f"{row.task.label} {printable(row.task.name, 30)}"
            table.add_row(Text(label), Text(printable(row.phone, 40)), Text(row.state, style=style),
                          Text(str(row.step) if row.started is not None else ""),
                          Text(printable(row.action, ACTION_WIDTH)), Text(row.elapsed(now)))
        return table


class PlainView:
    """One line per attempt started and ended, and per notice."""

    def __init__(self, board: Board, out: TextIO) -> None:
        self.board = board
        self.out = out

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def event(self, event: Event) -> None:
        """Update the board, and print a line when an attempt starts."""
        self.board.event(event)
        if event.kind == "start":
            row = self.board.rows[event.task]
            self._print(f"start {row.task.label} {printable(row.task.name, 40)} on {printable(event.phone, 60)} "
                        f"(attempt {event.attempt})")

    def attempt_ended(self, result: TaskResult, attempt: Attempt) -> None:
        """Update the board and print the attempt's ending: status, steps, time, answer or reason."""
        self.board.ended(result, attempt)
        o = attempt.outcome
        what = printable(o.answer or o.reason, DETAIL_LIMIT)
        self._print(f"end   {result.task.label} {printable(result.task.name, 40)} on {printable(o.phone, 60)} "
                    f"(attempt {o.attempt}): {_status(attempt)} after {o.steps} step{'s' if o.steps != 1 else ''} "
                    f"in {o.duration_seconds:.1f} s" + (f": {what}" if what else ""))

    def notice(self, line: str) -> None:
        """Print a line about the batch (a phone lost), made printable."""
        self._print(printable(line, 400))

    def __enter__(self) -> PlainView:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class QuietView(PlainView):
    """Nothing while the batch runs (``--quiet``): only the summary is printed."""

    def _print(self, line: str) -> None:
        return None


class LiveView(PlainView):
    """The live table (``rich.live.Live``); notices and ended attempts print above it."""

    def __init__(self, board: Board, out: TextIO, *, refresh_per_second: float = 4.0) -> None:
        super().__init__(board, out)
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=out, force_terminal=True, highlight=False, markup=False, emoji=False)
        self.live = Live(console=self.console, refresh_per_second=refresh_per_second, transient=False,
                         get_renderable=self._render)

    def _render(self) -> Any:
        return self.board.table(max_rows=max(self.console.size.height - 8, 5))

    def _print(self, line: str) -> None:
        from rich.text import Text

        self.live.console.print(Text(line))

    def event(self, event: Event) -> None:
        """Update the board; the table shows the change at its next redraw (no line is printed)."""
        self.board.event(event)  # the table shows it; no line

    def __enter__(self) -> LiveView:
        self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.stop()
