"""``perception.source: dump``: no screenshot is ever taken; the model reads the screen list alone
(a text-only model, or screens that must not be captured), the run records every step without
pictures, the report says why there are none, and a format that points on the screenshot is refused
with a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faults.conftest import one_line_error
from tests.unit.test_cli_runs import DEMO, run_cli
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.memory.messages import ImagePart
from ufo_mobile.core.session import Session
from ufo_mobile.settings import Settings
from ufo_mobile.shipped import CONFIG_DIR

DEMO_SCRIPT = CONFIG_DIR / "tasks" / "scripts" / "demo_wifi.yaml"


class Counting(SimDriver):
    """The simulated phone, counting the screenshots asked of it."""

    shots = 0

    async def screenshot(self) -> bytes:
        self.shots += 1
        return await super().screenshot()


def settings_for(tmp_path: Path, script: Path = DEMO_SCRIPT, **more: object) -> Settings:
    return Settings.model_validate({"task": {"text": "Turn on Wi-Fi"}, "perception": {"source": "dump"},
                                    "model": {"script": str(script)}, "logs": {"dir": str(tmp_path / "logs")},
                                    **more})


@pytest.mark.parametrize("mode", ["direct", "reasoning", "codeact"])
async def test_the_demo_runs_from_the_dump_alone_without_a_screenshot(mode: str, tmp_path: Path) -> None:
    driver = Counting()
    model = ScriptedModel.from_file(DEMO_SCRIPT)
    model.script = model.script.for_mode(mode)
    result = await Session(settings_for(tmp_path, mode=mode), model=model, device=driver).run()
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on."), result.reason
    assert driver.shots == 0
    assert driver.phone.state("com.android.settings")["wifi"] is True
    assert model.calls and not any(isinstance(p, ImagePart) for c in model.calls for m in c
                                   if isinstance(m.content, list) for p in m.content)
    system = model.calls[0][0].text()  # the model is told no picture comes (the manager's too, in reasoning)
    assert "No screenshot is sent in this run" in system and "The screenshot, like" not in system
    steps = [json.loads(line) for line in (result.run_dir / "steps.jsonl").read_text().splitlines()]
    assert all(s["controls"] > 0 and "screenshot" not in s["files"] for s in steps)
    for folder in (result.run_dir / "steps").iterdir():
        assert not list(folder.glob("*.png")) and not list(folder.glob("*.jpg"))
        assert (folder / "screen.txt").read_text().startswith("App ")
    report = (result.run_dir / "report.html").read_text()
    assert "this run read the UI dump alone (perception.source: dump)" in report


async def test_a_failed_run_keeps_no_final_screenshot(tmp_path: Path) -> None:
    script = tmp_path / "fail.yaml"
    script.write_text(json.dumps({"replies": [{"status": "FAIL", "thought": "no", "result": "cannot"}]}))
    driver = Counting()
    result = await Session(settings_for(tmp_path, script), device=driver).run()
    assert (result.status, result.reason) == ("FAIL", "cannot")
    assert driver.shots == 0 and not (result.run_dir / "final.png").exists()


@pytest.mark.parametrize("fmt", ["ui-tars", "qwen-vl", "qwen3-vl", "autoglm"])
def test_a_format_that_points_on_the_screenshot_is_refused(fmt: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "dump.yaml"
    config.write_text("perception: {source: dump}\n")
    code, _ = run_cli("run", str(DEMO), "--format", fmt, "--config", str(config), "--log-dir", str(tmp_path))
    one_line_error(code, capsys.readouterr().err,
                   f"model.format {fmt} points on the screenshot: perception.source dump takes none")
    assert not any(tmp_path.glob("*/run.json"))
