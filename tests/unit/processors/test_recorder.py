"""The step recorder writes a step's files in a worker thread, never on the event loop (where a slow
disk would hold up every other run of the process), and a step cancelled while it is being
recorded is still written whole."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import SCREEN_XML
from ufo_mobile.core.device.base import CurrentApp
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.recorder import StepRecorder
from ufo_mobile.core.trace import off_loop
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.core.ui import build_ui_state

HANG_GUARD = 60  # seconds; only ever reached when something is broken


class Watched(RunWriter):
    """A run writer that notes the thread of every write, and can hold its first file back."""

    def __init__(self, run_dir: Path, *, hold: bool = False) -> None:
        super().__init__(run_dir)
        self.threads: set[int] = set()
        self.started, self.go = threading.Event(), threading.Event()
        if not hold:
            self.go.set()

    def write_file(self, relative: str | Path, content: Any) -> Path:
        self.threads.add(threading.get_ident())
        self.started.set()
        assert self.go.wait(HANG_GUARD)
        return super().write_file(relative, content)

    def append_step(self, line: Any) -> None:
        self.threads.add(threading.get_ident())
        super().append_step(line)


def step() -> StepContext:
    ctx = StepContext(run_id="r", step=1, agent_name="A", request="x", shared=SharedState())
    ui = build_ui_state(SCREEN_XML, observation_id="o", screen_size=(1080, 2400))
    ctx.observation = Observation(observation_id="o", screenshot=b"not a picture", ui_state=ui,
                                  current_app=CurrentApp(package="p"), apps=[], screen_size=(1080, 2400))
    return ctx


def written(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]


async def test_a_steps_files_are_written_off_the_event_loop(tmp_path: Path) -> None:
    writer = Watched(tmp_path / "run")
    await StepRecorder(writer)(step())
    writer.close()
    assert writer.threads and threading.get_ident() not in writer.threads
    (line,) = written(tmp_path / "run")
    assert line["files"]["screenshot"] == "steps/0001/screenshot.png"
    assert (tmp_path / "run" / "steps" / "0001" / "screen.txt").exists()


async def test_a_step_cancelled_while_being_recorded_is_still_written_whole(tmp_path: Path) -> None:
    writer = Watched(tmp_path / "run", hold=True)
    task = asyncio.ensure_future(StepRecorder(writer)(step()))
    assert await asyncio.to_thread(writer.started.wait, HANG_GUARD)  # the recording has begun
    task.cancel()
    writer.go.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    writer.close()
    (line,) = written(tmp_path / "run")
    assert set(line["files"]) >= {"screenshot", "controls", "screen", "result", "state", "timings"}


async def test_a_step_cancelled_before_its_recording_began_is_recorded_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    busy, free = threading.Event(), threading.Event()
    one = ThreadPoolExecutor(1)
    monkeypatch.setattr(off_loop, "_threads", one)
    one.submit(lambda: (busy.set(), free.wait(HANG_GUARD)))  # the only thread is taken
    assert await asyncio.to_thread(busy.wait, HANG_GUARD)
    writer = Watched(tmp_path / "run")
    task = asyncio.ensure_future(StepRecorder(writer)(step()))
    await asyncio.sleep(0)  # the recording is queued behind the busy thread
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    free.set()
    one.shutdown()
    writer.close()
    assert writer.threads == {threading.get_ident()}  # done here, on the loop, once
    assert len(written(tmp_path / "run")) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
async def test_a_forked_child_records_with_threads_of_its_own(tmp_path: Path) -> None:
    await off_loop.written(lambda: None)  # the parent's writing threads exist
    pid = os.fork()
    if pid == 0:  # the child: a step recorded there must not wait on threads that did not come along
        code = 1
        try:
            writer = RunWriter(tmp_path / "child")
            asyncio.run(StepRecorder(writer)(step()))
            writer.close()
            code = 0
        finally:
            os._exit(code)
    try:
        _, status = await asyncio.wait_for(asyncio.to_thread(os.waitpid, pid, 0), HANG_GUARD)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the child's step was never recorded: it waited on its parent's threads")
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(written(tmp_path / "child")) == 1
