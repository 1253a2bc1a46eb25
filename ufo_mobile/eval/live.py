"""What ``eval`` shows while it runs: the runs in flight and a running score at a terminal, plain lines elsewhere.

Every view prints one line per run as it ends (``progress_line``: whole, never cut to a width). At a
terminal, ``LiveView`` also keeps a small table under those lines (``rich.live.Live``, redrawn a
few times a second and cleared when the evaluation ends): each run in flight with its step of the
budget and its time so far, and under it the score so far ("3 passed, 1 failed of 30; 2 running").
Its cells fold on a narrow terminal, never cut short. Off a terminal (a pipe, a CI log) ``PlainView``
prints the lines only, and ``QuietView`` (``--quiet``) nothing. ``EvalBoard`` is the model the
views share, kept from the campaign's ``RunEvent`` and records, with an injectable clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ufo_mobile.eval.campaign import EvalRun, RunEvent
from ufo_mobile.eval.results import is_interrupted
from ufo_mobile.safe_text import printable

Clock = Callable[[], float]
#: How much of a run's reason (the model's words) a line shows; the rest is counted.
REASON_LIMIT = 300


def progress_line(record: Mapping[str, Any], done: int, total: int) -> str:
    """A run's line as it ends; whole (never cut to a width), only the model's reason bounded."""
    reason = printable(str(record["reason"]), REASON_LIMIT)
    if is_interrupted(record):  # it did not end: not judged, and not the agent's failure
        ended = f"interrupted ({reason})"
    else:
        outcome = record["status"] if record["status"] == "FINISH" else f"{record['status']} ({reason})"
        ended = f"{'PASS' if record['passed'] else 'fail'}  {outcome}"
    return printable(f"[{done}/{total}] {record['task_id']} s{record['seed']}: {ended}  "
                     f"{record['steps']}/{record['budget']} steps  {record['duration_seconds']:.1f}s")


@dataclass
class Flight:
    """One planned run, as the board knows it."""

    label: str  # task id and seed
    budget: int
    state: str = "waiting"  # running, ended
    steps: int = 0
    started: float | None = None


class EvalBoard:
    """The runs and the score so far (no I/O). Its list of runs never changes size, so the live
    view's refresh thread may read it while the evaluation updates it."""

    def __init__(self, runs: Sequence[EvalRun], clock: Clock = time.monotonic) -> None:
        self.flights = [Flight(f"{r.instance.task.id} s{r.instance.seed}", r.instance.task.spec.budget) for r in runs]
        self.clock = clock
        self.began = clock()
        self.passed = self.failed = self.interrupted = 0

    def event(self, event: RunEvent) -> None:
        """Update the run's state and step from an event of the campaign."""
        flight = self.flights[event.index]
        if event.kind == "start":
            flight.state, flight.started, flight.steps = "running", self.clock(), 0
        elif event.kind == "step":
            flight.steps = max(flight.steps, event.steps)
        else:
            flight.state = "ended"

    def record(self, record: Mapping[str, Any]) -> None:
        """A run's record: counted in the score."""
        if is_interrupted(record):
            self.interrupted += 1
        elif record.get("passed"):
            self.passed += 1
        else:
            self.failed += 1

    def running(self) -> list[Flight]:
        """The runs in flight now."""
        return [f for f in self.flights if f.state == "running"]

    def score(self) -> str:
        """``3 passed, 1 failed of 30; 2 running; 41 s``."""
        stopped = f", {self.interrupted} interrupted" if self.interrupted else ""
        return (f"{self.passed} passed, {self.failed} failed{stopped} of {len(self.flights)}; "
                f"{len(self.running())} running; {self.clock() - self.began:.0f} s")

    def view(self, max_rows: int = 20) -> RenderableType:
        """The runs in flight (the oldest first, at most ``max_rows``) over the score."""
        now, flights = self.clock(), self.running()
        if not flights:
            return Text(self.score())
        table = Table(expand=False)
        for name, justify in (("run", "left"), ("step", "right"), ("elapsed", "right")):
            table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for flight in sorted(flights, key=lambda f: f.started or 0.0)[:max_rows]:
            elapsed = now - (flight.started or now)
            table.add_row(Text(printable(flight.label, 80)), Text(f"{flight.steps}/{flight.budget}"),
                          Text(f"{elapsed:.1f} s"))
        return Group(table, Text(self.score()))


class PlainView:
    """One line per run as it ends."""

    def __init__(self, console: Console, board: EvalBoard) -> None:
        self.console = console
        self.board = board
        self.done = 0

    def _print(self, line: str) -> None:
        self.console.print(Text(line), soft_wrap=True)

    def event(self, event: RunEvent) -> None:
        """Update the board (no line: a run's line is printed when it ends)."""
        self.board.event(event)

    def ended(self, record: Mapping[str, Any]) -> None:
        """A run ended: its line, and the score."""
        self.done += 1
        self.board.record(record)
        self._print(progress_line(record, self.done, len(self.board.flights)))

    def __enter__(self) -> PlainView:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class QuietView(PlainView):
    """Nothing while the evaluation runs (``--quiet``)."""

    def _print(self, line: str) -> None:
        return None


class LiveView(PlainView):
    """The runs in flight and the score under the lines, at a terminal; cleared at the end."""

    def __init__(self, console: Console, board: EvalBoard, *, refresh_per_second: float = 4.0) -> None:
        super().__init__(console, board)
        self.live = Live(console=console, refresh_per_second=refresh_per_second, transient=True,
                         get_renderable=self._render)

    def _render(self) -> RenderableType:
        return self.board.view(max_rows=max(self.console.size.height - 6, 3))

    def _print(self, line: str) -> None:
        self.live.console.print(Text(line))
        self.live.refresh()  # the table under the line, with this run's score

    def event(self, event: RunEvent) -> None:
        """Update the board, and redraw the table at once when a run starts or ends."""
        super().event(event)
        if event.kind != "step":  # a run came or went: redraw now; steps show at the next tick
            self.live.refresh()

    def __enter__(self) -> LiveView:
        self.live.start(refresh=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.stop()
