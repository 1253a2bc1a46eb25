"""Fixtures of the replay tests (helpers in ``helpers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.replay.helpers import record_demo
from ufo_mobile.core.session import RunResult


@pytest.fixture
async def recorded(tmp_path: Path) -> RunResult:
    """A recorded demo run (direct mode)."""
    return await record_demo(tmp_path / "recorded")
