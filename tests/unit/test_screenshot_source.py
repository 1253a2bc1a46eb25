"""``perception.source: screenshot``: no UI dump is read; the model sees the screenshot and acts by
coordinates, in every format (the json format's coordinate actions, UI-TARS's, Qwen-VL's and AutoGLM's
points),
and the run records every step as usual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.session import Session
from ufo_mobile.settings import Settings
from ufo_mobile.shipped import CONFIG_DIR

DEMO_SCRIPT = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"
# the demo in the json format, by screen coordinates: there is no control list to name a number from
BY_COORDINATES = {"replies": [
    {"status": "CONTINUE", "thought": "open Settings", "actions": [{"name": "open_app", "args": {"text": "Settings"}}]},
    {"status": "CONTINUE", "thought": "the Wi-Fi row", "actions": [{"name": "click_at", "args": {"x": 540, "y": 332}}]},
    {"status": "CONTINUE", "thought": "the switch", "actions": [{"name": "click_at", "args": {"x": 540, "y": 352}}]},
    {"status": "FINISH", "thought": "done", "result": "Wi-Fi is on."},
]}


class Counting(SimDriver):
    """The simulated phone, counting the UI dumps asked of it."""

    dumps = 0

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        return await super().get_ui_tree()


@pytest.mark.parametrize("fmt", ["json", "ui-tars", "qwen-vl", "qwen3-vl", "autoglm"])
async def test_each_format_runs_the_demo_from_the_screenshot_alone(fmt: str, tmp_path: Path) -> None:
    script = DEMO_SCRIPT
    if fmt == "json":
        script = tmp_path / "by_coordinates.yaml"
        script.write_text(json.dumps(BY_COORDINATES))
    settings = Settings.model_validate({"task": {"text": "Turn on Wi-Fi"}, "perception": {"source": "screenshot"},
                                        "model": {"script": str(script), "format": fmt},
                                        "logs": {"dir": str(tmp_path / "logs")}})
    driver = Counting()
    result = await Session(settings, device=driver).run()
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on."), result.reason
    assert driver.dumps == 0
    assert driver.phone.state("com.android.settings")["wifi"] is True
    steps = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert [s["action"]["name"] for s in steps[1:3]] == ["click_at", "click_at"]
    assert all(s["dump_attempts"] == 0 and s["controls"] == 0 for s in steps)
    for step in ("0002", "0003"):  # each step's record, the tapped point drawn on its screenshot
        assert (result.run_dir / "steps" / step / "annotated.jpg").is_file()
    if fmt == "json":  # the model is told why there is no list, and how to act
        prompt = (result.run_dir / "steps" / "0002" / "prompt.json").read_text()
        assert "perception.source: screenshot" in prompt and "click_at" in prompt
