"""The ``task:``, ``logs:`` and ``replay:`` sections: what the run is asked, where it is written,
and the cache that replays a finished run."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from ufo_mobile.output_settings import OutputSettings
from ufo_mobile.settings.strict import Strict


class TaskSettings(Strict):
    """The ``task:`` section: what the agent is asked to do (a task file may give just the text)."""

    text: str = Field(min_length=1, description="the request, in plain words (\"Turn on Wi-Fi\")")
    name: str | None = Field(default=None, description="a short name for the run directory; None = from the text")
    output: OutputSettings | None = Field(default=None, description="a structured final answer (model or schema)")


class LogSettings(Strict):
    """The ``logs:`` section: where run directories are written."""

    dir: Path = Field(default=Path("logs"), description="run directories go to <dir>/<run-id>/")
    report: bool = Field(default=True, description="write <run>/report.html when the run ends")


class ReplaySettings(Strict):
    """Guarded replay (``replay RUN_DIR``) and the run cache: a finished run's steps replayed, screen
    checked by screen, the next time the same task runs."""

    cache_dir: Path | None = Field(default=None, description="the run cache (relative to the working "
                                                             "directory, like logs.dir); None = off")
    threshold: float = Field(default=0.8, ge=0, le=1, description="the least screen similarity to replay a step")
