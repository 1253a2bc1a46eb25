"""The demo on the emulated phone through the real adb server, adbutils and uiautomator2, on the
realistic profile (pixel-14: uiautomator2 lists the status bar's controls first, so every number
shifts) and the plain one (kind): the scripted model reads the screen it is sent and names the
controls by the numbers this phone gave them, so Wi-Fi is really on at the end, in every mode. A
phone that does not end with the switch on never gets the script's FINISH. And the demo recorded on
the in-process phone replays on both profiles (``replay RUN_DIR --device``), but not on a Settings
app that lost its Wi-Fi row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_drivers import device_settings
from tests.unit.replay.helpers import record_demo, settings_app
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.replay import NoModel, ReplayPlan, load_trajectory
from ufo_mobile.settings import load_settings, settings_of_run
from ufo_mobile.shipped import CONFIG_DIR

pytestmark = pytest.mark.integration

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
EVERY_PHONE = pytest.mark.parametrize(("kind", "sim_device"), [
    ("adb", "pixel-14"), ("u2", "pixel-14"), ("adb", "kind"), ("u2", "kind")], indirect=["sim_device"])


async def run_demo(sim_device: Any, adb_server: Any, kind: str, tmp_path: Path, mode: str) -> RunResult:
    device = device_settings(sim_device, adb_server, kind).model_dump()
    settings = load_settings(DEMO, overrides={"logs": {"dir": str(tmp_path)}, "device": device, "mode": mode})
    return await Session(settings).run()


def clicked(result: RunResult) -> list[dict[str, Any]]:
    """The arguments of every click the run made, in order."""
    lines = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    return [line["action"]["args"] for line in lines if (line.get("action") or {}).get("name") == "click"]


@EVERY_PHONE
async def test_the_demo_turns_wifi_on_whatever_the_numbering(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    assert sim_device.phone.state("com.android.settings")["wifi"] is False
    result = await run_demo(sim_device, adb_server, kind, tmp_path, "direct")
    assert (result.status, result.answer, result.actions_failed) == ("FINISH", "Wi-Fi is on.", 0), result.reason
    assert sim_device.phone.state("com.android.settings")["wifi"] is True
    assert [args["text"] for args in clicked(result)] == ["Wi-Fi", "Use Wi-Fi"]


@pytest.mark.parametrize("mode", ["reasoning", "codeact"])
@pytest.mark.parametrize(("kind", "sim_device"), [("u2", "pixel-14")], indirect=["sim_device"])
async def test_every_mode_of_the_demo_turns_wifi_on_through_uiautomator2(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path, mode: str) -> None:
    result = await run_demo(sim_device, adb_server, kind, tmp_path, mode)
    assert (result.status, result.answer, result.actions_failed) == ("FINISH", "Wi-Fi is on.", 0), result.reason
    assert sim_device.phone.state("com.android.settings")["wifi"] is True


@pytest.mark.parametrize(("kind", "sim_device"), [("u2", "pixel-14")], indirect=["sim_device"])
async def test_a_phone_that_does_not_end_with_wifi_on_never_gets_the_scripted_finish(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    """Wi-Fi already on and its page already open: the script's taps turn it off, and its last
    reply, which expects the switch on, stops the run instead of claiming the result."""
    sim_device.phone.start_app("com.android.settings")
    first = await run_demo(sim_device, adb_server, kind, tmp_path / "first", "direct")
    assert (first.status, sim_device.phone.state("com.android.settings")["wifi"]) == ("FINISH", True)
    result = await run_demo(sim_device, adb_server, kind, tmp_path / "again", "direct")
    assert sim_device.phone.state("com.android.settings")["wifi"] is False
    assert result.status == "FAIL"
    assert "reply 4 of scripted:demo_wifi.yaml" in result.reason
    assert "'Use Wi-Fi' with check=on" in result.reason


# --- a run recorded on the in-process phone, replayed on the emulated ones ------------------------

async def replay_demo(sim_device: Any, adb_server: Any, kind: str, tmp_path: Path) -> RunResult:
    """The demo recorded on the in-process phone (the plain one), replayed with no model on
    ``sim_device`` (``replay RUN_DIR --device SERIAL``) with the replay's default threshold."""
    recorded = await record_demo(tmp_path / "recorded")
    trajectory = load_trajectory(recorded.run_dir)
    run = json.loads((recorded.run_dir / "run.json").read_text())
    device = device_settings(sim_device, adb_server, kind).model_dump()
    settings = settings_of_run(run, overrides={"logs": {"dir": str(tmp_path / "replays")}, "device": device})
    plan = ReplayPlan(trajectory, fallback="stop", source=f"run {trajectory.run_id}")
    return await Session(settings, model=NoModel(), replay=plan).run()


@EVERY_PHONE
async def test_a_run_recorded_in_process_replays_on_every_profile(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    """pixel-14's launcher shows two more apps than the in-process phone's, and uiautomator2 lists
    the status bar first: the screens still match and each click finds its control."""
    result = await replay_demo(sim_device, adb_server, kind, tmp_path)
    assert (result.status, result.answer, result.model_calls) == ("FINISH", "Wi-Fi is on.", 0), result.replay
    assert sim_device.phone.state("com.android.settings")["wifi"] is True
    assert [args["text"] for args in clicked(result)] == ["Wi-Fi", "Use Wi-Fi"]


@pytest.mark.parametrize(("kind", "sim_device"), [("adb", "pixel-14")], indirect=["sim_device"])
async def test_a_replay_on_a_genuinely_different_screen_still_stops(
        kind: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    """The emulated phone's Settings app has "Network & internet" where the Wi-Fi row was."""
    sim_device.phone.install_app(settings_app(tmp_path, "redesigned"))
    result = await replay_demo(sim_device, adb_server, kind, tmp_path)
    assert (result.status, result.model_calls) == ("FAIL", 0)
    assert result.reason.startswith("replay stopped at step 2 (recorded step 2): the control the action names "
                                    "is not on this screen: "), result.reason
    assert sim_device.phone.state("com.android.settings")["wifi"] is False
