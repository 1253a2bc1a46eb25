"""Session and Round: the one generic loop ``handle -> next_state -> next_agent``.

A ``Round`` drives whichever agent is current until its state ends the round. A ``Session`` builds
the model and the device from ``Settings`` (a bad file is a ``ConfigError`` before anything is
written), opens the run directory, runs one round, and returns a ``RunResult``.

However the run ends, ``run.json`` ends in a final state with a reason:

- FINISH or FAIL from the agent (limits, device and model failures included);
- a signal (Ctrl-C, SIGTERM, SIGHUP): the running step is cancelled and recorded, and the run
  ends in FAIL("interrupted" | "terminated" | "hung up"); a second signal stops waiting for
  anything (the device, the final screenshot) and records the same; a third one kills at once;
- a write failure (a full disk): FAIL("cannot write the run directory: ..."), nothing half-written;
- a crash: FAIL("internal error: ...") and the exception is raised on;
- SIGKILL: nothing can be written then, but the run's lock dies with the process, and the next
  ``run`` in the same log directory (or ``report`` of the run) marks it as cut off.

A session may replay a trajectory first (``replay``: ``python -m ufo_mobile replay RUN_DIR``), and
with ``replay.cache_dir`` set it looks the task up in the run cache before the run (a hit is
replayed, falling back to the agent) and saves the run's trajectory there when it finished;
``RunResult.replay`` and ``RunResult.run_cache`` say what happened.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import structlog
from pydantic import ValidationError

from ufo_mobile.core.agents.base import BasicAgent, closing_limit
from ufo_mobile.core.agents.factory import build_root
from ufo_mobile.core.agents.human import Operator
from ufo_mobile.core.agents.limits import StepTimer, event_loop_timer
from ufo_mobile.core.agents.replay import ReplayAgent
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.factory import build_sim_phone, make_driver, wrap_driver
from ufo_mobile.core.llm.base import ChatModel, ManagedModel, Usage
from ufo_mobile.core.llm.factory import make_model
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.llm.structured import load_output_spec
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.states.base import AgentLike
from ufo_mobile.core.status import NEEDS_PERSON, MobileAgentStatus
from ufo_mobile.core.tools.build import check_tool_settings
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.trace import runs
from ufo_mobile.core.trace.logging import make_run_logger
from ufo_mobile.core.trace.writer import Redactor, RunWriter, Thumbnail, new_run_id
from ufo_mobile.errors import ConfigError, DeviceError, RunWriteError, first_problem
from ufo_mobile.replay.cache import plan_from_cache, save_run
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.settings import Settings

#: The signals a run turns into FAIL with a reason, and that reason.
STOP_SIGNALS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated",
                                signal.SIGHUP: "hung up"}


class Round:
    """One request handled by one or more agents until a round-ending state."""

    def __init__(self, request: str, agent: AgentLike, context: RunContext) -> None:
        self.request = request
        self.agent = agent
        self.context = context
        self.subtasks = 0

    async def run(self) -> AgentLike:
        """Drive the loop; returns the agent that ended the round. The round-ending state's own
        work (FAIL keeps the final screen) runs once, at the end."""
        agent = self.agent
        while not agent.state.is_round_end():
            await agent.handle(self.context)
            state = agent.state.next_state(agent)
            next_agent = agent.state.next_agent(agent)
            next_agent.set_state(state)
            agent = next_agent
            if state.is_subtask_end():
                self.subtasks += 1
        await agent.handle(self.context)
        self.agent = agent
        return agent


@dataclass
class RunResult:
    run_id: str
    status: str  # FINISH or FAIL: how the run ended
    reason: str
    answer: str
    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: unknown (a model without a price)
    run_dir: Path
    duration_seconds: float
    interrupted: bool = False  # stopped from outside (a signal, or RunContext.interrupt)
    signal: int | None = None  # the signal that stopped the run, if one did
    cached_tokens: int = 0  # the part of prompt_tokens served from the provider's prompt cache
    model_calls: int = 0
    output: Any = None  # the answer as structured data, when the task asks for it (task.output)
    replay: dict[str, Any] | None = None  # the replay's account, when the run replayed a trajectory
    run_cache: dict[str, Any] | None = None  # the run cache's account, when replay.cache_dir is set
    needs_person: bool = False  # it stopped for a person nobody could be (a question, a takeover, an approval)
    steps_used: int = 0  # of the step budget: actions on the phone and the final answer
    usage_by_role: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> model, tokens, cost, calls
    execution: dict[str, Any] = field(default_factory=dict)  # where the run ended: RunContext.execution

    @property
    def ok(self) -> bool:
        return self.status == MobileAgentStatus.FINISH

    @property
    def outcome(self) -> str:
        """success, failed, or needs_person (a FAIL that waited for a person nobody could be)."""
        return "success" if self.ok else NEEDS_PERSON if self.needs_person else "failed"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["run_dir"] = str(self.run_dir)
        data["outcome"] = self.outcome
        data["signal"] = signal.Signals(self.signal).name if self.signal is not None else None
        return data


@dataclass
class LiveRun:
    """A run opened by ``Session.opened``: its root agent, the context every agent of it shares, and
    its phone. ``final`` is the agent that ended the round (the body sets it; the root agent when
    left unset); ``result`` is set once the run is recorded."""

    agent: BasicAgent
    context: RunContext
    device: DeviceDriver
    final: AgentLike | None = None
    result: RunResult | None = None


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
            shared = SharedState.model_validate({**point.state, "finished": False, "success": None})
        except ValidationError as exc:
            where, message = first_problem(exc)
            raise ConfigError(f"{message} (the run cannot be resumed from this state)", path=str(source),
                              key=".".join(where) or None) from exc
        u = point.usage
        usage = Usage(int(u["prompt_tokens"]), int(u["completion_tokens"]), int(u["cached_tokens"]),
                      u["cost_usd"], int(u["calls"]))
        return cls(point, shared, usage)


class Session:
    def __init__(self, settings: Settings, *, device: DeviceDriver | None = None,
                 model: ChatModel | None = None, run_id: str | None = None,
                 handle_signals: bool = False, on_step: Callable[[StepContext], None] | None = None,
                 on_start: Callable[[Session], None] | None = None,
                 step_timer: StepTimer = event_loop_timer, operator: Operator | None = None,
                 resume: Path | None = None, replay: ReplayPlan | None = None) -> None:
        self.settings = settings
        self.resume = resume  # a run directory to continue (``run --resume``): same directory, same id
        self.replay = replay  # a trajectory to replay first (``replay RUN_DIR``)
        self.redactor = Redactor(settings.secrets())
        self.credentials = CredentialManager.from_settings(settings.credentials)  # ConfigError: a missing secret
        for value in self.credentials.values():
            self.redactor.add(value)  # before anything is named, printed or written
        # Named in run(), once the model's own secrets (a key from the environment) are known too: a
        # run directory is named after the task, which may quote a secret.
        self.run_id = run_id or ""
        self.device = device
        self.model = model
        self.handle_signals = handle_signals
        self.on_step = on_step
        self.on_start = on_start  # called once the run directory exists (run_id is final then)
        self.step_timer = step_timer  # tests pass one they fire themselves
        self.operator = operator  # the person in the loop (takeovers, confirmations); None: nobody
        self.context: RunContext | None = None
        self.run_dir: Path | None = None
        self.resume_note = ""  # set when a resume goes on with an older state than its last step's
        self._start: dict[str, Any] = {}

    def _reopen(self, run_dir: Path) -> tuple[RunWriter, Resumed]:
        """The run directory of an interrupted run, taken over where its last step ended. Everything
        read back is checked before ``run.json`` says RUNNING again: a bad file is a ConfigError
        naming it, with the run left as it was."""
        point = runs.resume_point(run_dir)  # ConfigError: alive, finished, or nothing to continue from
        resumed = Resumed.of(point, run_dir)  # ConfigError: a state of the wrong shape
        try:
            writer = RunWriter(run_dir, self.redactor, existing=True)
        except RunWriteError as exc:
            raise ConfigError(f"cannot resume the run: {exc}", path=str(run_dir)) from exc
        self.run_id, self.run_dir = writer.run_id, writer.run_dir
        previous = point.run
        kept: dict[str, Any] = {k: previous[k] for k in ("run_id", "task", "started_at", "settings", "resumed")
                                if k in previous}
        break_ = {"at_step": point.step, "previous_status": previous.get("status"),
                  "previous_reason": previous.get("reason", ""), "at": datetime.now(UTC).isoformat()}
        if point.note:
            break_.update(state_from_step=point.state_step, note=point.note)
        self._start = {**kept, "run_id": self.run_id, "status": runs.RUNNING, "pid": os.getpid(),
                       "resumed": [*kept.get("resumed", []), break_]}
        try:
            writer.write_run(self._start)
        except RunWriteError as exc:
            writer.close()
            raise ConfigError(f"cannot resume the run: {exc}", path=str(run_dir)) from exc
        return writer, resumed

    def _open(self) -> RunWriter:
        log_dir = Path(self.settings.logs.dir)
        runs.sweep(log_dir)  # runs killed earlier are marked as cut off, never left "RUNNING"
        task = self.settings.task
        self.run_id = self.run_id or new_run_id(self.redactor.text(task.name or task.text))
        try:
            writer = RunWriter.open(log_dir, self.run_id, self.redactor)
        except RunWriteError as exc:  # no run has started: this is a bad log directory
            raise ConfigError(f"cannot create the run directory: {exc}", key="logs.dir") from exc
        self.run_id, self.run_dir = writer.run_id, writer.run_dir
        self._start = {"run_id": self.run_id, "status": runs.RUNNING, "task": self.settings.task.text,
                       "pid": os.getpid(), "started_at": datetime.now(UTC).isoformat(),
                       "settings": self.settings.model_dump(mode="json")}
        try:
            writer.write_run(self._start)
        except RunWriteError as exc:  # a disk full from the start: leave nothing behind
            writer.close()
            shutil.rmtree(writer.run_dir, ignore_errors=True)
            raise ConfigError(f"cannot create the run directory: {exc}", key="logs.dir") from exc
        return writer

    async def run(self) -> RunResult:
        async with self.opened() as live:
            ctx = live.context
            # The round runs as a task of its own, so that a second signal can abandon it (and only it).
            ctx.run_task = round_task = asyncio.ensure_future(self._run_round(live.agent, live.device, ctx))
            try:
                live.final = await round_task
            except asyncio.CancelledError:
                if not (ctx.abandoned and round_task.cancelled()):
                    raise
                ctx.logger.warning("run_abandoned", reason=ctx.stop_reason, step=ctx.step)
                live.agent.fail_with(ctx.stop_reason)
                live.final = live.agent
        assert live.result is not None, "opened() gives every run that ends its result"
        return live.result

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[LiveRun]:
        """The run, ready to be driven: model, run directory, device and agent made, nothing run yet.
        The body drives the agent (``run`` runs the round; a host runs its own loop: see
        ``ufo_mobile.host.inprocess``) and sets ``final`` to the agent that ended it; on the way out
        the run is recorded and closed as ``run`` does, and ``result`` says how it ended. A run the
        body left before its round ended is a FAIL with the reason, never a success."""
        s = self.settings
        started = time.monotonic()
        check_tool_settings(s.tools)  # a custom tool that does not load is a config error: no run directory
        if s.task.output is not None:
            load_output_spec(s.task.output)  # so is an output model that does not import
        model = self.model or make_model(s.model, mode=s.mode)  # bad files are config errors: no run directory yet
        role_models = {str(role): make_model(s.model_for(role), mode=s.mode) for role in s.models}  # always ours
        for each in (model, *role_models.values()):
            if isinstance(each, ManagedModel):
                for secret in each.secrets():  # a key read from the environment is a secret too
                    self.redactor.add(secret)
        point: Resumed | None = None
        try:
            phone = build_sim_phone(s.device.sim) if self.device is None and s.device.kind == "sim" else None
            if self.resume is not None:
                writer, point = self._reopen(self.resume)
                self.resume_note = point.point.note
            else:
                writer = self._open()
        except BaseException:
            await self._close_model(model, role_models)
            raise
        logger = make_run_logger(writer, run_id=self.run_id)
        for each in (model, *role_models.values()):
            if isinstance(each, ManagedModel):
                each.bind_logger(logger)  # retries and fallbacks go to the run's log
        owns_device = self.device is None  # a driver passed in by the caller stays open for the caller
        request = self.redactor.text(s.task.text)  # the model never sees a secret, even one quoted in the task
        ctx = RunContext(self.run_id, request, writer, logger, on_step=self._notify, models=role_models)
        if point is not None:
            self._continue_from(point, ctx, model)
        self.context = ctx
        device: DeviceDriver | None = None
        restore = self._install_signals(ctx)
        try:
            if self.on_start is not None:
                self.on_start(self)
            device = wrap_driver(self.device or make_driver(s.device, logger=logger, phone=phone), s.device, writer)
            plan, cache = self._replay_plan(request, logger)
            # a scripted model built from the settings is the recorded run's own script: a hand-over skips on
            agent = build_root(s, device=device, model=model, replay=plan, skip_scripted=self.model is None,
                               logger=logger, step_timer=self.step_timer, credentials=self.credentials,
                               operator=self.operator)
            agent.run_id = self.run_id
            live = LiveRun(agent, ctx, device)
            yield live
            final = live.final or agent
            if not final.state.is_round_end() and final.status != MobileAgentStatus.FAIL:
                final.fail_with("the host left the run before its round ended")
            result = self._result(final, ctx, started)
            if isinstance(agent, ReplayAgent):
                result.replay = agent.progress.to_json()
            if cache is not None:
                result.run_cache = self._cache_after(result, cache, request, logger)
            writer.write_run({**self._start, **result.to_json()})
            live.result = result
        except RunWriteError:
            raise  # even the final run.json could not be written: the next run marks this one cut off
        except BaseException as exc:
            logger.exception("run_crashed", error=repr(exc))
            writer.write_run({**self._start, "status": "FAIL", "outcome": "failed",
                              "reason": f"internal error: {exc!r}", "steps": ctx.step,
                              "run_dir": str(writer.run_dir)})
            raise
        finally:
            restore()
            if owns_device and device is not None:
                await _close(device, closing_limit(s.device.command_timeout_seconds, lost=ctx.device_lost))
            await self._close_model(model, role_models)
            writer.close()
            if s.logs.report and writer.failure is None:
                await self._write_report(writer.run_dir, writer.thumbnails)

    @staticmethod
    async def _write_report(run_dir: Path, thumbnails: Mapping[str, Thumbnail]) -> None:
        """``report.html`` for every run that ends (finished, failed, interrupted, crashed). It is
        a view of the run directory (helped by the thumbnails the run kept of its screenshots):
        when it cannot be made, the run's outcome stands."""
        from ufo_mobile.report import write_report

        try:
            await asyncio.to_thread(partial(write_report, run_dir, thumbnails=thumbnails))
        except Exception as exc:  # noqa: BLE001 - nothing about the report may change the run
            structlog.get_logger("ufo_mobile.report").warning("report_not_written", run_dir=str(run_dir),
                                                              error=repr(exc))

    def _replay_plan(self, request: str, logger: Any) -> tuple[ReplayPlan | None, dict[str, Any] | None]:
        """The trajectory to replay first: the one given, else (a new run, ``replay.cache_dir`` set)
        the run cache's for this task; and the cache's account (None without a cache)."""
        if self.settings.replay.cache_dir is None:
            return self.replay, None
        if self.replay is not None or self.resume is not None:
            return self.replay, {"file": None, "hit": False, "saved": False, "note": ""}
        plan, account = plan_from_cache(self.settings, request)
        logger.info("replay_cache", hit=account["hit"], file=account["file"], note=account["note"])
        return plan, account

    def _cache_after(self, result: RunResult, account: dict[str, Any], request: str, logger: Any) -> dict[str, Any]:
        """Save a finished run's trajectory to the run cache (not one that only replayed the cache's)."""
        if not result.ok:
            return {**account, "note": "not saved: the run did not finish"}
        if account["hit"] and result.replay is not None and result.replay["ended"] == "finished":
            return {**account, "note": "replayed from the cache to the end; the cached trajectory stands"}
        run = {**self._start, **result.to_json()}
        path, why = save_run(self.settings, request, result.run_dir, run)
        logger.info("replay_cache_saved" if path else "replay_cache_not_saved", file=str(path or ""), note=why)
        return {**account, "file": str(path) if path else account["file"], "saved": path is not None,
                "note": f"not saved: {why}" if why else ""}

    @staticmethod
    def _continue_from(resumed: Resumed, ctx: RunContext, model: ChatModel) -> None:
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

    async def _run_round(self, agent: BasicAgent, device: DeviceDriver, ctx: RunContext) -> AgentLike:
        await connect_device(agent, device, ctx)
        return await Round(ctx.request, agent, ctx).run()

    def _result(self, agent: AgentLike, ctx: RunContext, started: float) -> RunResult:
        failed = agent.failed or agent.status == MobileAgentStatus.FAIL
        stopped = ctx.interrupted and failed and agent.reason == ctx.stop_reason
        # a structured answer was checked in the round (a mismatch is re-asked about, then fails the step)
        answer, reason, output = agent.answer, agent.reason, ctx.shared.output
        ctx.execution.end(failed=failed, reason=reason)  # a host that left early, an abandoned run
        return RunResult(
            run_id=self.run_id,
            status=MobileAgentStatus.FAIL if failed else MobileAgentStatus.FINISH,
            reason=self.redactor.text(reason),
            answer="" if failed else self.redactor.text(answer),
            steps=ctx.step,
            prompt_tokens=ctx.usage.prompt_tokens,
            completion_tokens=ctx.usage.completion_tokens,
            cost_usd=None if ctx.usage.cost_usd is None else round(ctx.usage.cost_usd, 6),
            run_dir=ctx.run_dir,
            duration_seconds=round(time.monotonic() - started, 3),
            interrupted=stopped,
            signal=ctx.stop_signal if stopped else None,
            cached_tokens=ctx.usage.cached_tokens,
            model_calls=ctx.usage.calls,
            output=None if failed else output,
            needs_person=failed and not stopped and bool(ctx.shared.needs_person),
            steps_used=ctx.shared.steps_used,
            usage_by_role={role: {"model": self.settings.model_for(role).name, **usage.to_dict()}
                           for role, usage in sorted(ctx.usage_by_role.items())},
            execution=ctx.execution.to_json(),
        )

    async def _close_model(self, model: ChatModel, role_models: Mapping[str, ChatModel]) -> None:
        """Close the models this session built (one passed in stays open for its owner)."""
        built = [*([model] if self.model is None else []), *role_models.values()]
        for each in built:
            if isinstance(each, ManagedModel):
                await each.aclose()

    def _notify(self, step: StepContext) -> None:
        if self.on_step is not None:
            self.on_step(step)

    def _install_signals(self, ctx: RunContext) -> Callable[[], None]:
        """SIGINT, SIGTERM, SIGHUP: the first stops the run after recording the step, the second
        stops waiting, the third gets the default action (the process dies at once)."""
        if not self.handle_signals:
            return lambda: None

        def stop(reason: str, signum: int) -> None:
            ctx.interrupt(reason, signum)
            ctx.logger.warning("signal", signal=signal.Signals(signum).name, reason=ctx.stop_reason)

        def abandon(signum: int) -> None:
            ctx.logger.warning("signal_again", signal=signal.Signals(signum).name)
            ctx.abandon()

        return install_stop_signals(stop, abandon)


def install_stop_signals(stop: Callable[[str, int], None], abandon: Callable[[int], None]) -> Callable[[], None]:
    """SIGINT, SIGTERM and SIGHUP on the running loop, as every command that runs tasks takes them:
    the first calls ``stop(reason, signum)`` (``STOP_SIGNALS``' reason: end the runs after recording
    their step), the second ``abandon(signum)`` (stop waiting for them), the third gets the default
    action (the process dies at once; the next run marks the run cut off). A signal the parent set
    to be ignored stays ignored: ``nohup`` (SIGHUP), or a job started in the background by a
    non-interactive shell (SIGINT), must not be stopped by it. Returns the function that removes
    the handlers."""
    loop = asyncio.get_running_loop()
    received = 0

    def on_signal(signum: int) -> None:
        nonlocal received
        received += 1
        if received == 1:
            stop(STOP_SIGNALS[signum], signum)
        elif received == 2:
            abandon(signum)
        else:
            restore()
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    def restore() -> None:
        for signum in handled:
            loop.remove_signal_handler(signum)

    handled = [signum for signum in STOP_SIGNALS if signal.getsignal(signum) != signal.SIG_IGN]
    for signum in handled:
        loop.add_signal_handler(signum, on_signal, signum)
    return restore


class RunControl:
    """Stops one session from outside (a signal to a command running many): ``interrupt`` as the
    first Ctrl-C does to ``run``, ``abandon`` as the second. Safe to call before the session has
    started; pass ``started`` as the session's ``on_start``."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.stop: tuple[str, int | None] | None = None
        self.abandoned = False

    def started(self, session: Session) -> None:
        self.session = session
        if self.stop is not None:
            self.interrupt(*self.stop)
        if self.abandoned:
            self.abandon()

    def interrupt(self, reason: str, signum: int | None = None) -> None:
        self.stop = self.stop or (reason, signum)
        ctx = self.session.context if self.session is not None else None
        if ctx is not None:
            ctx.interrupt(*self.stop)

    def abandon(self) -> None:
        self.abandoned = True
        ctx = self.session.context if self.session is not None else None
        if ctx is not None:
            ctx.abandon()


class RunGroup:
    """The runs in flight of a command that runs many (``eval``, ``batch``), stopped together: a run
    that starts after a stop is stopped as it starts."""

    def __init__(self) -> None:
        self.live: set[RunControl] = set()
        self.stop: tuple[str, int | None] | None = None
        self.abandoned = False

    def join(self) -> RunControl:
        """A control for a run about to start (``leave`` it when the run has ended)."""
        control = RunControl()
        if self.stop is not None:
            control.interrupt(*self.stop)
        if self.abandoned:
            control.abandon()
        self.live.add(control)
        return control

    def leave(self, control: RunControl) -> None:
        self.live.discard(control)

    def interrupt(self, reason: str, signum: int | None = None) -> None:
        self.stop = self.stop or (reason, signum)
        for control in list(self.live):
            control.interrupt(*self.stop)

    def abandon(self) -> None:
        self.abandoned = True
        for control in list(self.live):
            control.abandon()


async def _close(device: DeviceDriver, limit: float) -> None:
    try:
        await asyncio.wait_for(device.close(), limit)
    except (DeviceError, TimeoutError):
        pass


async def connect_device(agent: BasicAgent, device: DeviceDriver, ctx: RunContext) -> None:
    """Connect the run's phone, cancellable by a signal like a step; a phone that cannot be reached
    (or a signal) puts the agent in FAIL with the reason before its first step."""
    connect = asyncio.ensure_future(device.connect())
    ctx.current_step_task = connect  # a signal cancels the connect like a step
    try:
        await connect
    except DeviceError as exc:
        agent.fail_with(f"cannot connect to the device: {exc}")
    except asyncio.CancelledError:
        if not (connect.cancelled() and ctx.interrupted and not ctx.abandoned):
            raise
        agent.fail_with(ctx.stop_reason)
    finally:
        ctx.current_step_task = None
    if agent.status == MobileAgentStatus.FAIL:  # the rulebook's NONE -> FAIL: the run never started
        agent.set_state(agent.state.next_state(agent))
