"""The job model both engines share: a ``Job`` (one attempt of one task on one phone) goes in, an
``Outcome`` comes back, and ``Event`` records report progress on the way. All three are plain,
picklable dataclasses, so the Ray engine sends them between processes and hosts unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

#: How an attempt ended.
FINISHED, FAILED, ERROR = "FINISH", "FAIL", "ERROR"


@dataclass(frozen=True)
class Task:
    """One task file of the batch, as given on the command line."""

    index: int  # 1-based, in command-line order
    file: str  # absolute path of the task file
    config: str | None  # the defaults file (--config), absolute; None: looked up as ``run`` does
    name: str  # short, for tables: the task's name, else the file's stem
    text: str  # the request (as the task file gives it; shown made safe)
    overrides: dict[str, Any] = field(default_factory=dict)  # command-line overrides (--max-steps)

    @property
    def label(self) -> str:
        """``t03``: the task's number, as tables and run ids show it."""
        return f"t{self.index:02d}"


@dataclass(frozen=True)
class Job:
    """One attempt of one task: picklable, self-contained but for the files the task names."""

    task: Task
    attempt: int  # 1, or 2 for the retry after a lost phone
    run_id: str  # the run directory's name: t03-turn-on-wifi-a1
    driver: str | None = None  # --driver: adb or u2 for real phones (None: the task's, else adb)

    def retry(self) -> Job:
        """The next attempt of the same task (a run id of its own)."""
        return replace(self, attempt=self.attempt + 1, run_id=run_id_for(self.task, self.attempt + 1))


def run_id_for(task: Task, attempt: int) -> str:
    """The run directory's name of one attempt: ``t03-turn-on-wifi-a1``."""
    slug = re.sub(r"[^a-z0-9]+", "-", task.name.lower()).strip("-")[:40] or "task"
    return f"{task.label}-{slug}-a{attempt}"


@dataclass
class Outcome:
    """How one job ended on one phone."""

    task: int
    attempt: int
    phone: str
    run_id: str
    status: str  # FINISH, FAIL, or ERROR (the run could not be made or crashed)
    reason: str = ""
    answer: str = ""
    steps: int = 0
    duration_seconds: float = 0.0
    run_dir: str | None = None  # where the run directory is (on the driver, once brought back)
    device_error: str | None = None  # "gone" (disconnected, timed out, not reachable) or "command"
    interrupted: bool = False
    signal: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    node: str = ""  # the host that ran it
    needs_person: bool = False  # a FAIL that stopped for a person nobody could be (a question, an approval)
    archive: bytes | None = field(default=None, repr=False)  # the run directory as a tar (Ray engine)

    @property
    def ok(self) -> bool:
        """Whether the run ended in FINISH."""
        return self.status == FINISHED


@dataclass(frozen=True)
class Event:
    """A progress event: an attempt started, made a step, or ended. Text fields are redacted at the
    source (the run knows its secrets) and made printable where they are shown."""

    kind: str  # "start", "step", "end"
    task: int
    attempt: int
    phone: str
    step: int = 0
    status: str = ""
    action: str = ""
    detail: str = ""
