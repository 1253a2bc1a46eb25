"""A run recorded on the in-process simulated phone, replayed on the emulated realistic phone through
the real adb server, adbutils and uiautomator2: the screens still match, and where uiautomator2's dump
of every window puts the status bar's controls first, the replay clicks the controls by their new
numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_drivers import PIXEL, demo_settings, device_settings
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.session import Session
from ufo_mobile.replay import NoModel, ReplayPlan, load_trajectory
from ufo_mobile.settings import settings_of_run

pytestmark = pytest.mark.integration

# the realistic phone, with the same apps as the in-process one (its launcher shows the same icons)
SAME_APPS = PIXEL.replace(extra_apps=())


@pytest.mark.parametrize(("kind", "sim_device", "index"), [("adb", SAME_APPS, 3), ("u2", SAME_APPS, 5)],
                         indirect=["sim_device"])
async def test_a_run_recorded_in_process_replays_through_the_real_adb_stack(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path, index: int) -> None:
    recorded = await Session(demo_settings(tmp_path / "sim"), device=SimDriver()).run()
    trajectory = load_trajectory(recorded.run_dir)
    run = json.loads((recorded.run_dir / "run.json").read_text())
    device = device_settings(sim_device, adb_server, kind).model_dump()
    settings = settings_of_run(run, overrides={"logs": {"dir": str(tmp_path / kind)}, "device": device})
    plan = ReplayPlan(trajectory, fallback="stop", source=f"run {trajectory.run_id}")
    assert sim_device.phone.state("com.android.settings")["wifi"] is False
    result = await Session(settings, model=NoModel(), replay=plan).run()
    assert (result.status, result.answer, result.model_calls) == ("FINISH", "Wi-Fi is on.", 0), result.replay
    assert sim_device.phone.state("com.android.settings")["wifi"] is True
    lines = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert [line["action"]["args"] for line in lines[1:3]] == [{"index": index, "text": "Wi-Fi"},
                                                               {"index": index, "text": "Use Wi-Fi"}]
    for step in (1, 2, 3, 4):
        check = json.loads((result.run_dir / "steps" / f"{step:04d}" / "replay.json").read_text())
        assert check["ok"] and check["score"] >= 0.8
