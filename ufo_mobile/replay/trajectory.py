"""A run's trajectory: the steps that changed the phone, each with the screen it was decided on.

Read from a run directory (``load_trajectory``): ``run.json`` for the task and settings,
``steps.jsonl`` for the actions as the agent chose them (never ``actions.jsonl``, whose typed text
may be withheld), and per step ``controls.json`` (the screen) and ``state.json`` (the plan and
memory after it, carried over when an agent takes over from a replay).

Kept, in order:

- ``action`` steps: an action that ran and worked (a failed one changed nothing the run relied
  on; a CONFIRM step's action is kept from the step that ran it);
- the ``finish`` step: FINISH without an action (the answer), the end of a finished trajectory;
- ``blocked`` steps: where the run cannot be followed without someone (a person took over, or the
  step left no screen to compare with); a replay hands over or stops there.

Steps that only planned (a manager's, a scripter's) are left out: they did not touch the phone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.trace import runs
from ufo_mobile.errors import ConfigError

#: The fields of a control a replay compares and reports (``controls.json`` holds more).
CONTROL_FIELDS = ("index", "class", "text", "description", "hint", "resource_id", "package", "bounds", "parent",
                  "clickable", "checkable", "scrollable", "editable", "focused", "password")

#: The shared-state fields an agent taking over from a replay gets from the recorded run (``memory``:
#: the facts in a state.json written before they were kept as ``fast_memory``).
CARRIED_FIELDS = ("plan", "current_subgoal", "memory", "manager_memory", "fast_memory", "custom_variables")

StepKind = Literal["action", "finish", "blocked"]


class TrajectoryStep(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    step: int = Field(description="the step's number in the recorded run")
    agent: str
    kind: StepKind
    app: str = Field(default="", description="the app in front when the step was decided")
    action: ActionCall | None = None
    reason: str = Field(default="", description="FINISH's answer; why a blocked step is blocked")
    screen: tuple[int, int] = (0, 0)
    controls: list[dict[str, Any]] = Field(default_factory=list)
    carry: dict[str, Any] = Field(default_factory=dict, description="CARRIED_FIELDS after the step")
    model_calls: int = Field(default=0, description="the recorded run's model calls up to this step")


class Trajectory(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    task: str
    mode: str = "direct"
    device: str = "sim"
    status: str = Field(description="how the recorded run ended: FINISH or FAIL")
    reason: str = ""
    finishes: bool = Field(default=False, description="the last step ended the task (a FINISH, or an action "
                                                      "that completed it)")
    steps: list[TrajectoryStep]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _screen(state: Any, folder: Path) -> tuple[int, int]:
    """The screen size the step saw: from its state, else the first line of its ``screen.txt``."""
    if isinstance(state, dict) and state.get("width") and state.get("height"):
        return int(state["width"]), int(state["height"])
    try:
        head = (folder / "screen.txt").read_text(encoding="utf-8").split("\n", 1)[0]
    except OSError:
        return 0, 0
    for word in head.replace(",", " ").split():
        width, sep, height = word.partition("x")
        if sep and width.isdigit() and height.isdigit():
            return int(width), int(height)
    return 0, 0


def _chain(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The actions of a turn that carried several, up to the first that did not run or failed."""
    actions, outcomes = line.get("actions"), line.get("outcomes")
    if not isinstance(actions, list) or not isinstance(outcomes, list):
        return []
    done = []
    for action, outcome in zip(actions, outcomes, strict=False):
        if not (isinstance(outcome, dict) and outcome.get("ran") and outcome.get("success")):
            break
        done.append(action)
    return done


def _steps_of(run_dir: Path, line: dict[str, Any], calls: int) -> list[TrajectoryStep]:
    """The followable steps of one recorded turn: one per action that ran (a turn may carry several,
    all decided on the same screen), the FINISH, or a blocked step; none for a planning turn."""
    chain = _chain(line)
    if not chain:
        step = _step_of(run_dir, line, calls, line.get("action"))
        return [step] if step is not None else []
    steps = [_step_of(run_dir, line, calls, action) for action in chain]
    return [step for step in steps if step is not None]


def _step_of(run_dir: Path, line: dict[str, Any], calls: int, action: Any) -> TrajectoryStep | None:
    number, status = int(line.get("step") or 0), str(line.get("status") or "")
    result = line.get("result")
    ran = isinstance(action, dict) and isinstance(result, dict) and (
        bool(result.get("success")) or bool(_chain(line)))
    if ran:
        kind: StepKind = "action"
    elif status == "FINISH" and action is None:
        kind = "finish"
    elif status == "TAKEOVER":
        kind = "blocked"
    else:
        return None  # planning, a failed action, a step that ended the run in FAIL
    folder = run_dir / "steps" / f"{number:04d}"
    controls, state = _read_json(folder / "controls.json"), _read_json(folder / "state.json")
    reason = str(line.get("reason") or "")
    if kind == "blocked":
        reason = f"a person took over the phone here ({reason or 'no request recorded'})"
    elif not isinstance(controls, list) or not controls:
        kind, reason = "blocked", f"step {number} left no controls.json to compare the screen with"
    carry = {k: state[k] for k in CARRIED_FIELDS if k in state} if isinstance(state, dict) else {}
    return TrajectoryStep(
        step=number, agent=str(line.get("agent") or ""), kind=kind, app=str(line.get("current_app") or ""),
        action=ActionCall.model_validate(action) if ran else None, reason=reason, screen=_screen(state, folder),
        controls=[{k: c.get(k) for k in CONTROL_FIELDS} for c in controls if isinstance(c, dict)]
        if isinstance(controls, list) else [],
        carry=carry, model_calls=calls)


def load_trajectory(run_dir: Path, run: Mapping[str, Any] | None = None) -> Trajectory:
    """The trajectory of the run in ``run_dir`` (see the module docstring); ``run`` is its
    ``run.json`` when the caller holds it already (the run itself, as it ends).

    Raises:
        ConfigError: not a run directory, a run still going, or a run with no step to follow.
    """
    run = runs.settle(run_dir) if run is None else run
    if run.get("status") == runs.RUNNING:
        raise ConfigError(f"the run is still going (process {run.get('pid', '?')}): wait for it to end",
                          path=str(run_dir))
    settings = run.get("settings")
    settings = settings if isinstance(settings, dict) else {}
    steps: list[TrajectoryStep] = []
    calls, finishes = 0, False
    for line in runs.read_steps(run_dir):
        calls += len(line.get("model_calls") or [])
        turn = _steps_of(run_dir, line, calls)
        steps.extend(turn)
        if turn:
            finishes = turn[-1].kind != "blocked" and line.get("status") == "FINISH"
            if turn[-1].kind != "action" or finishes:
                break  # nothing after a FINISH or a blocked step can be followed
    if not steps:
        raise ConfigError("the run has no step to replay (no action ran, and it did not finish)", path=str(run_dir))
    return Trajectory(run_id=str(run.get("run_id") or run_dir.name), task=str(run.get("task") or ""),
                      mode=str(settings.get("mode") or "direct"),
                      device=str((settings.get("device") or {}).get("kind") or "sim"),
                      status=str(run.get("status") or ""), reason=str(run.get("reason") or ""), finishes=finishes,
                      steps=steps)
