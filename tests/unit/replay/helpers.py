"""Helpers for the replay tests: recorded demo runs, phones whose Settings app looks different, and a
model that counts the calls it should never get."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ufo_mobile.sim as sim_package
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.llm.base import Completion
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.errors import LLMError
from ufo_mobile.settings import Settings, load_settings
from ufo_mobile.shipped import CONFIG_DIR
from ufo_mobile.sim.phone.simphone import SimPhone

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
APPS = Path(sim_package.__file__).resolve().parent / "apps"

WIFI_ROW = """          - class: android.widget.LinearLayout
            padding: [48, 36]
            on_tap: {goto: wifi}
            children:
              - {id: title, text: Wi-Fi, style: title}
              - {id: summary, text: "{wifi?On:Off}", style: secondary}
"""
AIRPLANE_ROW_END = """              - {class: android.widget.Switch, id: switch_widget, desc: Airplane mode,
                 bind: airplane_mode, height: 96, clickable: false, focusable: false}
"""
NETWORK_ROW = """          - class: android.widget.LinearLayout
            padding: [48, 36]
            on_tap: {goto: wifi}
            children:
              - {id: title, text: Network & internet, style: title}
              - {id: summary, text: "Mobile, Wi-Fi, hotspot", style: secondary}
"""


def settings_app(folder: Path, variant: str) -> Path:
    """A Settings app file that replaces the built-in one: ``reordered`` (Wi-Fi is the third row)
    or ``redesigned`` (the Wi-Fi row became "Network & internet")."""
    text = (APPS / "settings.yaml").read_text(encoding="utf-8")
    assert WIFI_ROW in text and AIRPLANE_ROW_END in text, "the built-in Settings app changed: update the test"
    if variant == "reordered":
        text = text.replace(WIFI_ROW, "", 1).replace(AIRPLANE_ROW_END, AIRPLANE_ROW_END + WIFI_ROW, 1)
    else:
        text = text.replace(WIFI_ROW, NETWORK_ROW, 1)
    path = folder / f"settings-{variant}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def phone_with(app: Path | None = None, start: str | None = None) -> SimDriver:
    phone = SimPhone()
    if app is not None:
        phone.install_app(app)
    if start is not None:
        phone.start_app(start)
    return SimDriver(phone)


def wifi_on(driver: SimDriver) -> bool:
    return bool(driver.phone.state("com.android.settings")["wifi"])


class NoCalls:
    """A model that must not be asked: counts the calls it gets, and fails them."""

    name = "no-calls"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, messages: Sequence[ChatMessage], *,
                       schema: dict[str, Any] | None = None) -> Completion:
        self.calls += 1
        raise LLMError("a replay asked the model")


def scripted(*replies: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(Script(replies=list(replies)))


def click(index: int, text: str) -> dict[str, Any]:
    action = {"name": "click", "args": {"index": index, "text": text}}
    return {"status": "CONTINUE", "thought": "next", "action": action}


def finish(answer: str) -> dict[str, Any]:
    return {"status": "FINISH", "thought": "done", "result": answer}


def demo_settings(log_dir: Path, **overrides: Any) -> Settings:
    return load_settings(DEMO, overrides={"logs": {"dir": str(log_dir)}, **overrides}, env={})


async def record_demo(log_dir: Path, mode: str = "direct") -> RunResult:
    """The demo, run once on a fresh simulated phone with its scripted model: the run to replay."""
    result = await Session(demo_settings(log_dir, mode=mode), device=SimDriver()).run()
    assert result.status == "FINISH", result.reason
    return result


def steps_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "steps.jsonl").read_text(encoding="utf-8").splitlines()]


def run_json(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return data
