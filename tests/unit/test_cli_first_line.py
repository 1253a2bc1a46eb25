"""The first line of ``run``, ``replay`` and ``report`` names the task, the mode, the phone and its
driver and the model (from the settings in force), and never a key."""

from __future__ import annotations

import io
import re
import socket
from pathlib import Path

import pytest

from ufo_mobile.cli import main
from ufo_mobile.shipped import CONFIG_DIR

DEMO = CONFIG_DIR / "tasks" / "demo.yaml"
DEMO_SETUP = "[direct · simulated phone (in-process) · scripted model demo_wifi.yaml]"
KEY = "sk-test-0123456789abcdefSECRET"


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def test_the_demos_first_line_names_task_mode_phone_and_model(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path))
    assert code == 0, out
    first = out.splitlines()[0]
    assert re.fullmatch(rf"run \S+: Turn on Wi-Fi  {re.escape(DEMO_SETUP)}", first), first
    (run_dir,) = tmp_path.iterdir()
    code, again = run_cli("report", str(run_dir))  # read back from run.json's settings
    assert code == 0 and again.splitlines()[0] == first
    assert f"<th>Ran with</th><td>{DEMO_SETUP[1:-1]}</td>" in (run_dir / "report.html").read_text(encoding="utf-8")


def test_the_line_follows_the_options_in_force(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path), "--mode", "reasoning")
    assert code == 0, out
    assert out.splitlines()[0].endswith("  [reasoning · simulated phone (in-process) · scripted model demo_wifi.yaml]")


def test_a_replay_says_it_asks_no_model(tmp_path: Path) -> None:
    code, out = run_cli("run", str(DEMO), "--log-dir", str(tmp_path / "runs"))
    assert code == 0, out
    (run_dir,) = (tmp_path / "runs").iterdir()
    code, out = run_cli("replay", str(run_dir), "--log-dir", str(tmp_path / "replays"))
    assert code == 0, out
    assert re.fullmatch(rf"run \S+: replay of {run_dir.name}: Turn on Wi-Fi  "
                        r"\[direct · simulated phone \(in-process\) · no model \(replay only\)\]",
                        out.splitlines()[0]), out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_api_key_never_appears(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = _closed_port()  # nothing listens there: the first model call fails at once
    task = tmp_path / "t.yaml"
    task.write_text(f"task: Turn on Wi-Fi\nmodel: {{kind: openai, name: gpt-4o, base_url: 'http://127.0.0.1:{port}/v1',"
                    " retry: {max_retries: 0}}\n", encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code, out = run_cli("run", str(task), "--log-dir", str(tmp_path / "logs"), "--max-steps", "1")
    assert code == 1, out
    setup = f"[direct · simulated phone (in-process) · openai gpt-4o at 127.0.0.1:{port}]"
    assert out.splitlines()[0].endswith(f"  {setup}"), out
    assert KEY not in out and KEY[:12] not in out
