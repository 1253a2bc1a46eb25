"""Start-up stays quick: ``python -m ufo_mobile --help`` (and a command's ``--help``) builds its parser
without importing the runtime. The check is on what gets imported (``sys.modules`` of a fresh
interpreter), not on time; bench/startup.py measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARK = "--- modules ---"
# what --help must not import: the agent core, the simulated phone's screens, the fleet, the evaluation,
# the report, images (numpy, Pillow, OpenCV), the terminal UI (rich), YAML and the event loop
HEAVY = ("ufo_mobile.core", "ufo_mobile.fleet", "ufo_mobile.eval", "ufo_mobile.report", "ufo_mobile.replay",
         "ufo_mobile.sim.phone", "numpy", "PIL", "cv2", "rich", "yaml", "structlog", "asyncio")
PROBE = f"""
import json, runpy, sys
sys.argv = ["ufo_mobile", *json.loads(sys.argv[1])]
try:
    runpy.run_module("ufo_mobile", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print({MARK!r})
print(json.dumps(sorted(sys.modules)))
"""


def modules_after(args: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after ``python -m ufo_mobile ARGS``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return set(json.loads(done.stdout.split(MARK, 1)[1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["batch", "--help"], ["eval", "--help"],
                                  ["mcp", "--help"], ["config", "--help"], ["--version"]])
def test_help_imports_no_runtime(args: list[str]) -> None:
    modules = modules_after(args)
    assert "ufo_mobile.cli" in modules  # the parser was built
    assert heavy(modules) == []


def test_the_probe_sees_a_command_that_runs(tmp_path: Path) -> None:
    """The same probe after a command that does its work (``report`` on a directory that holds no run):
    the runtime is there, so the check above means something."""
    assert "ufo_mobile.core" in heavy(modules_after(["report", str(tmp_path)]))


def test_settings_names_are_what_they_name_once_every_module_is_loaded() -> None:
    """``ufo_mobile.settings`` imports its names on first use: none is shadowed by the module of the same
    name (``merge``) however the modules were loaded before."""
    import importlib
    import types

    import ufo_mobile.settings as settings

    for module in ("agent", "device", "document", "loading", "merge", "model", "modes", "root", "run", "tools",
                   "user"):
        importlib.import_module(f"ufo_mobile.settings.{module}")
    shadowed = [name for name in settings.__all__ if isinstance(getattr(settings, name), types.ModuleType)]
    assert shadowed == []
