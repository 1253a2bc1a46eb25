"""What a step in flight shows (ufo_mobile/cli/live.py): plain lines off a terminal, a status line
on one. Time is a fake clock moved by hand; a terminal is rich writing into a buffer, read back
through a small screen model (``screen_of``) to see what stays on the screen."""

from __future__ import annotations

import asyncio
import io
import re

import pytest
from rich.console import Console as RichConsole

from ufo_mobile.cli.console import Console
from ufo_mobile.cli.live import PlainView, StatusView, follow, status_hidden, view_for
from ufo_mobile.cli.operator import TerminalOperator
from ufo_mobile.core.agents.human import ConfirmAnswer, ConfirmRequest
from ufo_mobile.core.trace.progress import Progress
from ufo_mobile.core.trace.writer import REDACTED, Redactor

SECRET = "sk-live-0123456789abcdef"
_CONTROL = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])")


def screen_of(raw: str) -> tuple[list[str], bool]:
    """The lines a terminal shows after ``raw`` (the controls rich's ``Live`` writes: carriage
    return, erase line, cursor up, colours, cursor shown or hidden), and whether the cursor shows.
    Any other control fails the test: it would be one this model cannot read."""
    rows, row, col, cursor = [""], 0, 0, True
    i = 0
    while i < len(raw):
        control = _CONTROL.match(raw, i)
        if control:
            params, final = control.groups()
            if final == "K":
                rows[row] = ""
            elif final == "A":
                row = max(row - int(params or 1), 0)
            elif final in "hl" and params == "?25":
                cursor = final == "h"
            elif final != "m":
                raise AssertionError(f"a control the screen model does not know: {control.group()!r}")
            i = control.end()
            continue
        ch = raw[i]
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row, col = row + 1, 0
            rows += [""] * (row + 1 - len(rows))
        else:
            line = rows[row].ljust(col)
            rows[row] = line[:col] + ch + line[col + 1:]
            col += 1
        i += 1
    return [r.rstrip() for r in rows if r.strip()], cursor


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def phase(step: int, name: str, agent: str = "MobileAgent") -> Progress:
    return Progress("phase", step=step, agent=agent, phase=name)


def thought(step: int, text: str, agent: str = "MobileAgent") -> Progress:
    return Progress("thought", step=step, agent=agent, text=text)


RETRY = Progress("retry", step=3, agent="MobileAgent", text="HTTP 429: slow down", delay=2.0, attempt=2, attempts=5)


def plain(**kwargs: object) -> tuple[PlainView, FakeClock, io.StringIO]:
    out, clock = io.StringIO(), FakeClock()
    return PlainView(Console(out, Redactor([SECRET])), clock=clock, **kwargs), clock, out  # type: ignore[arg-type]


def test_plain_a_quick_step_prints_only_its_line() -> None:
    view, clock, out = plain()
    for name in ("data_collection", "llm_interaction"):
        view.handle(phase(1, name))
        clock.now += 2
        view.tick()
    view.handle(thought(1, "Open Settings."))
    view.handle(phase(1, "action_execution"))
    view.step_line("step   1  CONTINUE  open_app")
    assert out.getvalue().splitlines() == ["step   1  CONTINUE  open_app"]


def test_plain_a_long_model_wait_prints_a_line_at_10_s_then_every_30_s_then_the_thought() -> None:
    view, clock, out = plain()
    view.handle(phase(3, "llm_interaction"))
    for now in (9.9, 10.4, 20.0, 39.0, 40.0, 41.0, 70.5):
        clock.now = 500.0 + now
        view.tick()
    view.handle(thought(3, "The Wi-Fi switch is off; tap it."))
    view.handle(phase(3, "action_execution"))
    clock.now += 100  # acting for long prints nothing: only the model's wait is announced
    view.tick()
    view.step_line("step   3  CONTINUE  click")
    assert out.getvalue().splitlines() == [
        "  step 3 · waiting for the model · 10 s",
        "  step 3 · waiting for the model · 40 s",
        "  step 3 · waiting for the model · 70 s",
        "  thought: The Wi-Fi switch is off; tap it.",
        "step   3  CONTINUE  click",
    ]


def test_plain_a_retry_is_printed_with_its_reason_and_wait_and_the_step_then_shows_its_thought() -> None:
    view, _, out = plain()
    view.handle(phase(3, "llm_interaction"))
    view.handle(RETRY)
    view.handle(thought(3, "Tap Wi-Fi."))
    view.handle(phase(4, "llm_interaction"))  # the next step starts quiet again
    view.handle(thought(4, "Done."))
    assert out.getvalue().splitlines() == [
        "  model: HTTP 429: slow down, retrying in 2.0 s (attempt 2 of 5)",
        "  thought: Tap Wi-Fi.",
    ]


def test_plain_names_the_agent_in_reasoning_mode() -> None:
    view, clock, out = plain(show_agent=True)
    view.handle(phase(2, "llm_interaction", agent="Executor"))
    clock.now += 12
    view.tick()
    view.handle(thought(2, "Tap Wi-Fi.", agent="Executor"))
    assert out.getvalue().splitlines() == ["  step 2 · executor · waiting for the model · 12 s",
                                           "  executor thought: Tap Wi-Fi."]


def test_plain_text_from_the_model_is_redacted_one_line_and_bounded() -> None:
    view, _, out = plain()
    view.handle(phase(1, "llm_interaction"))
    view.handle(Progress("retry", step=1, agent="MobileAgent", text=f"HTTP 500: key {SECRET}\x1b[2J", delay=1.0,
                         attempt=2, attempts=5))
    view.handle(thought(1, f"use {SECRET}\nFINISH after 1 step\x1b]0;pwned\x07" + "x" * 5000))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and SECRET not in out.getvalue() and "\x1b" not in out.getvalue()
    assert lines[0] == f"  model: HTTP 500: key {REDACTED}\\x1b[2J, retrying in 1.0 s (attempt 2 of 5)"
    assert lines[1].startswith(f"  thought: use {REDACTED}\\nFINISH after 1 step\\x1b]0;pwned\\x07")
    assert lines[1].endswith("more characters]") and len(lines[1]) < 400


# --- on a terminal -------------------------------------------------------------------------------


def status(width: int = 100) -> tuple[StatusView, FakeClock, io.StringIO, Console]:
    out, clock = io.StringIO(), FakeClock()
    console = Console(out, Redactor([SECRET]))
    rich = RichConsole(file=out, force_terminal=True, width=width, height=30)
    return StatusView(console, clock=clock, rich=rich), clock, out, console


def test_the_status_line_counts_the_seconds_and_is_erased_at_the_end() -> None:
    view, clock, out, console = status()
    view.open()
    console.print("run r1: Turn on Wi-Fi")  # the console's lines go above the status line
    view.handle(phase(3, "data_collection"))
    assert screen_of(out.getvalue())[0] == ["run r1: Turn on Wi-Fi", "step 3 · observing the screen · 0 s"]
    view.handle(phase(3, "llm_interaction"))
    clock.now += 4.2
    view.tick()
    assert screen_of(out.getvalue())[0][-1] == "step 3 · waiting for the model · 4 s"
    view.handle(RETRY)
    view.handle(thought(3, f"Tap {SECRET}."))
    view.handle(phase(3, "action_execution"))
    assert screen_of(out.getvalue())[0] == [
        "run r1: Turn on Wi-Fi", "  model: HTTP 429: slow down, retrying in 2.0 s (attempt 2 of 5)",
        f"  thought: Tap {REDACTED}.", "step 3 · acting · 0 s"]
    view.step_line("step   3  CONTINUE  click")
    view.handle(phase(4, "data_collection"))
    view.close()
    assert screen_of(out.getvalue()) == ([  # no status line left, and the cursor shows
        "run r1: Turn on Wi-Fi", "  model: HTTP 429: slow down, retrying in 2.0 s (attempt 2 of 5)",
        f"  thought: Tap {REDACTED}.", "step   3  CONTINUE  click"], True)
    assert console.sink is None
    console.print("FINISH after 3 steps")  # after the run, lines go straight out again
    assert screen_of(out.getvalue())[0][-1] == "FINISH after 3 steps"
    view.close()  # twice is harmless


def test_a_tick_redraws_the_status_line_only_when_it_changed() -> None:
    view, clock, out, _ = status()
    view.open()
    view.handle(phase(1, "llm_interaction"))
    written = len(out.getvalue())
    clock.now += 0.4
    view.tick()  # still "0 s": nothing written
    assert len(out.getvalue()) == written
    clock.now += 0.7
    view.tick()
    assert screen_of(out.getvalue())[0] == ["step 1 · waiting for the model · 1 s"]
    view.close()


def test_before_the_first_step_the_status_line_says_the_phone_is_being_connected() -> None:
    view, clock, out, _ = status()
    view.open()
    view.handle(Progress("phase", phase="connecting"))
    clock.now += 3
    view.tick()
    assert screen_of(out.getvalue())[0] == ["connecting to the phone · 3 s"]
    view.handle(phase(1, "data_collection"))
    assert screen_of(out.getvalue())[0] == ["step 1 · observing the screen · 0 s"]
    view.close()


def test_the_status_line_never_wraps() -> None:
    view, _, out, _ = status(width=30)
    view.open()
    view.handle(phase(12, "llm_interaction", agent="TextManipulator"))
    view.show_agent = True
    view.tick()
    shown = screen_of(out.getvalue())[0]
    assert len(shown) == 1 and len(shown[0]) <= 30 and shown[0].startswith("step 12 · textmanipulator")
    view.close()


async def test_a_question_on_the_terminal_hides_the_status_line_until_it_is_answered() -> None:
    view, _, out, _ = status()
    view.open()
    view.handle(phase(4, "action_execution"))
    seen: list[list[str]] = []

    class Typed(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            seen.append(screen_of(out.getvalue())[0])  # what the terminal shows while the person reads
            return "y\n"

    asked = io.StringIO()
    request = ConfirmRequest("r", 4, "click(index=7, text='Pay')", "com.bank", "the model asked for approval")
    assert await TerminalOperator(Typed(), asked).confirm(request) == ConfirmAnswer(True, "")
    assert seen == [[]] and not view.hidden
    assert screen_of(out.getvalue())[0] == ["step 4 · acting · 0 s"]  # back once answered
    view.close()
    with status_hidden():  # nothing showing: nothing to hide
        pass
    assert screen_of(out.getvalue()) == ([], True)


# --- following a run -----------------------------------------------------------------------------


class Ticks:
    """A ticker's sleep that returns only when the test lets one tick through (``tick``)."""

    def __init__(self) -> None:
        self.allowed: asyncio.Queue[None] = asyncio.Queue()
        self.asleep: asyncio.Queue[None] = asyncio.Queue()  # a token each time the ticker goes to sleep

    async def sleep(self, seconds: float) -> None:
        self.asleep.put_nowait(None)
        await self.allowed.get()

    async def tick(self) -> None:
        """One tick: wait until the ticker sleeps, wake it, wait until it sleeps again."""
        await self.asleep.get()
        self.allowed.put_nowait(None)
        await self.asleep.get()
        self.asleep.put_nowait(None)  # it is asleep: the next tick need not wait for that


async def test_follow_ticks_the_view_while_the_run_goes_and_closes_it_at_the_end() -> None:
    view, clock, out, _ = status()
    ticks, started, release = Ticks(), asyncio.Event(), asyncio.Event()

    async def run() -> str:
        view.handle(phase(1, "llm_interaction"))
        started.set()
        await release.wait()
        return "done"

    task = asyncio.ensure_future(follow(view, run(), sleep=ticks.sleep))
    await started.wait()
    clock.now += 7
    await ticks.tick()
    assert screen_of(out.getvalue())[0] == ["step 1 · waiting for the model · 7 s"]
    release.set()
    assert await task == "done"
    assert screen_of(out.getvalue()) == ([], True) and not view.live.is_started


@pytest.mark.parametrize("ending", ["error", "cancel"])
async def test_follow_leaves_the_terminal_clean_when_the_run_raises_or_is_cancelled(ending: str) -> None:
    view, _, out, _ = status()
    ticks, started = Ticks(), asyncio.Event()

    async def run() -> None:
        view.handle(phase(2, "action_execution"))
        started.set()
        if ending == "error":
            raise RuntimeError("the phone caught fire")
        await asyncio.Event().wait()

    task = asyncio.ensure_future(follow(view, run(), sleep=ticks.sleep))
    await started.wait()
    if ending == "cancel":
        task.cancel()
    with pytest.raises(RuntimeError if ending == "error" else asyncio.CancelledError):
        await task
    assert screen_of(out.getvalue()) == ([], True) and not view.live.is_started


def test_the_view_fits_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "xterm-256color")
    assert view_for(Console(Tty()), quiet=True, show_agent=False) is None
    assert type(view_for(Console(io.StringIO()), quiet=False, show_agent=False)) is PlainView
    assert type(view_for(Console(Tty()), quiet=False, show_agent=True)) is StatusView
    monkeypatch.setenv("TERM", "dumb")  # a terminal that cannot move the cursor gets plain lines
    assert type(view_for(Console(Tty()), quiet=False, show_agent=False)) is PlainView
