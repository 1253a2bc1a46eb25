"""A user who installs the wheel gets what a clone gets: the wheel is built from this checkout, installed
into a new virtual environment, and run from a directory far from the checkout: the demo by name, the
shipped suite, and the defaults file to copy.

The new environment gets the wheel itself with pip, without its dependencies: those are the ones
this test runs with, reached through a path file (no download). The checkout is never on its path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from ufo_mobile import shipped

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 300.0  # seconds: a hang guard for each command


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=LIMIT, env=env, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the new environment's python, a directory to run in, far from the checkout)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"  # a copy: building writes build/ and *.egg-info next to the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv*", ".git", "logs", "build", "dist", "*.egg-info",
                                                                "__pycache__", ".*_cache", ".tox"))
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(base / "dist"),
                str(source), cwd=base)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (base / "dist").glob("ufo_mobile-*.whl")
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                       cwd=base).stdout.strip())
    done = run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel),
               cwd=base)
    assert done.returncode == 0, done.stderr[-3000:]
    # the dependencies: this environment's site-packages, after the new one's own (a plain path line:
    # the .pth files there, such as the checkout's editable install, are not run)
    (purelib / "zz-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return python, elsewhere


def test_the_wheel_carries_the_shipped_files_and_the_checkout_is_not_used(installed: tuple[Path, Path]) -> None:
    python, cwd = installed
    where = run(str(python), "-c", "import ufo_mobile.shipped as s; print(s.CONFIG_DIR); "
                "print(len(list(s.SUITE_DIR.glob('*.yaml'))))", cwd=cwd)
    config_dir, suite_count = where.stdout.split()
    assert not Path(config_dir).is_relative_to(ROOT) and Path(config_dir).is_relative_to(python.parents[1])
    assert int(suite_count) == len(list(shipped.SUITE_DIR.glob("*.yaml")))


def test_the_demo_runs_by_name_from_another_directory(installed: tuple[Path, Path]) -> None:
    python, cwd = installed
    done = run(str(python), "-m", "ufo_mobile", "run", "demo", "--log-dir", "logs", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FINISH after 4 steps" in done.stdout
    (run_dir,) = (cwd / "logs").iterdir()
    assert (run_dir / "report.html").is_file()


def test_eval_finds_the_shipped_suite(installed: tuple[Path, Path]) -> None:
    python, cwd = installed
    done = run(str(python), "-m", "ufo_mobile", "eval", "suite", "--model", "oracle", "--tasks", "clock-*",
               "--log-dir", "eval-logs", "--quiet", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "success rate: 4/4 runs" in done.stdout


def test_the_defaults_file_can_be_printed_and_copied(installed: tuple[Path, Path]) -> None:
    python, cwd = installed
    printed = run(str(python), "-m", "ufo_mobile", "config", "--print", cwd=cwd)
    assert printed.returncode == 0 and printed.stdout == shipped.DEFAULT_CONFIG.read_text(encoding="utf-8")
    copied = run(str(python), "-m", "ufo_mobile", "config", "--copy", "mine", cwd=cwd)
    assert copied.returncode == 0, copied.stderr
    assert (cwd / "mine" / "tasks" / "demo.yaml").is_file() and (cwd / "mine" / "default.yaml").is_file()
