"""``run "Turn on Wi-Fi"``: a goal from the command line (or ``run -`` from standard input) with the
model of the user config; and every command that runs tasks reads the user config (run, eval, batch,
serve, mcp)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ufo_mobile.cli import build_parser, main
from ufo_mobile.cli.goal import task_or_goal
from ufo_mobile.errors import ConfigError
from ufo_mobile.shipped import TASKS_DIR

DEMO_SCRIPT = TASKS_DIR / "scripts" / "demo_wifi.yaml"


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user config naming the offline scripted model that turns on Wi-Fi (the demo's replies)."""
    path = tmp_path / "config.yaml"
    path.write_text(f"model: {{kind: scripted, script: {DEMO_SCRIPT}}}\n")
    monkeypatch.setenv("UFO_MOBILE_CONFIG", str(path))
    return path


def test_what_task_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my task").write_text("task: t\n")
    assert task_or_goal("my task") == (Path("my task"), None)  # an existing file, spaces or not
    assert task_or_goal("demo") == (TASKS_DIR / "demo.yaml", None)
    assert task_or_goal("missing.yaml") == (Path("missing.yaml"), None)  # a path: read, and not found
    assert task_or_goal("my tasks/wifi.yml") == (Path("my tasks/wifi.yml"), None)
    assert task_or_goal("tasks/wifi") == (Path("tasks/wifi"), None)
    assert task_or_goal("Share 1/2 of the photos") == (None, "Share 1/2 of the photos")
    assert task_or_goal("Turn on Wi-Fi") == (None, "Turn on Wi-Fi")
    assert task_or_goal("  Open   the clock\n") == (None, "Open the clock")
    with pytest.raises(ConfigError, match="no shipped task of that name"):
        task_or_goal("wifi")  # one word is a task's name, never a goal


def test_a_goal_runs_with_the_user_configs_model(user_config: Path, tmp_path: Path) -> None:
    code, out = run_cli("run", "Turn on Wi-Fi", "--log-dir", str(tmp_path / "logs"))
    assert code == 0, out
    (run_dir,) = (tmp_path / "logs").iterdir()
    assert "-turn-on-wi-fi-" in run_dir.name
    run = json.loads((run_dir / "run.json").read_text())
    assert run["task"] == "Turn on Wi-Fi" and run["settings"]["task"]["name"] == "turn-on-wi-fi"
    assert run["settings"]["device"]["kind"] == "sim"
    assert "FINISH" in out


def test_a_goal_from_standard_input(user_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("Turn on\nWi-Fi\n"))
    code, out = run_cli("run", "-", "--log-dir", str(tmp_path / "logs"), "--quiet")
    assert code == 0, out
    (run_dir,) = (tmp_path / "logs").iterdir()
    assert json.loads((run_dir / "run.json").read_text())["task"] == "Turn on Wi-Fi"


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (["run", "Turn on Wi-Fi"], "", "error: model: a goal needs a model: name one in your user config"),
    (["run", "-"], "  \n", "error: task: the goal on standard input is empty"),
    (["run", "missing.yaml"], "", "missing.yaml: cannot read"),
    (["run"], "", "error: task: give a goal (run \"Turn on Wi-Fi\"), a task file, or --resume RUN_DIR"),
])
def test_one_line_errors(args: list[str], stdin: str, message: str, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert run_cli(*args)[0] == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "logs").exists()


def test_options_over_the_user_config(user_config: Path, tmp_path: Path) -> None:
    user_config.write_text(f"model: {{kind: scripted, script: {DEMO_SCRIPT}}}\nlimits: {{max_steps: 1}}\n")
    code, _ = run_cli("run", "Turn on Wi-Fi", "--log-dir", str(tmp_path / "a"))
    assert code == 1  # one step is not enough
    code, _ = run_cli("run", "Turn on Wi-Fi", "--log-dir", str(tmp_path / "b"), "--max-steps", "8")
    assert code == 0


def test_eval_reads_the_user_config(user_config: Path) -> None:
    from ufo_mobile.cli.eval_cmd import eval_settings

    user_config.write_text("model: {kind: openai_compatible, name: from-user, base_url: http://127.0.0.1:9/v1}\n")
    _, settings = eval_settings(build_parser().parse_args(["eval", "suite"]))
    assert (settings.model.kind, settings.model.name) == ("openai_compatible", "from-user")


def test_batch_reads_the_user_config(user_config: Path, tmp_path: Path) -> None:
    user_config.write_text("agent: {history_steps: 2}\n")
    code, out = run_cli("batch", "demo", "--devices", "sim:1", "--log-dir", str(tmp_path), "--batch-id", "b",
                        "--quiet")
    assert code == 0, out
    (run_json,) = (tmp_path / "b").glob("*/run.json")
    assert json.loads(run_json.read_text())["settings"]["agent"]["history_steps"] == 2


def test_serve_reads_the_user_config(user_config: Path) -> None:
    from ufo_mobile.cli.serve_cmd import base_settings

    user_config.write_text("model: {kind: openai, name: from-user}\nlimits: {max_steps: 5}\n")
    settings = base_settings(build_parser().parse_args(["serve"]))
    assert (settings.model.name, settings.limits.max_steps) == ("from-user", 5)
    user_config.write_text("limits: {max_steps: 5}\n")
    with pytest.raises(ConfigError, match="serve needs a model"):
        base_settings(build_parser().parse_args(["serve"]))


def test_mcp_reads_the_user_config(user_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ufo_mobile.cli.mcp_cmd import device_settings

    user_config.write_text("device: {kind: u2, serial: R58M41}\n")
    device = device_settings(build_parser().parse_args(["mcp"]))
    assert (device.kind, device.serial) == ("u2", "R58M41")
    assert device_settings(build_parser().parse_args(["mcp", "--device", "sim"])).kind == "sim"
    user_config.write_text("mode: direct\n")  # names no phone: the only one on the adb server, as before
    device = device_settings(build_parser().parse_args(["mcp"]))
    assert (device.kind, device.serial) == ("adb", None)
    monkeypatch.setenv("UFO_MOBILE_DEVICE", "emulator-5554")
    assert device_settings(build_parser().parse_args(["mcp"])).serial == "emulator-5554"
