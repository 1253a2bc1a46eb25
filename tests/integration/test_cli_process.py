"""The command line as a separate process: what a shell user sees (signals are in tests/faults)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bad_task_file_via_subprocess_has_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: x\nmodel: {script: s.yaml}\nlimits:\n  max_stepz: 3\n")
    proc = subprocess.run([sys.executable, "-m", "ufo_mobile", "run", str(bad)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {bad}:4: limits.max_stepz: unknown key"


def test_help_lists_the_run_options() -> None:
    proc = subprocess.run([sys.executable, "-m", "ufo_mobile", "run", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    for option in ("--device", "--max-steps", "--log-dir", "--config"):
        assert option in proc.stdout
