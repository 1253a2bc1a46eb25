"""examples/serve_client.py run against a real ``serve``: without a token on either side, and with the
service's token in ``$UFO_MOBILE_SERVE_TOKEN``; both complete their task (exit 0), and without the
token a service that asks for one refuses it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.conftest import HANG_GUARD
from tests.flows import DONE
from tests.integration.test_serve_aip import TOKEN, served, write_config

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve_client.py"


def run_example(port: int, token: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "UFO_MOBILE_SERVE_TOKEN"}
    if token is not None:
        env["UFO_MOBILE_SERVE_TOKEN"] = token
    return subprocess.run([sys.executable, str(EXAMPLE), f"ws://127.0.0.1:{port}/ws"], env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD)


@pytest.mark.parametrize("token", [None, TOKEN], ids=["no-token", "token"])
def test_the_example_completes_a_task(tmp_path: Path, token: str | None) -> None:
    config = write_config(tmp_path, [DONE])
    with served(tmp_path, "--devices", "sim:1", "--config", str(config),
                env={"UFO_MOBILE_SERVE_TOKEN": token} if token else None) as (serve, port):
        done = run_example(port, token)
        refused = run_example(port, None) if token else None  # the service does ask for the token
        serve.signal(signal.SIGINT)
        serve.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert (lines[0], lines[-1].rstrip()) == ("heartbeat ok registered", "task_end completed"), lines
    assert "Traceback" not in done.stderr
    assert refused is None or (refused.returncode != 0 and "task_end" not in refused.stdout)
