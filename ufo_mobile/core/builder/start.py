"""How a run starts in its directory: ``run.json``'s first record, for a new run or one taken over
where an interrupted run's last step ended (``run --resume``), and what a resumed run goes on with."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.base import ChatModel, Usage
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.trace import runs
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.errors import ConfigError, RunWriteError, first_problem
from ufo_mobile.settings import Settings


@dataclass(frozen=True)
class Resumed:
    """A resume point checked and made into what the run goes on with."""

    point: runs.ResumePoint
    shared: SharedState
    usage: Usage

    @classmethod
    def of(cls, point: runs.ResumePoint, run_dir: Path) -> Resumed:
        """Raises ConfigError naming ``state.json`` and the field when the state has the wrong shape."""
        source = run_dir / "steps" / f"{point.state_step:04d}" / "state.json"
        try:
            shared = SharedState.model_validate(point.state)  # an older state's finished/success are retired
        except ValidationError as exc:
            where, message = first_problem(exc)
            raise ConfigError(f"{message} (the run cannot be resumed from this state)", path=str(source),
                              key=".".join(where) or None) from exc
        u = point.usage
        usage = Usage(int(u["prompt_tokens"]), int(u["completion_tokens"]), int(u["cached_tokens"]),
                      u["cost_usd"], int(u["calls"]))
        return cls(point, shared, usage)


def start_new(writer: RunWriter, settings: Settings) -> dict[str, Any]:
    """Write a new run's first ``run.json`` (RUNNING) and return it. A disk full from the start
    leaves nothing behind: ConfigError."""
    start = {"run_id": writer.run_id, "status": runs.RUNNING, "task": settings.task.text,
             "pid": os.getpid(), "started_at": datetime.now(UTC).isoformat(),
             "settings": settings.model_dump(mode="json")}
    try:
        writer.write_run(start)
    except RunWriteError as exc:
        writer.close()
        shutil.rmtree(writer.run_dir, ignore_errors=True)
        raise ConfigError(f"cannot create the run directory: {exc}", key="logs.dir") from exc
    return start


def start_again(writer: RunWriter, point: runs.ResumePoint) -> dict[str, Any]:
    """Write a resumed run's ``run.json`` (RUNNING again, the break recorded under ``resumed``)
    and return it; a write that fails leaves the run as it was: ConfigError."""
    previous = point.run
    kept: dict[str, Any] = {k: previous[k] for k in ("run_id", "task", "started_at", "settings", "resumed")
                            if k in previous}
    break_ = {"at_step": point.step, "previous_status": previous.get("status"),
              "previous_reason": previous.get("reason", ""), "at": datetime.now(UTC).isoformat()}
    if point.note:
        break_.update(state_from_step=point.state_step, note=point.note)
    start = {**kept, "run_id": writer.run_id, "status": runs.RUNNING, "pid": os.getpid(),
             "resumed": [*kept.get("resumed", []), break_]}
    try:
        writer.write_run(start)
    except RunWriteError as exc:
        writer.close()
        raise ConfigError(f"cannot resume the run: {exc}", path=str(writer.run_dir)) from exc
    return start


def continue_from(resumed: Resumed, ctx: RunContext, model: ChatModel) -> None:
    """The context of a resumed run: its steps, shared state and usage so far."""
    point = resumed.point
    ctx.shared = resumed.shared
    ctx.step = point.step
    ctx.usage = resumed.usage
    if isinstance(model, ScriptedModel):  # a script is a conversation: its answers so far were given
        model.skip(point.model_calls)
    ctx.logger.warning("run_resumed", at_step=point.step, previous_status=point.run.get("status"),
                       previous_reason=point.run.get("reason", ""), state_from_step=point.state_step,
                       note=point.note)
