"""A run directory read back for the report: ``run.json``, ``steps.jsonl``, ``run.log`` and each
step's files, every one of them optional.

A run cut off by SIGKILL, a step whose files were never written, a line torn by a crash, a
``run.json`` that is missing: what could not be read is listed (``RunView.problems`` for the run,
``StepView.missing`` for a step) and the rest is shown. A step folder with no line in
``steps.jsonl`` (the process died during the step) is kept as an unrecorded step. Only the run
directory is read; its texts are untrusted and are escaped where they are shown, not here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ufo_mobile.core.trace import runs
from ufo_mobile.core.trace.writer import Thumbnail
from ufo_mobile.errors import ConfigError

TEXT_LIMIT = 100_000  # characters read from one text file (a prompt, a reply); the rest is counted
_SCREEN_SIZE = re.compile(r"screen (\d+)x(\d+) px")
ANNOTATED = ("annotated.jpg", "annotated.png")  # annotated.png: runs written before annotated.jpg
_STEP_FILES = ("screenshot.png", *ANNOTATED, "controls.json", "screen.txt", "prompt.json",
               "reply.txt", "result.json", "timings.json", "state.json", "model.json")


@dataclass(frozen=True)
class Transition:
    """One ``transition`` line of ``run.log``: an agent's state machine moving."""

    agent: str
    source: str
    target: str
    step: int | None
    reason: str
    time: str


@dataclass(frozen=True)
class Plan:
    """Reasoning mode's state after a step (its ``state.json``): the manager's plan and memory, the
    subgoal it assigned, and the subgoal the step itself worked on (an executor's)."""

    plan: tuple[str, ...] = ()
    memory: tuple[str, ...] = ()
    current_subgoal: str = ""
    subgoal: str = ""

    @property
    def empty(self) -> bool:
        return not (self.plan or self.memory or self.current_subgoal or self.subgoal)


@dataclass
class StepView:
    """One step: its ``steps.jsonl`` line (empty when it was never recorded) and its files."""

    number: int
    folder: Path
    line: dict[str, Any]
    recorded: bool = True
    controls: list[dict[str, Any]] | None = None
    prompt: Any = None
    reply: str | None = None
    screen: str | None = None
    result_file: dict[str, Any] | None = None
    timings_file: dict[str, Any] | None = None
    usage_file: dict[str, Any] | None = None  # model.json's usage
    plan: Plan | None = None  # reasoning mode: the plan, memory and subgoals after the step (state.json)
    missing: list[str] = field(default_factory=list)

    def get(self, key: str, default: Any = None) -> Any:
        value = self.line.get(key, default)
        return default if value is None else value

    @property
    def image(self) -> Path | None:
        """The annotated screenshot (``annotated.jpg``; ``annotated.png`` in runs written before
        it), else the raw one, else None."""
        for name in (*ANNOTATED, "screenshot.png"):
            if (self.folder / name).is_file():
                return self.folder / name
        return None

    @property
    def screenshot(self) -> Path | None:
        """The raw screenshot (what the phone showed before the step's action), or None."""
        path = self.folder / "screenshot.png"
        return path if path.is_file() else None

    @property
    def usage(self) -> dict[str, Any] | None:
        """The step's model usage (tokens, cost, calls): its line's, else ``model.json``'s."""
        usage = self.line.get("usage")
        return usage if isinstance(usage, dict) else self.usage_file

    @property
    def screen_size(self) -> tuple[int, int] | None:
        """The screen size the control bounds refer to (the first line of ``screen.txt``)."""
        match = _SCREEN_SIZE.search(self.screen.split("\n", 1)[0]) if self.screen else None
        return (int(match.group(1)), int(match.group(2))) if match else None

    @property
    def action(self) -> dict[str, Any] | None:
        action = self.line.get("action")
        return action if isinstance(action, dict) else None

    @property
    def result(self) -> dict[str, Any] | None:
        result = self.line.get("result")
        if isinstance(result, dict):
            return result
        written = self.result_file  # an action's outcome; a FINISH or FAIL without one has a status
        return written if written is not None and "status" not in written else None

    @property
    def timings(self) -> dict[str, float]:
        timings = self.line.get("timings") or self.timings_file or {}
        return {str(k): float(v) for k, v in timings.items() if isinstance(v, int | float)} \
            if isinstance(timings, dict) else {}

    @property
    def code(self) -> str | None:
        """The Python a CodeAct step ran."""
        args = (self.action or {}).get("args")
        code = args.get("code") if isinstance(args, dict) else None
        return code if isinstance(code, str) else None


@dataclass
class RunView:
    """Everything the report shows about one run."""

    run_dir: Path
    data: dict[str, Any]
    steps: list[StepView]
    transitions: list[Transition]
    events: list[dict[str, Any]]
    problems: list[str]
    # small copies of the run's images that the run kept for its report (relative path -> thumbnail)
    thumbnails: Mapping[str, Thumbnail] = field(default_factory=dict)

    def thumbnail(self, path: Path | None) -> Thumbnail | None:
        """The thumbnail kept for ``path`` (a file of this run), if any."""
        if path is None or not self.thumbnails:
            return None
        try:
            return self.thumbnails.get(path.relative_to(self.run_dir).as_posix())
        except ValueError:
            return None

    @property
    def status(self) -> str:
        return str(self.data.get("status") or "UNKNOWN")

    @property
    def running(self) -> bool:
        return self.status == runs.RUNNING

    @property
    def failed(self) -> bool:
        return self.status not in ("FINISH", runs.RUNNING)

    @property
    def mode(self) -> str:
        settings = self.data.get("settings")
        mode = settings.get("mode") if isinstance(settings, dict) else None
        return str(mode or "direct")

    @property
    def sees_dump_alone(self) -> bool:
        """Whether the run took no screenshots (``perception.source: dump``)."""
        settings = self.data.get("settings")
        perception = settings.get("perception") if isinstance(settings, dict) else None
        return isinstance(perception, dict) and perception.get("source") == "dump"

    @property
    def actions_failed(self) -> int:
        """Actions that ran (or were refused) and did not succeed: ``run.json``'s count, else (a run
        from before it was kept, or one still going) counted from the steps' lines."""
        kept = self.data.get("actions_failed")
        if isinstance(kept, int) and not isinstance(kept, bool):
            return kept
        return sum(failed_in(s.line) for s in self.steps)

    @property
    def final_png(self) -> Path | None:
        path = self.run_dir / "final.png"
        return path if path.is_file() else None


def load_run(run_dir: Path) -> RunView:
    """Read ``run_dir``; a run that says RUNNING but whose process is gone is settled as cut off
    first (as ``report`` does). Never raises for a missing or unreadable file."""
    problems: list[str] = []
    try:
        data = runs.settle(run_dir)
    except (ConfigError, OSError) as exc:
        problems.append(f"run.json: {exc}")
        data = {}
    steps, torn = _read_lines(run_dir / "steps.jsonl")
    if torn:
        problems.append(f"steps.jsonl: {torn} line{'s' if torn != 1 else ''} could not be read "
                        "(torn by a crash, or not a JSON object)")
    if not (run_dir / "steps.jsonl").is_file():
        problems.append("steps.jsonl is missing")
    log, _ = _read_lines(run_dir / "run.log")
    return RunView(run_dir=run_dir, data=data, steps=_steps(run_dir, steps),
                   transitions=[_transition(e) for e in log if e.get("event") == "transition"],
                   events=[e for e in log if e.get("event") != "transition"], problems=problems)


def failed_in(line: Mapping[str, Any]) -> int:
    """How many actions of one ``steps.jsonl`` line failed: of a turn that held several, each one
    that ran (or was refused) without success; of one with a single action, its result. A step
    waiting for approval (CONFIRM) is counted by its line when it goes on."""
    if line.get("status") == "CONFIRM":
        return 0
    outcomes = line.get("outcomes")
    if isinstance(outcomes, list) and outcomes:
        return sum(1 for o in outcomes if isinstance(o, dict) and o.get("ran", True) and not o.get("success"))
    result = line.get("result")
    return 1 if line.get("action") and isinstance(result, dict) and result.get("success") is False else 0


def plan_of(state: Any, number: int) -> Plan | None:
    """The plan, memory and subgoals in a step's ``state.json`` (None when it has none of them)."""
    if not isinstance(state, dict):
        return None
    records = state.get("step_records")
    own = [r for r in records if isinstance(r, dict) and r.get("step") == number] if isinstance(records, list) else []
    plan = Plan(plan=_strings(state.get("plan")), memory=_strings(state.get("manager_memory")),
                current_subgoal=str(state.get("current_subgoal") or ""),
                subgoal=str(own[-1].get("subgoal") or "") if own else "")
    return None if plan.empty else plan


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value if v is not None) if isinstance(value, list) else ()


def _read_lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON object lines of ``path`` and how many lines were not whole JSON objects."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return [], 0
    good: list[dict[str, Any]] = []
    bad = 0
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(value, dict):
            good.append(value)
        else:
            bad += 1
    return good, bad


def _transition(event: dict[str, Any]) -> Transition:
    step = event.get("step")
    return Transition(agent=str(event.get("agent") or ""), source=str(event.get("from") or ""),
                      target=str(event.get("to") or ""), step=step if isinstance(step, int) else None,
                      reason=str(event.get("reason") or ""), time=str(event.get("timestamp") or ""))


def _steps(run_dir: Path, lines: list[dict[str, Any]]) -> list[StepView]:
    by_number: dict[int, dict[str, Any]] = {}
    for line in lines:
        number = line.get("step")
        if isinstance(number, int) and number > 0:
            by_number[number] = line  # a resumed run may repeat a step: its last line wins
    try:
        folders = {int(p.name): p for p in (run_dir / "steps").iterdir() if p.is_dir() and p.name.isdigit()}
    except OSError:
        folders = {}
    views = []
    for number in sorted(set(by_number) | set(folders)):
        folder = folders.get(number, run_dir / "steps" / f"{number:04d}")
        views.append(_step(number, folder, by_number.get(number)))
    return views


def _step(number: int, folder: Path, line: dict[str, Any] | None) -> StepView:
    view = StepView(number=number, folder=folder, line=line or {}, recorded=line is not None)
    controls = _read_json(folder / "controls.json")
    view.controls = [c for c in controls if isinstance(c, dict)] if isinstance(controls, list) else None
    view.prompt = _read_json(folder / "prompt.json")
    if view.prompt is None and (folder / "prompt.json").is_file():
        view.prompt = _read_text(folder / "prompt.json")  # not JSON: shown as it is
    view.reply = _read_text(folder / "reply.txt")
    view.screen = _read_text(folder / "screen.txt")
    result = _read_json(folder / "result.json")
    view.result_file = result if isinstance(result, dict) else None
    timings = _read_json(folder / "timings.json")
    view.timings_file = timings if isinstance(timings, dict) else None
    model = _read_json(folder / "model.json")
    usage = model.get("usage") if isinstance(model, dict) else None
    view.usage_file = usage if isinstance(usage, dict) else None
    view.plan = plan_of(_read_json(folder / "state.json"), number)
    expected = set((line or {}).get("files", {}).values()) if isinstance((line or {}).get("files"), dict) else set()
    view.missing = sorted(name for name in _STEP_FILES
                          if f"steps/{number:04d}/{name}" in expected and not (folder / name).is_file())
    return view


def _read_text(path: Path, limit: int = TEXT_LIMIT) -> str | None:
    """The text of ``path`` (at most ``limit`` characters, then a count of the rest), or None."""
    try:
        with path.open("rb") as f:
            raw = f.read(limit * 4 + 1)
            size = path.stat().st_size
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace")
    if len(text) > limit or size > len(raw):
        return text[:limit] + f"… [cut: the file has {size} bytes]"
    return text


def _read_json(path: Path) -> Any:
    """``path`` as JSON, or None when it is missing, unreadable or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, json.JSONDecodeError):
        return None
