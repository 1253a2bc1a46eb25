"""The run cache: a finished run's trajectory, kept to be replayed the next time the same task runs.

The key is the task as the agent was given it (spaces collapsed, casefolded), the mode and the
device kind (``sim``, ``adb``, ``u2``): the same request, worked the same way, on the same kind of
phone. It is hashed (``<cache_dir>/<key>.json``), so the file name never shows the task.

A trajectory is saved only from a run that finished, written to a temporary name and renamed into
place, and never with a secret: its texts come from the run directory (secrets are redacted there
already), a ``type_secret`` is kept as its secret's id, and a run that typed into a password field
(text the recording withholds) or whose actions hold redacted text is not saved at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ufo_mobile.core.trace.files import write_atomic
from ufo_mobile.core.trace.writer import dumps
from ufo_mobile.errors import ConfigError, RunWriteError
from ufo_mobile.replay.guard import REDACTED
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.replay.trajectory import Trajectory, TrajectoryStep, load_trajectory
from ufo_mobile.settings import Settings

FORMAT = 1


def cache_key(task: str, mode: str, device: str) -> str:
    """The key of a task in the cache (see the module docstring)."""
    fields = {"task": " ".join(task.split()).casefold(), "mode": mode, "device": device}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()[:32]


def _types_a_password(step: TrajectoryStep) -> bool:
    action = step.action
    if action is None:
        return False
    password = {int(c.get("index") or 0) for c in step.controls if c.get("password")}
    if action.name == "code":
        return bool(password) and "type(" in str(action.args.get("code", ""))
    if action.name != "type":
        return False
    index = action.args.get("index")
    if isinstance(index, int):
        return index in password
    return any(c.get("password") and c.get("focused") for c in step.controls)


def not_cacheable(trajectory: Trajectory) -> str | None:
    """Why ``trajectory`` must not be cached, or None."""
    if trajectory.status != "FINISH" or not trajectory.finishes:
        return "the run did not finish"
    for step in trajectory.steps:
        if step.action is not None and REDACTED in json.dumps(step.action.args, ensure_ascii=False):
            return f"step {step.step}'s action holds redacted text"
        if _types_a_password(step):
            return f"step {step.step} typed into a password field (its text is not kept)"
    return None


@dataclass(frozen=True)
class CacheEntry:
    """What a lookup found: a trajectory, or why the file there could not be used (``problem``)."""

    path: Path
    trajectory: Trajectory | None = None
    problem: str = ""


class RunCache:
    """A directory of trajectories, one file per key."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory).expanduser()

    def path_for(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def lookup(self, key: str) -> CacheEntry:
        """The trajectory saved under ``key``; a missing file is a miss, a bad one a miss with a problem."""
        path = self.path_for(key)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return CacheEntry(path)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return CacheEntry(path, problem=f"unreadable: {exc}")
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
            return CacheEntry(path, problem=f"not a cache entry of format {FORMAT} for this key")
        try:
            return CacheEntry(path, Trajectory.model_validate(data.get("trajectory")))
        except ValidationError as exc:
            return CacheEntry(path, problem=f"invalid trajectory: {exc.errors()[0]['msg']}")

    def save(self, key: str, trajectory: Trajectory) -> Path:
        """Write ``trajectory`` under ``key`` (atomically, replacing an older one).

        Raises:
            RunWriteError: the directory or the file cannot be written.
        """
        path = self.path_for(key)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunWriteError(f"cannot create the cache directory {self.directory}: {exc.strerror}",
                                path=str(self.directory), errno=exc.errno) from exc
        entry = {"format": FORMAT, "key": key, "task": trajectory.task, "mode": trajectory.mode,
                 "device": trajectory.device, "saved_at": datetime.now(UTC).isoformat(),
                 "trajectory": trajectory.model_dump(mode="json")}
        write_atomic(path, dumps(entry).encode("utf-8"), sync=True)
        return path


# --- the session's side: look a run up before it starts, save it when it finished -----------------


def plan_from_cache(settings: Settings, task: str) -> tuple[ReplayPlan | None, dict[str, Any]]:
    """The cached trajectory of this task (``task`` as the agent is given it), as a replay that
    falls back to the agent, or None; and the cache's account for ``run.json``."""
    assert settings.replay.cache_dir is not None
    entry = RunCache(settings.replay.cache_dir).lookup(cache_key(task, settings.mode, settings.device.kind))
    account: dict[str, Any] = {"file": str(entry.path), "hit": entry.trajectory is not None, "saved": False,
                               "note": entry.problem}
    if entry.trajectory is None:
        return None, account
    return ReplayPlan(entry.trajectory, fallback="agent", source=f"cache {entry.path.name}"), account


def save_run(settings: Settings, task: str, run_dir: Path, run: Mapping[str, Any]) -> tuple[Path | None, str]:
    """Save the finished run in ``run_dir`` (``run`` its final ``run.json``) to the cache: the file
    it went to, or None and why not."""
    assert settings.replay.cache_dir is not None
    try:
        trajectory = load_trajectory(run_dir, run)
    except ConfigError as exc:
        return None, str(exc)
    why = not_cacheable(trajectory)
    if why is not None:
        return None, why
    try:
        return RunCache(settings.replay.cache_dir).save(cache_key(task, settings.mode, settings.device.kind),
                                                        trajectory), ""
    except RunWriteError as exc:
        return None, str(exc)
