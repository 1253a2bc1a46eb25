"""CodeAct mode end to end on the simulated phone: the model's code calls the tools in the sandbox;
code that tries to escape is refused or stopped with a reason the model reads, and the run goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.settings import Settings

SETTINGS_PKG = "com.android.settings"


def code(text: str) -> str:
    return f"```python\n{text}\n```"


WIFI = [code('open_app("Settings")'), code('click(3, "Wi-Fi")'),
        code('r = click(index=3, text="Use Wi-Fi")\nprint(r)'), code('complete(True, "Wi-Fi is on.")')]


async def run(tmp_path: Path, replies: list[Any], **codeact: Any) -> tuple[RunResult, SimDriver]:
    settings = Settings.model_validate({"mode": "codeact", "task": {"text": "Turn on Wi-Fi"},
                                        "model": {"script": "unused.yaml"}, "logs": {"dir": str(tmp_path)},
                                        "codeact": {"wall_seconds": 5, **codeact}})
    driver = SimDriver()
    result = await Session(settings, device=driver, model=ScriptedModel(Script(replies=replies))).run()
    return result, driver


def steps(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (result.run_dir / "steps.jsonl").read_text().splitlines()]


async def test_code_calls_the_tools_and_complete_finishes(tmp_path: Path) -> None:
    result, driver = await run(tmp_path, WIFI)
    assert (result.status, result.answer) == ("FINISH", "Wi-Fi is on.")
    assert driver.phone.state(SETTINGS_PKG)["wifi"] is True
    lines = steps(result)
    assert [s["agent"] for s in lines] == ["CodeActAgent"] * 4
    assert lines[0]["action"]["args"]["code"] == 'open_app("Settings")'
    assert "opened Settings" in lines[0]["result"]["summary"]
    assert "Output:" in lines[2]["result"]["summary"]  # what the code printed


@pytest.mark.parametrize(("escape", "why"), [
    ("import os\nos.system('touch /tmp/pwned')", "import"),
    ("open('/etc/passwd').read()", "open"),
    ("__import__('os')", "__import__"),
    ("().__class__.__bases__[0].__subclasses__()", "__class__"),
    ("while True:\n    pass", "wall-clock limit"),
])
async def test_escapes_are_refused_or_stopped_and_the_run_goes_on(tmp_path: Path, escape: str, why: str) -> None:
    result, driver = await run(tmp_path, [code(escape), *WIFI], wall_seconds=1)
    assert result.status == "FINISH" and driver.phone.state(SETTINGS_PKG)["wifi"] is True
    first = steps(result)[0]
    assert first["result"]["success"] is False
    assert why in first["result"]["summary"].lower() or why in first["result"]["summary"]
    prompt = json.loads((result.run_dir / "steps" / "0002" / "prompt.json").read_text(encoding="utf-8"))
    assert first["result"]["summary"][:60] in "\n".join(m["content"] for m in prompt)  # the model reads why
    assert not os.path.exists("/tmp/pwned")  # noqa: ASYNC240
