"""Checks that the project's documents and defaults say what the code does."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import ufo_mobile
from ufo_mobile.settings import Settings, load_settings
from ufo_mobile.shipped import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block is not None, "the README must open with a bash block of set-up commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_demo_and_test_commands_and_ci_runs_the_test_command() -> None:
    demo, tests = readme_commands()[:2]
    assert "python -m ufo_mobile run demo" in demo
    assert "python -m pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci


def test_default_yaml_matches_the_built_in_defaults(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text("task: x\nmodel: {script: s.yaml}\n")
    built_in = load_settings(task, env={})
    with_file = load_settings(task, config_path=CONFIG_DIR / "default.yaml", env={})
    assert with_file == built_in


def test_public_api_is_exported_and_sorted() -> None:
    assert ufo_mobile.__all__ == sorted(ufo_mobile.__all__)
    for name in ufo_mobile.__all__:
        assert hasattr(ufo_mobile, name), name
    assert ufo_mobile.Settings is Settings


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "bench").glob("[a-z]*.py")))
def test_every_benchmark_starts(script: str) -> None:
    """A benchmark's imports still resolve (``--help`` stops before any measuring)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT / "bench")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
