"""What ``run`` and ``replay`` show while a step is in flight (``run_at_terminal`` in
``ufo_mobile/cli/run_cmd.py`` follows the run with one of these views; ``--quiet`` uses none).

On a terminal (``StatusView``): one status line, redrawn in place by a ticker, such as
``step 3 · executor · waiting for the model · 4 s`` (the agent is named in reasoning mode), and
above it, as they happen, the model's thought and every retry with its reason and wait, then the
step's own line. The status line is erased when the run ends, however it ends, and hidden while a
person is asked something on the terminal (``status_hidden``, used by ``cli/operator.py``).

Off a terminal (``PlainView``: CI logs, pipes): lines that are never rewritten, carry no ANSI and
are never wrapped: each retry; ``waiting for the model`` once a wait passes ``first_wait`` seconds,
then every ``wait_every`` seconds; and, for a step that printed either, the model's thought when it
arrives. A quick step prints only its line, as always.

The events come from the run (``ufo_mobile/core/trace/progress.py``). Everything from the model is
redacted and made printable first (``Console.safe``). The elapsed time comes from an injected clock,
and the ticker's sleep is injectable too, so tests move time by hand.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console as RichConsole
from rich.console import Group
from rich.live import Live
from rich.text import Text

from ufo_mobile.cli.console import Console, is_terminal
from ufo_mobile.core.processors.base import RECORDING
from ufo_mobile.core.trace.progress import Progress

if TYPE_CHECKING:
    from ufo_mobile.core.session import Session

T = TypeVar("T")
Clock = Callable[[], float]

MODEL_PHASE = "llm_interaction"
CONNECTING = "connecting"  # before the first step: the phone is opened and connected
PHASE_WORDS = {CONNECTING: "connecting to the phone", "data_collection": "observing the screen",
               MODEL_PHASE: "waiting for the model", "action_execution": "acting",
               "memory_update": "updating memory", RECORDING: "recording",
               "replay": "checking the screen", "script": "running the script"}
FIRST_WAIT, WAIT_EVERY, TICK_SECONDS, THOUGHT_LIMIT, AGENT_LIMIT = 10.0, 30.0, 0.5, 300, 40


class PlainView:
    """Progress as plain lines (the module docstring says which); the base of ``StatusView``."""

    def __init__(self, console: Console, *, show_agent: bool = False, clock: Clock = time.monotonic,
                 first_wait: float = FIRST_WAIT, wait_every: float = WAIT_EVERY) -> None:
        self.console = console
        self.show_agent = show_agent  # name the agent (reasoning mode: manager, executor)
        self.clock = clock
        self.first_wait, self.wait_every = first_wait, wait_every
        self.step, self.agent, self.phase = 0, "", ""  # the phase in flight ("": none)
        self.since = 0.0  # when it started, by ``clock``
        self.next_wait = first_wait  # the model wait that prints the next waiting line
        self.spoke = False  # this step printed a retry or a waiting line

    # --- what the run tells -------------------------------------------------------------------

    def handle(self, event: Progress) -> None:
        """Take one event of the run (``RunContext.on_progress``)."""
        if (event.step, event.agent) != (self.step, self.agent):
            self.step, self.agent, self.spoke = event.step, event.agent, False
        if event.kind == "phase":
            self.phase, self.since, self.next_wait = event.phase, self.clock(), self.first_wait
        elif event.kind == "thought":
            if self.shows_thought():
                self.above(self.thought_line(event.text))
        elif event.kind == "retry":
            self.spoke = True
            self.above(self.retry_line(event))
        self.changed()

    def step_line(self, line: str) -> None:
        """A step ended: no phase in flight until the next one starts, and the step's line."""
        self.phase = ""
        self.changed()
        self.above(line)

    def tick(self) -> None:
        """Time passed: a model wait past its mark prints a line (and moves the mark)."""
        if self.phase == MODEL_PHASE and self.elapsed() >= self.next_wait:
            self.spoke = True
            self.above(f"  {self.status()}")
            while self.next_wait <= self.elapsed():
                self.next_wait += self.wait_every

    # --- what is shown ------------------------------------------------------------------------

    def elapsed(self) -> float:
        return max(self.clock() - self.since, 0.0)

    def status(self) -> str:
        """``step 3 · executor · waiting for the model · 4 s`` ("" with no phase in flight)."""
        if not self.phase:
            return ""
        parts = [f"step {self.step}"] if self.step else []
        if self.show_agent and self.agent:
            parts.append(self.console.safe(self.agent.lower(), AGENT_LIMIT))
        parts += [PHASE_WORDS.get(self.phase, self.console.safe(self.phase.replace("_", " "), AGENT_LIMIT)),
                  f"{int(self.elapsed())} s"]
        return " · ".join(parts)

    def thought_line(self, thought: str) -> str:
        who = f"{self.console.safe(self.agent.lower(), AGENT_LIMIT)} " if self.show_agent and self.agent else ""
        return f"  {who}thought: {self.console.safe(thought, THOUGHT_LIMIT)}"

    def retry_line(self, event: Progress) -> str:
        """``  model: HTTP 429: slow down, retrying in 2.0 s (attempt 2 of 5)``."""
        return (f"  model: {self.console.safe(event.text, THOUGHT_LIMIT)}, retrying in {event.delay:.1f} s "
                f"(attempt {event.attempt} of {event.attempts})")

    def shows_thought(self) -> bool:
        return self.spoke  # off a terminal, only a slow step's thought

    def above(self, line: str) -> None:
        """Print a line that stays."""
        self.console.print(line)

    def changed(self) -> None:
        """The status changed (nothing to redraw off a terminal)."""

    def open(self) -> None:
        """Start showing (nothing to set up off a terminal)."""

    def close(self) -> None:
        """Stop showing (nothing to clean up off a terminal); safe to call twice."""


_SHOWING: list[StatusView] = []  # the status lines on the terminal now (one per run at the terminal)


class StatusView(PlainView):
    """Progress on a terminal: a status line (rich's ``Live``) under the lines that stay."""

    def __init__(self, console: Console, *, show_agent: bool = False, clock: Clock = time.monotonic,
                 rich: RichConsole | None = None) -> None:
        super().__init__(console, show_agent=show_agent, clock=clock)
        self.rich = rich or RichConsole(file=console.out, force_terminal=True, highlight=False, markup=False,
                                        emoji=False)
        self.live = Live(Group(), console=self.rich, transient=True, auto_refresh=False)
        self.hidden = False
        self.drawn = ""  # the status line on the terminal now

    def shows_thought(self) -> bool:
        return True

    def tick(self) -> None:
        self.changed()  # the seconds go on in the status line; no waiting lines

    def render(self) -> Any:
        status = self.status()
        return Text(status, style="dim", no_wrap=True, overflow="ellipsis") if status else Group()

    def changed(self) -> None:
        status = self.status()
        if self.live.is_started and status != self.drawn:  # a tick within the same second draws nothing
            self.live.update(self.render(), refresh=True)
            self.drawn = status

    def above(self, line: str) -> None:
        if self.live.is_started:
            self.rich.print(Text(line), soft_wrap=True)  # printed above the status line
        else:
            self.console.out.write(line + "\n")
            self.console.out.flush()

    def open(self) -> None:
        """Show the status line; the console's lines go above it until ``close``."""
        self.console.sink = self.above
        _SHOWING.append(self)
        self.live.start()

    def close(self) -> None:
        """Erase the status line and give the console back."""
        if self in _SHOWING:
            _SHOWING.remove(self)
        if self.console.sink == self.above:
            self.console.sink = None
        self.hidden, self.drawn = False, ""
        if self.live.is_started:
            self.live.update(Group())
            self.live.stop()

    def hide(self) -> None:
        """Erase the status line for a while (a question on the terminal)."""
        if self.live.is_started:
            self.live.stop()
            self.hidden, self.drawn = True, ""

    def show(self) -> None:
        """Show it again after ``hide``."""
        if self.hidden:
            self.hidden = False
            self.live.start()
            self.changed()


@contextmanager
def status_hidden() -> Iterator[None]:
    """Within the block, no status line is on the terminal (a person reads and types there)."""
    showing = list(_SHOWING)
    for view in showing:
        view.hide()
    try:
        yield
    finally:
        for view in showing:
            view.show()


def view_for(console: Console, *, quiet: bool, show_agent: bool) -> PlainView | None:
    """The view for ``console``'s stream: none with ``quiet``, a status line on a terminal (not a
    dumb one), else plain lines."""
    if quiet:
        return None
    if is_terminal(console.out) and os.environ.get("TERM") != "dumb":
        return StatusView(console, show_agent=show_agent)
    return PlainView(console, show_agent=show_agent)


def show_progress(session: Session, view: PlainView, console: Console) -> None:
    """Show ``session``'s progress in ``view``: ``connecting to the phone`` once it starts (after
    the session's own ``on_start``), then its events, and each step's line (``Console.step``) when
    the step ends."""
    before = session.on_start

    def started(s: Session) -> None:
        if s.context is not None:
            s.context.on_progress = view.handle
        if before is not None:
            before(s)
        view.handle(Progress("phase", phase=CONNECTING))  # until the first step starts

    session.on_start = started
    session.on_step = lambda step: view.step_line(console.step(step))


async def follow(view: PlainView, run: Awaitable[T], *, every: float = TICK_SECONDS,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> T:
    """Await ``run`` with ``view`` open and ticking every ``every`` seconds; the ticker is cancelled
    and the view closed however the run ends (an answer, an exception, a cancel)."""
    view.open()
    ticker = asyncio.ensure_future(_ticks(view, every, sleep))
    try:
        return await run
    finally:
        ticker.cancel()
        view.close()
        await asyncio.gather(ticker, return_exceptions=True)


async def _ticks(view: PlainView, every: float, sleep: Callable[[float], Awaitable[None]]) -> None:
    while True:
        await sleep(every)
        view.tick()
