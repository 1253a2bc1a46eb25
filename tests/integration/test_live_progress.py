"""What a run shows while its step is in flight, end to end: a session whose model is the local
OpenAI-compatible server (tests/openai_server.py) answering 429 first, then holding the answer
until the test releases it, followed by the plain view (off a terminal) and the status line (rich
writing into a buffer, as on a terminal); then the command line on a pseudo-terminal, stopped by
Ctrl-C in the middle of a model wait, and asking a person to take over. Time is faked: the view's
clock and ticker, and the model's retry sleep, move only when the test says."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from rich.console import Console as RichConsole

from tests.fake_time import FakeTime
from tests.faults.conftest import write_task
from tests.integration.test_openai_client import ENV, KEY, model_settings, server  # noqa: F401
from tests.openai_server import Hold, OpenAIServer, chat, error
from tests.unit.test_cli_live import FakeClock, Ticks, screen_of
from ufo_mobile.cli.console import Console
from ufo_mobile.cli.live import PlainView, StatusView, follow, show_progress
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.openai_chat import OpenAIChatModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.settings import LimitSettings, LogSettings, Settings, TaskSettings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 120.0  # seconds; only ever reached when something hangs
OPEN = {"status": "CONTINUE", "thought": "Open Settings to find Wi-Fi.",
        "action": {"name": "open_app", "args": {"text": "Settings"}}}
DONE = {"status": "FINISH", "thought": "Settings is open.", "result": "done"}
RATE_LIMITED = error(429, "Rate limit reached", code="rate_limit_exceeded", headers={"retry-after-ms": "2000"})
STATUS = re.compile(r"^step \d+ · ")  # a status line on the screen


async def run_watched(tmp_path: Path, server: OpenAIServer, view: PlainView, console: Console,  # noqa: F811
                      clock: FakeClock) -> RunResult:
    """Run the two-step task while the first answer is held: once it is, 12 s pass on the view's
    clock and the ticker ticks once; then the answer is released."""
    server.push(RATE_LIMITED, Hold(chat(OPEN)), chat(DONE))
    settings = Settings(task=TaskSettings(text="Open Settings"), model=model_settings(server),
                        limits=LimitSettings(max_steps=5), logs=LogSettings(dir=tmp_path / "logs"))
    model = OpenAIChatModel.from_settings(settings.model, ENV, clock=FakeTime([0.5]).clock())
    session = Session(settings, model=model, device=SimDriver())
    console.redactor = session.redactor
    show_progress(session, view, console)
    ticks = Ticks()
    try:
        running = asyncio.ensure_future(follow(view, session.run(), sleep=ticks.sleep))
        await asyncio.to_thread(server.wait_for_requests, 2)  # the retry is held
        clock.now += 12
        await ticks.tick()
        server.release()
        return await running
    finally:
        await model.aclose()


async def test_plain_lines_say_the_retry_the_wait_and_the_thought_in_order(tmp_path: Path,
                                                                           server: OpenAIServer) -> None:  # noqa: F811
    out, clock = io.StringIO(), FakeClock()
    console = Console(out)
    result = await run_watched(tmp_path, server, PlainView(console, clock=clock), console, clock)
    assert result.status == "FINISH", result.reason
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["  model: HTTP 429: Rate limit reached, retrying in 2.0 s (attempt 2 of 4)",
                         "  step 1 · waiting for the model · 12 s",
                         "  thought: Open Settings to find Wi-Fi."]
    assert lines[3].startswith("step   1  CONTINUE  open_app(text='Settings')")
    assert lines[4].startswith("step   2  FINISH") and len(lines) == 5  # a quick step: only its line
    assert "\x1b" not in out.getvalue() and KEY not in out.getvalue()


class ScreenAtTicks(StatusView):
    """A status view that keeps what the terminal shows after each tick."""

    shown: list[list[str]]

    def tick(self) -> None:
        super().tick()
        self.shown = [*getattr(self, "shown", []), screen_of(self.console.out.getvalue())[0]]  # type: ignore[attr-defined]


async def test_a_terminal_shows_the_status_line_while_the_model_is_waited_for_and_is_left_clean(
        tmp_path: Path, server: OpenAIServer) -> None:  # noqa: F811
    out, clock = io.StringIO(), FakeClock()
    console = Console(out)
    view = ScreenAtTicks(console, clock=clock, rich=RichConsole(file=out, force_terminal=True, width=100, height=30))
    result = await run_watched(tmp_path, server, view, console, clock)
    assert result.status == "FINISH", result.reason
    assert view.shown == [["  model: HTTP 429: Rate limit reached, retrying in 2.0 s (attempt 2 of 4)",
                      "step 1 · waiting for the model · 12 s"]]
    lines, cursor = screen_of(out.getvalue())
    assert lines[:3] == ["  model: HTTP 429: Rate limit reached, retrying in 2.0 s (attempt 2 of 4)",
                         "  thought: Open Settings to find Wi-Fi.", lines[2]]
    assert lines[2].startswith("step   1  CONTINUE") and lines[3] == "  thought: Settings is open."
    assert lines[4].startswith("step   2  FINISH") and len(lines) == 5 and cursor  # no status line left


# --- the command line on a pseudo-terminal -------------------------------------------------------


class Terminal:
    """``python -m ufo_mobile ARGS`` with a pseudo-terminal (120 x 40) as its stdin, stdout and
    stderr, read on a thread into ``raw``."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        environment = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", **(env or {})}
        for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE"):
            environment.pop(name, None)
        self.proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", *args], cwd=cwd, env=environment,
                                     stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        self.master, self.raw, self.changed = master, b"", threading.Condition()
        self.reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:  # EIO: the process and its terminal are gone
                data = b""
            with self.changed:
                self.raw += data
                self.changed.notify_all()
            if not data:
                return

    def text(self) -> str:
        return self.raw.decode("utf-8", errors="replace")

    def wait_for(self, marker: str) -> list[str]:
        """Wait until ``marker`` is on the terminal (a hang guard bounds it); the screen then."""
        with self.changed:
            assert self.changed.wait_for(lambda: marker in self.text(), HANG_GUARD), self.text()[-3000:]
            return screen_of(self.text())[0]

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> tuple[int, list[str], bool]:
        """The exit code, and the screen it left with whether the cursor shows."""
        try:
            code = self.proc.wait(HANG_GUARD)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.reader.join(HANG_GUARD)
        os.close(self.master)
        lines, cursor = screen_of(self.text())
        return code, lines, cursor


def test_ctrl_c_in_a_model_wait_leaves_the_terminal_clean(tmp_path: Path, server: OpenAIServer) -> None:  # noqa: F811
    server.push(Hold(chat(OPEN)))
    task = tmp_path / "task.yaml"
    task.write_text("task: Open Settings\nmodel: {name: gpt-4o, api_key_env: UFO_TEST_KEY}\n")
    terminal = Terminal("run", str(task), "--log-dir", "logs", "--provider", "openai_compatible",
                        "--base-url", server.url, cwd=tmp_path, env=ENV)
    try:
        screen = terminal.wait_for("waiting for the model")
        assert STATUS.match(screen[-1]) and "step 1 · waiting for the model · " in screen[-1], screen
        terminal.proc.send_signal(signal.SIGINT)
    finally:
        code, lines, cursor = terminal.finish()
    assert code == 130, lines
    assert not [line for line in lines if STATUS.match(line)] and cursor, lines
    assert any(line.startswith("step   1  FAIL") and "interrupted" in line for line in lines), lines
    assert any(line.startswith("FAIL after 0 steps (1 turn)") and line.endswith(": interrupted") for line in lines)
    assert KEY not in terminal.text()


def test_a_takeover_question_is_asked_with_no_status_line_on_the_terminal(tmp_path: Path) -> None:
    takeover = {"status": "TAKEOVER", "thought": "a login", "result": "Log in, please"}
    task = write_task(tmp_path, [OPEN, takeover, DONE])
    terminal = Terminal("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    try:
        asked = terminal.wait_for("press Enter")
        terminal.type("done")
    finally:
        code, lines, cursor = terminal.finish()
    assert asked[-1].startswith("Do it on the phone, then press Enter") and not any(STATUS.match(x) for x in asked)
    assert asked[-3].startswith("The agent asks you to take over the phone (step 2"), asked
    assert code == 0, lines
    assert not [line for line in lines if STATUS.match(line)] and cursor, lines
    assert any(line.startswith("FINISH after 2 steps") for line in lines), lines
    (run_dir,) = (tmp_path / "logs").iterdir()
    steps = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    assert [s["status"] for s in steps] == ["CONTINUE", "TAKEOVER", "FINISH"]
