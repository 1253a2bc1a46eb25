"""A model per role: each role named in ``models`` asks its own model (written as changes to
``model``), the others ask ``model``; usage is kept per role in the result, run.json and the summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from ufo_mobile.cli import main
from ufo_mobile.errors import ConfigError
from ufo_mobile.settings import Settings, load_settings

PLANNER = ["<thought>Settings first.</thought>\n<plan>\n1. Open the Settings app\n</plan>",
           '<thought>Settings is open.</thought>\n<request_accomplished success="true">Settings is open.'
           "</request_accomplished>"]
EXECUTOR = [{"status": "CONTINUE", "thought": "open it",
             "actions": [{"name": "open_app", "args": {"text": "Settings"}}]}]


def task(tmp_path: Path, models: dict[str, object]) -> Path:
    (tmp_path / "planner.yaml").write_text(yaml.safe_dump({"replies": PLANNER}))
    (tmp_path / "executor.yaml").write_text(yaml.safe_dump({"replies": EXECUTOR}))
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({"task": "Open Settings", "mode": "reasoning",
                                    "model": {"kind": "scripted", "script": "planner.yaml", "name": "planner-model"},
                                    "models": models}))
    return path


def test_a_role_is_written_as_changes_to_model(tmp_path: Path) -> None:
    settings = load_settings(task(tmp_path, {"executor": {"script": "executor.yaml", "name": "cheap-model"}}), env={})
    executor = settings.model_for("executor")
    assert (executor.name, executor.kind, executor.script) == ("cheap-model", "scripted", tmp_path / "executor.yaml")
    assert settings.model_for("manager") is settings.model and settings.model_for("agent") is settings.model
    with pytest.raises(ConfigError, match=r"models\.planner"):
        load_settings(task(tmp_path, {"planner": {"name": "x"}}), env={})
    with pytest.raises(ConfigError, match=r"models\.executor\.temperature"):
        load_settings(task(tmp_path, {"executor": {"temperature": 9}}), env={})


def test_each_role_asks_its_own_model_and_its_usage_is_kept_apart(tmp_path: Path) -> None:
    out = io.StringIO()
    path = task(tmp_path, {"executor": {"script": "executor.yaml", "name": "cheap-model"}})
    assert main(["run", str(path), "--log-dir", str(tmp_path / "logs")], out=out) == 0
    run_dir = next((tmp_path / "logs").iterdir())
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "FINISH"
    assert {role: (u["model"], u["calls"]) for role, u in run["usage_by_role"].items()} == {
        "manager": ("planner-model", 2), "executor": ("cheap-model", 1)}
    steps = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    assert [(s["agent"], [c["model"] for c in s["model_calls"]]) for s in steps] == [
        ("Manager", ["scripted:planner.yaml"]), ("Executor", ["scripted:executor.yaml"]),
        ("Manager", ["scripted:planner.yaml"])]
    printed = out.getvalue()
    assert "manager (planner-model): 2 calls" in printed and "executor (cheap-model): 1 call" in printed


def test_settings_built_in_code_take_a_role_as_changes_too() -> None:
    settings = Settings.model_validate({"task": {"text": "t"}, "model": {"kind": "openai", "name": "big"},
                                        "models": {"executor": {"name": "small"}}})
    assert (settings.model_for("executor").name, settings.model_for("executor").kind) == ("small", "openai")


def test_the_report_shows_each_roles_share(tmp_path: Path) -> None:
    path = task(tmp_path, {"executor": {"script": "executor.yaml", "name": "cheap-model"}})
    assert main(["run", str(path), "--log-dir", str(tmp_path / "logs")], out=io.StringIO()) == 0
    page = next((tmp_path / "logs").iterdir()).joinpath("report.html").read_text()
    assert "By role" in page and "executor (cheap-model): 1 calls" in page and "manager (planner-model)" in page
