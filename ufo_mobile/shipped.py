"""What ships inside the package under ``ufo_mobile/config``: the defaults file every key is
documented in (``default.yaml``), the example tasks (``tasks/``: the demo and the real-model ones)
and the task suite (``suite/``). A wheel carries them, so a user who installed with pip has what a
clone has, from any directory.

The commands take a shipped task or suite by name where a path is expected: ``run demo``,
``batch demo demo``, ``eval suite``. A path that exists always wins over a name.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ufo_mobile.errors import ConfigError

CONFIG_DIR = Path(__file__).resolve().parent / "config"
DEFAULT_CONFIG = CONFIG_DIR / "default.yaml"
TASKS_DIR = CONFIG_DIR / "tasks"
SUITE_DIR = CONFIG_DIR / "suite"
SUITE_NAME = "suite"


def task_names() -> list[str]:
    """The shipped tasks' names (``demo``, ``openai``, ...), sorted."""
    return sorted(p.stem for p in TASKS_DIR.glob("*.yaml"))


def _is_name(arg: Path) -> bool:
    """A bare word (no folder, no suffix) that is not a file or folder where the command runs."""
    return len(arg.parts) == 1 and not arg.suffix and not arg.exists()


def task_path(arg: Path, key: str = "task") -> Path:
    """``arg`` itself, or the shipped task it names (``demo``).

    Raises:
        ConfigError: a bare name that no shipped task has, naming ``key`` and the shipped names.
    """
    if not _is_name(arg):
        return arg
    path = TASKS_DIR / f"{arg}.yaml"
    if path.is_file():
        return path
    raise ConfigError(f"no such task file, and no shipped task of that name (shipped: {', '.join(task_names())})",
                      key=f"{key} {arg}")


def suite_path(arg: Path, key: str = "suite") -> Path:
    """``arg`` itself, the shipped suite (``suite``) or a shipped task named by ``arg``.

    Raises:
        ConfigError: a bare name that names nothing shipped.
    """
    if _is_name(arg) and str(arg) == SUITE_NAME:
        return SUITE_DIR
    return task_path(arg, key)


def copy_config(target: Path) -> list[Path]:
    """Copy the shipped ``default.yaml``, ``tasks/`` and ``suite/`` into ``target`` (made if needed),
    to edit; returns the files written.

    Raises:
        ConfigError: ``target`` already has one of the files (nothing is overwritten, nothing copied),
            or cannot be written.
    """
    sources = sorted(p for p in CONFIG_DIR.rglob("*.yaml") if p.is_file())
    pairs = [(source, target / source.relative_to(CONFIG_DIR)) for source in sources]
    taken = [dest for _, dest in pairs if dest.exists()]
    if taken:
        raise ConfigError(f"already exists (nothing was copied; give an empty or new folder; {len(taken)} "
                          "file(s) in the way)", path=str(taken[0]))
    written: list[Path] = []
    try:
        for source, dest in pairs:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
            written.append(dest)
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc.strerror or exc}", path=str(exc.filename or target)) from exc
    return written
