"""Checks that the project's documents and defaults say what the code does."""

from __future__ import annotations

import configparser
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import ufo_mobile
from ufo_mobile.settings import Settings, load_settings
from ufo_mobile.shipped import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block is not None, "the README must open with a bash block of set-up commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_a_venv_the_demo_and_the_tests_and_ci_runs_both_commands() -> None:
    venv, demo, tests = readme_commands()[:3]
    assert venv.startswith("python3 -m venv .venv && . .venv/bin/activate")
    assert demo.startswith("pip install -c constraints.txt -e . &&") and demo.endswith("python -m ufo_mobile run demo")
    assert tests.startswith("pip install -c constraints.txt -e '.[test]' &&") and tests.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert demo in ci and tests in ci


def _requirements() -> list[Requirement]:
    """Every requirement setup.cfg names (install_requires and the extras), the project's own extras
    left out."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options"]["install_requires"].splitlines()
    for extra in config["options.extras_require"].values():
        lines += extra.splitlines()
    found = [Requirement(line) for line in lines if line.strip()]
    return [r for r in found if canonicalize_name(r.name) != "ufo-mobile"]


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = Version(match.group(2))
    return pins


def test_constraints_pin_every_dependency_within_its_range() -> None:
    pins = _pins()
    for requirement in _requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is in setup.cfg but not pinned in constraints.txt"
        assert pins[name] in requirement.specifier, f"constraints.txt pins {name} {pins[name]} outside {requirement}"


def test_the_base_install_has_no_test_or_fleet_library_and_no_unused_one() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    base = {canonicalize_name(Requirement(line).name)
            for line in config["options"]["install_requires"].splitlines() if line.strip()}
    assert not base & {"ray", "pytest", "mcp", "websockets", "manimgx-fonts", "manimgx-fonts-cjk"}
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "ufo_mobile").rglob("*.py"))
    modules = {"pillow": "PIL", "pyyaml": "yaml", "fonttools": "fontTools", "uiautomator2": "uiautomator2"}
    for name in base:
        module = modules.get(name, name.replace("-", "_"))
        assert re.search(rf"^\s*(import|from) {module}\b", sources, re.M), f"{name} is installed but never imported"


def test_the_drift_line_names_what_moved() -> None:
    spec = importlib.util.spec_from_file_location("drift", ROOT / ".ci" / "drift.py")
    assert spec is not None and spec.loader is not None
    drift = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drift)
    assert drift.drift_line({"pyyaml": "6.0.4", "rich": "15.0.0"}, {"pyyaml": "6.0.4", "rich": "15.0.0", "pip": "26"}) \
        == "drift: none (the newest versions the ranges allow are the pinned ones)"
    assert drift.drift_line({"pyyaml": "6.0.4", "rich": "15.0.0"}, {"pyyaml": "6.0.5", "rich": "15.0.0", "x": "1"}) \
        == "drift: 2 against constraints.txt: pyyaml 6.0.4 -> 6.0.5, x 1 (new)"
    assert set(drift.pins(ROOT / "constraints.txt")) == set(_pins())


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
