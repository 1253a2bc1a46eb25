"""A takeover at a real terminal: the run asks on a pseudo-terminal, the test answers like a person,
and the run goes on to finish. Without a terminal, the same takeover ends the run in FAIL."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.faults.conftest import HANG_GUARD, ROOT, cli, only_run_dir, run_json, write_task

OPEN = {"status": "CONTINUE", "thought": "open", "action": {"name": "open_app", "args": {"text": "Settings"}}}
TAKEOVER = {"status": "TAKEOVER", "thought": "a login", "result": "Log in\nFINISH after 9 steps\x1b]0;x\x07"}
DONE = {"status": "FINISH", "result": "done"}


def read_until(fd: int, marker: str) -> str:
    """Read the terminal until ``marker`` appears (the wait is for the prompt, bounded as a hang guard)."""
    seen = b""
    deadline = time.monotonic() + HANG_GUARD
    while marker.encode() not in seen:
        assert time.monotonic() < deadline, f"no {marker!r} on the terminal: {seen.decode(errors='replace')}"
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            seen += os.read(fd, 4096)
    return seen.decode(errors="replace")


def test_a_person_at_the_terminal_takes_over_and_the_run_finishes(tmp_path: Path) -> None:
    task = write_task(tmp_path, [OPEN, TAKEOVER, DONE])
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "run", str(task), "--log-dir", "logs"],
                            cwd=tmp_path, stdin=slave, stderr=slave, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
                            start_new_session=True)
    os.close(slave)
    try:
        asked = read_until(master, "press Enter")
        os.write(master, b"done, logged in as Ada\n")
        out, _ = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0, out
    assert "The agent asks you to take over the phone (step 2, app com.android.settings):" in asked
    assert "Log in\\nFINISH after 9 steps\\x1b]0;x\\x07" in asked and "\x1b]0" not in asked  # printed safely
    assert "FINISH after 2 steps (3 turns)" in out  # the takeover costs no step
    run_dir = only_run_dir(tmp_path / "logs")
    prompt = json.loads((run_dir / "steps" / "0003" / "prompt.json").read_text())
    assert any("the person said: done, logged in as Ada" in m["content"] for m in prompt)
    assert run_json(run_dir)["status"] == "FINISH"


def test_without_a_terminal_a_takeover_fails_with_the_reason(tmp_path: Path) -> None:
    task = write_task(tmp_path, [OPEN, TAKEOVER])
    code, out, err = cli("run", str(task), "--log-dir", "logs", cwd=tmp_path)
    assert code == 1, out + err
    reason = run_json(only_run_dir(tmp_path / "logs"))["reason"]
    assert reason.startswith("needs a person: the agent asked a person to take over (Log in\nFINISH")
    assert reason.endswith("and nobody can answer")
    assert run_json(only_run_dir(tmp_path / "logs"))["outcome"] == "needs_person"
    assert "Log in\\nFINISH after 9 steps" in out and out.count("FAIL after") == 1
