"""The ``Session``: one run of one task, from its run directory to its ``RunResult``.

A session asks its parts (``RunParts``: ``ufo_mobile.core.builder.RunBuilder`` builds them from
``Settings``) for the models, the run directory, the phone and the root agent, in that order: a bad
file is a ``ConfigError`` before anything is written. It runs one round (``loop.py``), records how it
ended (``result.py``) and closes what it opened, however the run ends (``signals.py`` says how a
signal stops it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ufo_mobile.core.agents.base import BasicAgent, closing_limit
from ufo_mobile.core.agents.human import Operator
from ufo_mobile.core.agents.limits import StepTimer, event_loop_timer
from ufo_mobile.core.agents.replay import ReplayAgent
from ufo_mobile.core.builder.parts import Models, RunParts
from ufo_mobile.core.builder.run_builder import RunBuilder
from ufo_mobile.core.builder.start import Resumed, continue_from, start_again, start_new
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.session.loop import run_round
from ufo_mobile.core.session.result import RunResult, cache_after, replay_plan, result_of, write_report
from ufo_mobile.core.session.signals import stop_run_on_signals
from ufo_mobile.core.states.base import AgentLike
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.core.trace.logging import make_run_logger
from ufo_mobile.core.trace.writer import Redactor, RunWriter, new_run_id
from ufo_mobile.errors import DeviceError, RunWriteError
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.settings import Settings


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


class Session:
    """One run of one task: ``await Session(settings).run()`` gives its ``RunResult``.

    ``settings`` (``ufo_mobile.settings.load_settings`` reads them from a task file) say the task,
    the model, the phone (``device:``, whose ``kind`` defaults to the simulated phone) and the limits. The
    pieces are built from them, with these in place of the settings' own where given:

    - ``device``: a ``DeviceDriver`` to use; ``model``: a ``ChatModel`` to use (both stay open for
      the caller); ``operator``: who answers confirmations, questions and takeovers;
      ``step_timer``: what bounds a step in time; ``parts``: every piece (``RunParts``) at once.

    The rest: ``run_id`` names the run (default: from the task and the time); ``handle_signals``
    turns Ctrl-C, SIGTERM and SIGHUP into a FAIL with a reason, as the command line does;
    ``on_step`` is called after each step with its ``StepContext``; ``on_start`` once the run
    directory exists; ``resume`` continues the run in that directory; ``replay`` is a trajectory
    to replay before the agent takes over.

    Raises ``ConfigError`` (before anything is written) when the settings cannot be built, e.g. a
    missing key or secret.
    """

    def __init__(self, settings: Settings, *, device: DeviceDriver | None = None,
                 model: ChatModel | None = None, run_id: str | None = None,
                 handle_signals: bool = False, on_step: Callable[[StepContext], None] | None = None,
                 on_start: Callable[[Session], None] | None = None,
                 step_timer: StepTimer = event_loop_timer, operator: Operator | None = None,
                 resume: Path | None = None, replay: ReplayPlan | None = None,
                 parts: RunParts | None = None) -> None:
        self.settings = settings
        self.resume = resume  # a run directory to continue (``run --resume``): same directory, same id
        self.replay = replay  # a trajectory to replay first (``replay RUN_DIR``)
        self.redactor = Redactor(settings.secrets())
        # every run is built in one place (ConfigError: a missing secret)
        self.parts: RunParts = parts or RunBuilder(settings, device=device, model=model, operator=operator,
                                                   step_timer=step_timer)
        self.credentials = self.parts.credentials
        for value in self.credentials.values():
            self.redactor.add(value)  # before anything is named, printed or written
        # Named in opened(), once the model's own secrets (a key from the environment) are known too:
        # a run directory is named after the task, which may quote a secret.
        self.run_id = run_id or ""
        self.handle_signals = handle_signals
        self.on_step = on_step
        self.on_start = on_start  # called once the run directory exists (run_id is final then)
        self.context: RunContext | None = None
        self.run_dir: Path | None = None
        self.resume_note = ""  # set when a resume goes on with an older state than its last step's
        self._start: dict[str, Any] = {}

    async def run(self) -> RunResult:
        """Run the task to its end and return how it ended. Every run that ends gets a run directory
        under ``logs.dir`` with ``run.json`` (and ``report.html`` unless ``logs.report`` is off); a
        failure of the phone, the model or a write ends the run in FAIL with the reason rather than
        raising. Raises ``ConfigError`` for settings that cannot be built, ``RunWriteError`` when
        not even the final ``run.json`` can be written, and re-raises an internal error after
        recording it."""
        async with self.opened() as live:
            ctx = live.context
            # The round runs as a task of its own, so that a second signal can abandon it (and only it).
            ctx.run_task = round_task = asyncio.ensure_future(run_round(live.agent, live.device, ctx))
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
        started = time.monotonic()
        models, phone, writer, resumed = await self._open()
        logger = make_run_logger(writer, run_id=self.run_id)
        models.bind_logger(logger)
        request = self.redactor.text(self.settings.task.text)  # the model never sees a secret, even in the task
        ctx = RunContext(self.run_id, request, writer, logger, on_step=self._notify, models=models.roles)
        if resumed is not None:
            continue_from(resumed, ctx, models.main)
        self.context = ctx
        device: DeviceDriver | None = None
        restore = stop_run_on_signals(ctx) if self.handle_signals else (lambda: None)
        try:
            if self.on_start is not None:
                self.on_start(self)
            device = self.parts.device(phone, logger=logger, writer=writer)
            plan, cache = replay_plan(self.settings, request, logger, given=self.replay,
                                      resuming=self.resume is not None)
            agent = self.parts.agent(device, models.main, replay=plan, logger=logger, redact=self.redactor.text)
            agent.run_id = self.run_id
            live = LiveRun(agent, ctx, device)
            yield live
            await self._keep_after_screen(live)
            live.result = self._record(live, started, cache)
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
            await self._close(device, models, writer, ctx)

    async def _open(self) -> tuple[Models, Any, RunWriter, Resumed | None]:
        """The models, the phone and the run directory (``run.json`` says RUNNING). A bad file is a
        ConfigError with no run directory made (a resumed one is left as it was)."""
        self.parts.check()  # a custom tool or an output model that does not load
        models = self.parts.models()
        for secret in models.secrets():
            self.redactor.add(secret)
        resumed: Resumed | None = None
        try:
            phone = self.parts.phone()
            if self.resume is not None:
                writer, resumed = self.parts.resumed_writer(self.resume, self.redactor)
                self.run_id, self.run_dir = writer.run_id, writer.run_dir
                self._start = start_again(writer, resumed.point)
                self.resume_note = resumed.point.note
            else:
                task = self.settings.task
                self.run_id = self.run_id or new_run_id(self.redactor.text(task.name or task.text))
                writer = self.parts.new_writer(self.run_id, self.redactor)
                self.run_id, self.run_dir = writer.run_id, writer.run_dir
                self._start = start_new(writer, self.settings)
        except BaseException:
            await models.aclose()
            raise
        return models, phone, writer, resumed

    def _record(self, live: LiveRun, started: float, cache: dict[str, Any] | None) -> RunResult:
        """Write the final ``run.json`` of the run ``live`` drove, and say how it ended."""
        agent = live.agent
        final = live.final or agent
        if not final.state.is_round_end() and final.status != MobileAgentStatus.FAIL:
            final.fail_with("the host left the run before its round ended")
        result = result_of(final, live.context, started, settings=self.settings, redactor=self.redactor)
        if isinstance(agent, ReplayAgent):
            result.replay = agent.progress.to_json()
        if cache is not None:
            run = {**self._start, **result.to_json()}
            result.run_cache = cache_after(self.settings, run, result, cache, live.context.request,
                                           live.context.logger)
        live.context.writer.write_run({**self._start, **result.to_json()})
        return result

    async def _close(self, device: DeviceDriver | None, models: Models, writer: RunWriter,
                     ctx: RunContext) -> None:
        """Close the phone (when the run's own), the models the run built and the run directory,
        then write ``report.html``."""
        if self.parts.owns_device and device is not None:
            limit = closing_limit(self.settings.device.command_timeout_seconds, lost=ctx.device_lost)
            try:
                await asyncio.wait_for(device.close(), limit)
            except (DeviceError, TimeoutError):
                pass
        await models.aclose()
        writer.close()
        if self.settings.logs.report and writer.failure is None:
            await write_report(writer.run_dir, writer.thumbnails)

    async def _keep_after_screen(self, live: LiveRun) -> None:
        """``final.png`` for a run that did not fail (a failure keeps its own) but ended with a step
        that acted (CodeAct's ``complete`` after its actions): the screen after that action, for the
        report's before and after."""
        ctx, final = live.context, live.final or live.agent
        records = ctx.shared.step_records
        if final.status == MobileAgentStatus.FAIL or ctx.device_lost or not records or records[-1].action is None:
            return
        if self.settings.perception.source == "dump":
            return  # this run takes no screenshots
        limit = closing_limit(self.settings.device.command_timeout_seconds, lost=False)
        try:
            ctx.writer.write_file("final.png", await asyncio.wait_for(live.device.screenshot(), limit))
        except (DeviceError, TimeoutError, NotImplementedError, RunWriteError) as exc:
            ctx.logger.warning("final_screenshot_unavailable", error=str(exc) or f"no answer in {limit:g} s")

    def _notify(self, step: StepContext) -> None:
        if self.on_step is not None:
            self.on_step(step)
