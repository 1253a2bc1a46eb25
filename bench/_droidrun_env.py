"""The throwaway DroidRun environment of the perception benchmark: a venv in /tmp with DroidRun's
formatter installed (never a project dependency), and the subprocess calls into it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORKER = Path(__file__).resolve().with_name("_droidrun_worker.py")
DEFAULT_VENV = Path("/tmp/ufo_mobile_bench_droidrun")
MOBILERUN_VERSION = "0.7.4"
# What importing DroidRun's filter, formatter and uiautomator converter needs, found by trying;
# installed with --no-deps (mobilerun's own requirements pull in about 1.2 GB).
DROIDRUN_PACKAGES = (
    f"mobilerun=={MOBILERUN_VERSION}", "mobilerun-core-local", "pillow", "async_adbutils", "apkutils2",
    "xmltodict", "cigam", "httpx", "idna", "retry", "requests", "urllib3", "certifi", "rich",
)


class BenchError(Exception):
    """Something the benchmark needs failed; the message says what."""


def _clean_env() -> dict[str, str]:
    """Our environment minus anything that would leak our packages into the DroidRun venv."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def _run(command: list[str], what: str, timeout: float, stdin: str | None = None) -> str:
    """Run ``command``; its stdout, or ``BenchError`` saying why it failed."""
    try:
        proc = subprocess.run(command, input=stdin, capture_output=True, text=True, encoding="utf-8",
                              timeout=timeout, env=_clean_env(), check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BenchError(f"{what} failed: {exc}") from exc
    if proc.returncode != 0:
        tail = " | ".join(line for line in proc.stderr.strip().splitlines()[-3:]) or "no error output"
        raise BenchError(f"{what} failed (exit {proc.returncode}): {tail}")
    return proc.stdout


def _probe(python: Path) -> dict[str, str]:
    """The DroidRun versions the worker can import from ``python`` (raises ``BenchError`` if none)."""
    if not python.is_file():
        raise BenchError(f"no interpreter at {python}")
    out = _run([str(python), "-W", "ignore", str(WORKER), "--check"], "importing DroidRun", 120)
    return dict(_json_lines(out, "the DroidRun import check")[-1])


def _json_lines(out: str, what: str) -> list[dict[str, Any]]:
    try:
        lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise BenchError(f"{what} printed something other than JSON lines: {exc}") from exc
    if not lines:
        raise BenchError(f"{what} printed nothing")
    return lines


def ensure_droidrun(venv: Path) -> tuple[Path, str]:
    """The DroidRun venv's interpreter, building or repairing the venv when needed; and a note."""
    python = venv / "bin" / "python"
    try:
        versions = _probe(python)
        if versions.get("mobilerun") == MOBILERUN_VERSION:
            return python, f"reused {venv}: " + _versions(versions)
    except BenchError:
        pass
    start = time.perf_counter()
    print(f"building the DroidRun venv at {venv} (pip install --no-deps) ...", file=sys.stderr, flush=True)
    if not python.is_file():
        _run([sys.executable, "-m", "venv", str(venv)], f"creating the venv {venv}", 300)
    _run([str(python), "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check",
          *DROIDRUN_PACKAGES], "pip install of DroidRun (no network?)", 900)
    versions = _probe(python)
    return python, f"built {venv} in {time.perf_counter() - start:.0f} s: " + _versions(versions)


def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {number}" for name, number in sorted(versions.items()))
