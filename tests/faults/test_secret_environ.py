"""A secret the runtime read from its environment is gone from /proc/<pid>/environ while it runs:
serve's token, and a task's credentials.env secret during a run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.faults.conftest import Cli, write_task

TOKEN = "serve-token-6b1f0c2d9e8a7f"
SECRET = "mail-Pw-1234567890"

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(),
                                reason="needs /proc to read a process's initial environment")


def environ_of(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


def test_serves_token_is_not_in_its_process_environment(tmp_path: Path) -> None:
    serve = Cli("serve", "--port", "0", "--log-dir", "logs", "--config", "demo", cwd=tmp_path,
                env={**os.environ, "UFO_MOBILE_SERVE_TOKEN": TOKEN})
    try:
        serve.wait_line("serving AIP tasks on ws://")
        assert TOKEN.encode() not in environ_of(serve.proc.pid)
        assert b"UFO_MOBILE_SERVE_TOKEN=" in environ_of(serve.proc.pid)  # the name stays, its value is gone
    finally:
        serve.signal(signal.SIGTERM)
        serve.finish()


def test_a_credentials_secret_is_not_in_the_runs_process_environment(tmp_path: Path) -> None:
    slow = {"status": "CONTINUE", "thought": "t", "actions": [{"name": "wait", "args": {"duration": 30}}]}
    task = write_task(tmp_path, [slow, {"status": "FINISH", "result": "done"}],
                      extra="credentials: {env: {mail: MAIL_PW}}\n")
    run = Cli("run", str(task), "--log-dir", "logs", cwd=tmp_path, env={**os.environ, "MAIL_PW": SECRET})
    try:
        run.wait_line("step   1")
        assert SECRET.encode() not in environ_of(run.proc.pid)
    finally:
        run.signal(signal.SIGTERM)
        run.finish()
