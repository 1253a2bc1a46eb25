"""Run one variant of a suite task on a fresh simulated phone and judge it.

``run_task`` builds the phone the task's setup describes, runs a ``Session`` on it (in-process,
through ``SimDriver``) with the task's text and step budget, reads the phone's state afterwards
and judges the run (``spec.judge``). The model is the caller's: the task's oracle
(``oracle_model``), the one that gives up at once (``give_up_model``), or a real one (``None``:
built by the session from ``settings.model``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from signal import Signals
from typing import Any

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.device.wda import IOSDriver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.session import RunResult, Session
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.core.trace.runs import read_steps
from ufo_mobile.errors import ConfigError, RunWriteError, SimulatorError
from ufo_mobile.eval.checks import RunFacts
from ufo_mobile.eval.spec import TaskInstance, judge
from ufo_mobile.settings import Settings, TaskSettings
from ufo_mobile.sim.phone.loader import packaged_app
from ufo_mobile.sim.phone.simphone import SimPhone

#: The model that gives up at once, in each mode's reply format.
GIVE_UP = Script(
    replies=[{"status": "FAIL", "result": "giving up"}],
    repeat_last=True,
    modes={"reasoning": ['<thought>I give up.</thought>\n<request_accomplished success="false">giving up'
                         "</request_accomplished>"],
           "codeact": ['```python\ncomplete(False, "giving up")\n```']},
)


@dataclass
class TaskOutcome:
    """One run of one task variant: how it ended, and whether it did the task."""

    task_id: str
    seed: int
    kind: str
    text: str
    params: dict[str, Any]
    status: str
    reason: str
    answer: str
    passed: bool
    why: str
    steps: int  # of the step budget: actions on the phone and the final answer (RunResult.steps_used)
    budget: int
    duration_seconds: float
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    run_id: str
    run_dir: Path
    outcome: str = ""  # success, failed, needs_person (RunResult.outcome), or interrupted
    turns: int = 0  # the run's recorded steps (each model turn: in reasoning mode the planner's too)
    interrupted: bool = False  # the run did not end: stopped from outside, or cut off by a failed write
    signal: str | None = None  # the signal that stopped it (SIGINT, SIGTERM, SIGHUP), if one did
    write_failure: RunWriteError | None = field(default=None, repr=False, compare=False)  # it cut the run off

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON-ready data, as ``results.jsonl`` holds it."""
        data = asdict(replace(self, write_failure=None))
        del data["write_failure"]
        data["run_dir"] = str(self.run_dir)
        data["write_error"] = None if self.write_failure is None else str(self.write_failure)
        return data


def give_up_model(mode: str = "direct", reply_format: str = "json") -> ScriptedModel:
    """A model that answers FAIL ("giving up") to everything, in ``reply_format``."""
    speaks = reply_format if reply_format != "json" else None
    return ScriptedModel(GIVE_UP.for_mode(mode), name="scripted:give-up", speaks=speaks)


def oracle_model(instance: TaskInstance, mode: str = "direct", reply_format: str = "json",
                 source: str = "both") -> ScriptedModel:
    """The task's oracle script for this variant, in ``mode``'s reply format; said as a model
    answering in ``reply_format`` says it, or by points when the model sees the screenshot alone
    (``source``), looking at the run's phone for the points (``run_task`` lets it watch the phone).

    Raises:
        ConfigError: the task has no oracle script, or the script has no replies for ``mode``
            (``replies`` are the direct mode's, ``modes:`` holds the others').
    """
    script = instance.oracle
    if script is None:
        raise ConfigError("the task has no oracle script", path=str(instance.task.source), key="oracle")
    if mode != "direct" and mode not in script.modes:
        raise ConfigError(f"the oracle script has no replies for the {mode} mode (add modes: {{{mode}: [...]}})",
                          path=str(instance.task.oracle_path), key="modes")
    speaks = reply_format if reply_format != "json" else "json" if source == "screenshot" else None
    return ScriptedModel(script.for_mode(mode), name=f"scripted:oracle:{instance.task.id}", speaks=speaks)


def build_phone(instance: TaskInstance, *, width: int = 1080, height: int = 2400) -> SimPhone:
    """A fresh simulated phone as the task's setup describes it.

    Raises:
        ConfigError: the setup does not fit the apps (a file changed since the task was loaded).
    """
    setup = instance.setup
    phone = SimPhone(width=width, height=height)
    try:
        for package in setup.install:
            phone.install(packaged_app(package))
        for package, values in setup.state.items():
            phone.set_state(package, **values)
        if setup.start_app is not None:
            phone.start_app(setup.start_app)
    except (SimulatorError, ValueError) as exc:
        raise ConfigError(f"cannot set up the phone: {exc}", path=str(instance.task.source), key="setup") from exc
    return phone


def run_settings(instance: TaskInstance, base: Settings, log_dir: Path) -> Settings:
    """``base`` with the task's text, its step budget, the simulated phone and ``log_dir``."""
    return base.model_copy(update={
        "task": TaskSettings(text=instance.text, name=instance.name),
        "limits": base.limits.model_copy(update={"max_steps": instance.task.spec.budget}),
        "device": base.device.model_copy(update={"kind": "sim"}),
        "logs": base.logs.model_copy(update={"dir": log_dir}),
    })


def default_settings() -> Settings:
    """Settings for runs whose model the caller passes in (the oracle, the give-up model)."""
    return Settings.model_validate({"task": {"text": "-"}, "model": {"kind": "scripted", "script": "-"}})


async def run_task(instance: TaskInstance, *, log_dir: Path, model: ChatModel | None = None,
                   settings: Settings | None = None, run_id: str | None = None,
                   driver: Callable[[SimPhone], DeviceDriver] = SimDriver,
                   on_start: Callable[[Session], None] | None = None,
                   on_step: Callable[[StepContext], None] | None = None) -> TaskOutcome:
    """Run ``instance`` once and judge it.

    Args:
        log_dir: where the run directory goes.
        model: the model to run with; ``None`` builds it from ``settings.model``.
        settings: everything else (mode, limits other than the step budget, perception, ...);
            default ``default_settings()``.
        run_id: the run directory's name; default ``<time>-<task id>-s<seed>-<random>``.
        driver: the driver over the task's phone (a ``SimDriver`` subclass, say, whose screenshots
            are cheap, for tests that only look at the state).
        on_start: called with the session once its run directory exists (to interrupt it, say).
        on_step: called with each step as it ends (to show progress).
    """
    base = settings or default_settings()
    phone = build_phone(instance, width=base.device.sim.width, height=base.device.sim.height)
    device = driver(phone)
    settings = run_settings(instance, base, log_dir)
    if isinstance(device, IOSDriver):  # the same phone, served as an iPhone: the record says so
        settings = settings.model_copy(update={"device": settings.device.model_copy(
            update={"kind": "wda", "serial": device.url})})
    if isinstance(model, ScriptedModel):
        if model.speaks is not None:
            model.watch(device)  # it points at the controls its replies name
        if isinstance(device, IOSDriver):  # its numbers are the Android phone's: it names controls by label
            model.renumber(SimDriver(phone))
    session = Session(settings, device=device, model=model, run_id=run_id, on_start=on_start, on_step=on_step)
    result = await session.run()
    # a run that a failed write ended (a full disk) did not end on its own either: not the agent's failure
    failure = session.context.writer.failure if session.context is not None else None
    write_failure = failure if not result.ok and not result.interrupted else None
    interrupted = result.interrupted or write_failure is not None
    facts = RunFacts(status=str(result.status), answer=result.answer, reason=result.reason, state=phone.state)
    verdict = judge(instance, facts, gave_up=agent_gave_up(result))
    return TaskOutcome(
        task_id=instance.task.id, seed=instance.seed, kind=instance.task.kind, text=instance.text,
        params=instance.params, status=str(result.status), reason=result.reason, answer=result.answer,
        passed=verdict.passed, why=verdict.why, steps=result.steps_used, budget=instance.task.spec.budget,
        duration_seconds=result.duration_seconds, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens, cost_usd=result.cost_usd, run_id=result.run_id,
        run_dir=result.run_dir, outcome="interrupted" if interrupted else result.outcome, turns=result.steps,
        interrupted=interrupted, signal=None if result.signal is None else Signals(result.signal).name,
        write_failure=write_failure)


def agent_gave_up(result: RunResult) -> bool:
    """Whether the run's FAIL was the agent's own answer: its last step's reply said FAIL, and no
    error ended it (a limit leaves the last step at CONTINUE; an error records itself)."""
    if result.status != MobileAgentStatus.FAIL or result.interrupted:
        return False
    steps = read_steps(result.run_dir)
    if not steps:
        return False
    last = steps[-1]
    return last.get("status") == MobileAgentStatus.FAIL and not last.get("error")
