"""What ``run TASK`` is given: a task file, a shipped task's name, ``-`` (the goal on standard
input) or a goal in words; and the yes/no question ``run`` asks at a terminal."""

from __future__ import annotations

import sys
from pathlib import Path

from ufo_mobile import shipped
from ufo_mobile.errors import ConfigError
from ufo_mobile.safe_text import printable

YAML_SUFFIXES = (".yaml", ".yml")
MAX_GOAL = 4000  # characters of a goal; a longer one belongs in a task file


def looks_like_a_file(text: str) -> bool:
    """A task file's path, or a shipped task's name: one word (``demo``, ``tasks/wifi``) or a name
    ending in ``.yaml`` or ``.yml``. Words with spaces are a goal, slashes or not ("open 1/2")."""
    return not any(c.isspace() for c in text.strip()) or text.strip().lower().endswith(YAML_SUFFIXES)


def task_or_goal(arg: str) -> tuple[Path | None, str | None]:
    """``(task file, None)`` or ``(None, goal)`` for ``run``'s TASK: an existing file, a shipped
    task's name (``demo``) or anything that looks like a file (one word, ``*.yaml``) is a task file;
    ``-`` reads the goal from standard input; other words are the goal.

    Raises:
        ConfigError: a single word that is neither a file nor a shipped task's name; an empty goal.
    """
    if arg == "-":
        return None, _goal(sys.stdin.read() if sys.stdin is not None else "", "the goal on standard input")
    if Path(arg).exists() or looks_like_a_file(arg):
        return shipped.task_path(Path(arg)), None
    return None, _goal(arg, "the goal")


def _goal(text: str, what: str) -> str:
    goal = " ".join(text.split())
    if not goal:
        raise ConfigError(f"{what} is empty", key="task")
    if len(goal) > MAX_GOAL:
        raise ConfigError(f"{what} is longer than {MAX_GOAL} characters: put it in a task file", key="task")
    return goal


def ask_yes_no(question: str) -> bool:
    """Ask ``question`` on stderr and read the answer from the terminal's stdin: True for y or yes
    (end of input, or anything else, is no)."""
    try:
        print(printable(question), end="", file=sys.stderr, flush=True)
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")
