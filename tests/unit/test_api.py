"""The Python API (ufo_mobile/api.py): ``ufo_mobile.run(goal)`` and ``run_async`` on the simulated
phone with the demo's scripted replies, the command line's settings and device choice, and an
``import ufo_mobile`` that loads no agent code."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import ufo_mobile
from ufo_mobile.api import settings_for
from ufo_mobile.core.device import choice
from ufo_mobile.errors import ConfigError
from ufo_mobile.shipped import TASKS_DIR

ROOT = Path(__file__).resolve().parents[2]
DEMO_SCRIPT = TASKS_DIR / "scripts" / "demo_wifi.yaml"
SCRIPTED = {"model": {"script": str(DEMO_SCRIPT)}}


def test_import_loads_no_agent_code() -> None:
    code = ("import sys, ufo_mobile; print(sorted(m for m in sys.modules if m.startswith('ufo_mobile.')));"
            "print(ufo_mobile.__version__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.splitlines()[0] == "['ufo_mobile.lazy']"  # the lazy exports' 30 lines, nothing else
    assert ufo_mobile.Session.__name__ == "Session" and "run" in dir(ufo_mobile)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ufo_mobile.nope  # type: ignore[attr-defined]


def test_run_a_goal(tmp_path: Path) -> None:
    result = ufo_mobile.run("Turn on Wi-Fi", provider="scripted", settings=SCRIPTED, log_dir=tmp_path, max_steps=8)
    assert result.ok and result.status == "FINISH" and result.actions_failed == 0
    assert result.run_dir.parent == tmp_path and "-turn-on-wi-fi-" in result.run_dir.name
    assert (result.run_dir / "report.html").is_file()


def test_run_takes_the_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "config.yaml"
    user.write_text(f"model: {{kind: scripted, script: {DEMO_SCRIPT}}}\nlogs: {{dir: {tmp_path / 'logs'}}}\n")
    monkeypatch.setenv("UFO_MOBILE_CONFIG", str(user))
    result = ufo_mobile.run("Turn on Wi-Fi", mode="direct")
    assert result.ok and result.run_dir.parent == tmp_path / "logs"
    run = json.loads((result.run_dir / "run.json").read_text())
    assert run["settings"]["device"]["kind"] == "sim"


def test_a_task_file_by_path(tmp_path: Path) -> None:
    result = ufo_mobile.run(Path("demo"), log_dir=tmp_path)
    assert result.ok and json.loads((result.run_dir / "run.json").read_text())["task"] == "Turn on Wi-Fi"


def test_run_async(tmp_path: Path) -> None:
    async def main() -> bool:
        result = await ufo_mobile.run_async("Turn on Wi-Fi", provider="scripted", settings=SCRIPTED,
                                            log_dir=tmp_path)
        return result.ok

    assert asyncio.run(main())


def test_run_inside_an_event_loop_points_at_run_async() -> None:
    async def main() -> None:
        ufo_mobile.run("Turn on Wi-Fi")

    with pytest.raises(RuntimeError, match=r"await ufo_mobile.run_async"):
        asyncio.run(main())


def test_errors() -> None:
    with pytest.raises(ConfigError, match="a goal needs a model: name one in your user config"):
        ufo_mobile.run("Turn on Wi-Fi")
    with pytest.raises(ConfigError, match="the goal is empty"):
        ufo_mobile.run("  ")
    with pytest.raises(ConfigError, match="driver is for real phones"):
        ufo_mobile.run("Turn on Wi-Fi", device="sim", driver="u2")


def test_the_settings_as_the_command_line_makes_them() -> None:
    made = settings_for("Turn on Wi-Fi", provider="openai", model="gpt-4.1-mini", device="R58M41", mode="reasoning")
    assert (made.model.kind, made.model.name, made.mode) == ("openai", "gpt-4.1-mini", "reasoning")
    assert (made.device.kind, made.device.serial) == ("adb", "R58M41")
    assert settings_for(Path("demo"), device="R58M41").device.kind == "adb"  # as run demo --device R58M41
    assert settings_for(Path("demo"), device="R58M41", driver="u2").device.kind == "u2"


def test_a_lone_phone_is_a_warning_never_a_question(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("UFO_MOBILE_PHONE_PROBE")
    monkeypatch.setattr(choice, "adb_phones", lambda host, port: [choice.Phone("R58M41", "Galaxy S21")])
    with caplog.at_level(logging.WARNING, logger="ufo_mobile"):
        made = settings_for("Turn on Wi-Fi", provider="openai")
    assert made.device.kind == "sim"
    assert "phone R58M41 (Galaxy S21) is connected, but the simulated phone is used" in caplog.text
    made = settings_for("Turn on Wi-Fi", provider="openai", settings={"device": {"choose": "phone"}})
    assert (made.device.kind, made.device.serial) == ("adb", "R58M41")
