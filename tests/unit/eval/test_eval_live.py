"""What ``eval`` shows while it runs: the board kept from the campaign's events (with a fake clock), the
live table and score at a terminal, the plain lines elsewhere, and the real command in an 80-column
pseudo-terminal, where no cell is cut short and the live table is gone at the end."""

from __future__ import annotations

import asyncio
import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tests.unit.eval.conftest import SUITE, StillSimDriver, fast_settings, suite_tasks
from ufo_mobile.eval.campaign import Campaign, RunEvent, plan
from ufo_mobile.eval.live import EvalBoard, LiveView, PlainView, QuietView

ROOT = Path(__file__).resolve().parents[3]
HANG_GUARD = 300.0  # seconds; reached only when something hangs
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def runs(count: int = 3) -> list[Any]:
    return plan(list(suite_tasks()[:count]))


def ended(board: EvalBoard, index: int, passed: bool, interrupted: bool = False) -> dict[str, Any]:
    task = board.flights[index].label.split(" ")[0]
    return {"task_id": task, "seed": 0, "status": "FINISH" if passed else "FAIL", "reason": "gave up",
            "passed": passed, "interrupted": interrupted, "steps": 2, "budget": board.flights[index].budget,
            "duration_seconds": 1.5}


def test_the_board_follows_the_runs_in_flight_and_the_score() -> None:
    clock = Clock()
    board = EvalBoard(runs(), clock)
    board.event(RunEvent("start", 0))
    clock.now = 52.0
    board.event(RunEvent("start", 2))
    board.event(RunEvent("step", 0, steps=2))
    clock.now = 54.5
    first, third = board.flights[0], board.flights[2]
    assert [f.label for f in board.running()] == [first.label, third.label]
    assert (first.steps, first.started, third.steps) == (2, 50.0, 0)
    assert board.score() == "0 passed, 0 failed of 3; 2 running; 4 s"
    board.event(RunEvent("end", 0))
    board.record(ended(board, 0, passed=True))
    board.record(ended(board, 1, passed=False, interrupted=True))
    assert board.score() == "1 passed, 0 failed, 1 interrupted of 3; 1 running; 4 s"
    out = io.StringIO()
    Console(file=out, width=80, force_terminal=True, color_system=None).print(board.view())
    text = out.getvalue()
    assert third.label in text and f"0/{third.budget}" in text and "2.5 s" in text and first.label not in text
    assert "1 passed, 0 failed, 1 interrupted of 3; 1 running" in text


def test_on_a_narrow_terminal_the_live_table_folds_and_never_cuts() -> None:
    board = EvalBoard(runs(2), Clock())
    board.event(RunEvent("start", 0))
    board.event(RunEvent("start", 1))
    out = io.StringIO()
    Console(file=out, width=24, force_terminal=True, color_system=None).print(board.view())
    text = out.getvalue()
    assert "…" not in text and all(len(line) <= 24 for line in text.splitlines())
    cells = "".join(line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│"))
    assert board.flights[0].label.replace(" ", "") in cells.replace(" ", "")


def test_the_live_view_prints_each_run_above_its_table_and_clears_the_table_at_the_end() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    board = EvalBoard(runs(2), Clock())
    with LiveView(console, board, refresh_per_second=1.0) as view:
        view.event(RunEvent("start", 0))
        view.event(RunEvent("start", 1))
        view.event(RunEvent("end", 0))
        view.ended(ended(board, 0, passed=True))
    text = ANSI.sub("", out.getvalue())
    line = f"[1/2] {board.flights[0].label}: PASS  FINISH  2/{board.flights[0].budget} steps  1.5s"
    assert line in text and "1 passed, 0 failed of 2; 1 running" in text
    assert board.flights[1].label in text and "…" not in text
    tail = out.getvalue().rsplit("\x1b[?25h", 1)[1]  # the cursor shown again, then the table erased line by line
    assert re.fullmatch(r"(\r|\x1b\[1A|\x1b\[2K)+", tail), repr(tail)


def test_off_a_terminal_one_line_per_run_and_quiet_prints_nothing() -> None:
    out = io.StringIO()
    board = EvalBoard(runs(2), Clock())
    view = PlainView(Console(file=out, width=40, color_system=None, soft_wrap=True), board)
    view.event(RunEvent("start", 0))
    view.ended({**ended(board, 0, passed=False), "reason": "a reason longer than the forty columns of this console"})
    assert out.getvalue().splitlines() == [
        f"[1/2] {board.flights[0].label}: fail  FAIL (a reason longer than the forty columns of this console)  "
        f"2/{board.flights[0].budget} steps  1.5s"]
    quiet = io.StringIO()
    QuietView(Console(file=quiet), EvalBoard(runs(1), Clock())).ended(ended(board, 0, passed=True))
    assert quiet.getvalue() == ""


def test_the_campaign_tells_when_each_run_starts_steps_and_ends(tmp_path: Path) -> None:
    events: list[RunEvent] = []
    campaign = Campaign(runs(2), settings=fast_settings(), log_dir=tmp_path, builtin="oracle",
                        on_event=events.append, driver=StillSimDriver)
    records = asyncio.run(campaign.run())
    for index, record in enumerate(records):
        mine = [e for e in events if e.index == index]
        assert mine[0].kind == "start" and mine[-1].kind == "end"
        steps = [e.steps for e in mine if e.kind == "step"]
        assert steps and steps == sorted(steps) and steps[-1] == record["steps"]


def in_pty(*args: str, columns: str | None) -> str:
    """The real command in an 80x24 pseudo-terminal (``COLUMNS`` as given, or unset): all it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(ROOT)
    if columns is not None:
        env["COLUMNS"] = columns
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "eval", *args], cwd=ROOT, env=env,
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while select.select([master], [], [], HANG_GUARD)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:  # the other side closed: the command ended
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=HANG_GUARD) == 0, b"".join(chunks).decode(errors="replace")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return b"".join(chunks).decode()


@pytest.mark.parametrize("columns", [None, "80"], ids=["pty", "pty-COLUMNS=80"])
def test_at_an_80_column_terminal_the_live_view_shows_and_no_cell_is_cut(tmp_path: Path, columns: str | None) -> None:
    config = tmp_path / "fast.yaml"
    config.write_text("logs: {report: false}\nperception: {annotate: false, settle_timeout_seconds: 0}\n")
    raw = in_pty(str(SUITE), "--model", "give-up", "--tasks", "clock-*", "--parallel", "2", "--config",
                 str(config), "--log-dir", str(tmp_path / "logs"), columns=columns)
    text = ANSI.sub("", raw).replace("\r", "\n")
    lines = text.splitlines()
    assert "elapsed" in text and re.search(r"\d passed, \d failed of 4; [12] running", text)  # the live view
    assert all(line.startswith("  not passed: ") for line in lines if "…" in line)  # only a check's own words
    assert sum(line.startswith(f"[{n}/4] clock-") for line in lines for n in range(1, 5)) == 4
    assert "success rate: 1/4 runs (25.0%); pass@1 0.250" in lines
    for task in ("clock-alarm-time", "clock-impossible-delete", "clock-new-alarm", "clock-turn-off"):
        assert any(line.startswith(task) for line in lines), task  # its row, whole
    assert re.search(r"\x1b\[\?25h", raw) and not re.search(r"running; \d+ s\s*$", text)  # the table is gone
