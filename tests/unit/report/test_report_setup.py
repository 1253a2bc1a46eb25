"""What a run ran with, in one line: the mode, the phone and its driver, the model; the same in the
report's header as on the terminal, never a key or a URL's path or credentials."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.unit.report.fake_runs import make_run
from ufo_mobile.report import render_report
from ufo_mobile.report.setup import describe_setup, setup_of_run

SCRIPTED = {"kind": "scripted", "script": "/somewhere/scripts/demo_wifi.yaml", "name": "gpt-4o"}


@pytest.mark.parametrize(("device", "said"), [
    ({"kind": "sim", "serial": None}, "simulated phone (in-process)"),
    ({"kind": "adb", "serial": "127.0.0.1:5555"}, "adb 127.0.0.1:5555"),
    ({"kind": "u2", "serial": "R58M41"}, "u2 R58M41"),
    ({"kind": "adb", "serial": None}, "adb (the only phone adb sees)"),
])
def test_the_phone_is_named_with_its_driver(device: dict[str, Any], said: str) -> None:
    assert describe_setup({"mode": "reasoning", "device": device, "model": SCRIPTED}) == \
        f"reasoning · {said} · scripted model demo_wifi.yaml"


@pytest.mark.parametrize(("model", "said"), [
    ({"kind": "openai", "name": "gpt-4o", "api_key": "**********"}, "openai gpt-4o"),
    ({"kind": "openai", "name": "gpt-4o", "base_url": "https://proxy.example:8443/v1"},
     "openai gpt-4o at proxy.example:8443"),
    ({"kind": "openai_compatible", "name": "llama3",
      "base_url": "http://user:sk-in-the-url@localhost:11434/v1?api_key=sk-in-the-query"},
     "openai_compatible llama3 at localhost:11434"),
    ({"kind": "openai_compatible", "name": "qwen", "base_url": "http://[::1]:8000/v1"},
     "openai_compatible qwen at [::1]:8000"),
    ({"kind": "azure", "name": "gpt-4o", "azure_deployment": "prod-4o",
      "azure_endpoint": "https://res.openai.azure.com/"}, "azure prod-4o at res.openai.azure.com"),
    ({"kind": "azure", "name": "gpt-4o"}, "azure gpt-4o"),
])
def test_the_model_is_named_by_kind_name_and_host_only(model: dict[str, Any], said: str) -> None:
    line = describe_setup({"mode": "direct", "device": {"kind": "sim"}, "model": model})
    assert line == f"direct · simulated phone (in-process) · {said}"
    assert "sk-" not in line and "*" not in line and "/v1" not in line


def test_a_model_per_role_is_named_after_the_main_one() -> None:
    manager = {**SCRIPTED, "kind": "openai", "name": "gpt-4.1"}
    line = describe_setup({"mode": "reasoning", "device": {"kind": "sim"}, "model": SCRIPTED,
                           "models": {"manager": manager, "executor": SCRIPTED}})
    assert line == "reasoning · simulated phone (in-process) · scripted model demo_wifi.yaml · manager: openai gpt-4.1"


def test_a_replay_that_could_not_hand_over_asked_no_model() -> None:
    settings = {"mode": "direct", "device": {"kind": "sim"}, "model": SCRIPTED}
    assert setup_of_run({"settings": settings, "replay": {"fallback": "stop"}}) == \
        "direct · simulated phone (in-process) · no model (replay only)"
    assert setup_of_run({"settings": settings, "replay": {"fallback": "agent"}}) == \
        "direct · simulated phone (in-process) · scripted model demo_wifi.yaml"
    assert setup_of_run({"status": "RUNNING"}) is None


def _ran_with(page: str) -> str | None:
    found = re.search(r"<th>Ran with</th><td>([^<]*)</td>", page)
    return found.group(1) if found else None


def test_the_reports_header_says_what_the_run_ran_with(tmp_path: Path) -> None:
    settings = {"mode": "codeact", "device": {"kind": "adb", "serial": "emulator-5554"},
                "model": {"kind": "openai_compatible", "name": "qwen", "base_url": "http://gpu.lan:8000/v1",
                          "api_key": "[REDACTED]"}}
    page = render_report(make_run(tmp_path, name="run", settings=settings))
    assert _ran_with(page) == "codeact · adb emulator-5554 · openai_compatible qwen at gpu.lan:8000"
    assert _ran_with(render_report(make_run(tmp_path, name="older", settings=None))) is None  # nothing to say
