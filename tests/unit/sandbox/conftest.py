"""Every sandbox process a test starts is recorded and, after the test, checked to be gone: reaped,
nothing left in its process group (what it forked included), its working directory removed."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import live_group_members
from ufo_mobile.core.sandbox import process
from ufo_mobile.core.sandbox.process import SandboxProcess

HANG_GUARD = 60.0  # seconds; only ever reached when a process really outlives its sandbox


@pytest.fixture(autouse=True)
def sandbox_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SandboxProcess]]:
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to check that no sandbox process is left over")
    started: list[SandboxProcess] = []
    real_start = process.start

    async def recording_start(**kwargs: Any) -> SandboxProcess:
        sandbox = await real_start(**kwargs)
        started.append(sandbox)
        return sandbox

    monkeypatch.setattr(process, "start", recording_start)
    yield started
    for sandbox in started:
        assert sandbox.returncode is not None, f"sandbox process {sandbox.pid} was not reaped"
        # SIGKILLed members are torn down by the kernel a moment later (longer on a loaded machine):
        # wait for that; the bound is only a hang guard
        deadline = time.monotonic() + HANG_GUARD
        while live_group_members(sandbox.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live_group_members(sandbox.pid) == [], f"processes of sandbox {sandbox.pid} outlived the run"
        assert not os.path.exists(sandbox.workdir), f"{sandbox.workdir} was not removed"
