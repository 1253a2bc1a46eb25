"""Session and Round: the one generic loop ``handle -> next_state -> next_agent``.

A ``Round`` drives whichever agent is current until its state ends the round. A ``Session`` builds
the device, the model and the agent from ``Settings``, opens the run directory, runs one round,
and returns a ``RunResult``. Ctrl-C (SIGINT) ends the run in FAIL("interrupted") after the running
step has been recorded.
"""

from __future__ import annotations

import asyncio
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ufo_mobile.agents.base import BasicAgent
from ufo_mobile.agents.mobile import MobileAgent
from ufo_mobile.context import RunContext
from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.device.factory import make_driver, wrap_driver
from ufo_mobile.errors import DeviceError
from ufo_mobile.llm.base import ChatModel
from ufo_mobile.llm.factory import make_model
from ufo_mobile.processors.context import StepContext
from ufo_mobile.settings import Settings
from ufo_mobile.states.status import MobileAgentStatus
from ufo_mobile.trace.logging import make_run_logger
from ufo_mobile.trace.writer import Redactor, RunWriter, new_run_id


class Round:
    """One request handled by one or more agents until a round-ending state."""

    def __init__(self, request: str, agent: BasicAgent, context: RunContext) -> None:
        self.request = request
        self.agent = agent
        self.context = context
        self.subtasks = 0

    async def run(self) -> BasicAgent:
        """Drive the loop; returns the agent that ended the round."""
        agent = self.agent
        while not agent.state.is_round_end():
            await agent.handle(self.context)
            state = agent.state.next_state(agent)
            next_agent = agent.state.next_agent(agent)
            next_agent.set_state(state)
            agent = next_agent
            if state.is_subtask_end():
                self.subtasks += 1
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
    cost_usd: float
    run_dir: Path
    duration_seconds: float

    @property
    def ok(self) -> bool:
        return self.status == MobileAgentStatus.FINISH

    @property
    def interrupted(self) -> bool:
        return self.reason == "interrupted"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["run_dir"] = str(self.run_dir)
        data["outcome"] = "success" if self.ok else "failed"
        return data


class Session:
    def __init__(self, settings: Settings, *, device: DeviceDriver | None = None,
                 model: ChatModel | None = None, run_id: str | None = None,
                 handle_signals: bool = False, on_step: Any = None) -> None:
        self.settings = settings
        self.run_id = run_id or new_run_id(settings.task.name or settings.task.text)
        self.device = device
        self.model = model
        self.handle_signals = handle_signals
        self.on_step = on_step
        self.context: RunContext | None = None
        self.redactor = Redactor(settings.secrets())

    async def run(self) -> RunResult:
        s = self.settings
        started = time.monotonic()
        model = self.model or make_model(s.model)  # a bad script is a config error: no run directory yet
        writer = RunWriter(Path(s.logs.dir) / self.run_id, self.redactor)
        logger, log_stream = make_run_logger(writer.run_dir / "run.log", writer.redactor, run_id=self.run_id)
        writer.write_run({"run_id": self.run_id, "status": "RUNNING", "task": s.task.text,
                          "settings": s.model_dump(mode="json")})
        owns_device = self.device is None  # a driver passed in by the caller stays open for the caller
        ctx = RunContext(self.run_id, s.task.text, writer, logger, on_step=self._notify)
        self.context = ctx
        device: DeviceDriver | None = None
        restore = self._install_signals(ctx)
        try:
            device = wrap_driver(self.device or make_driver(s.device, logger=logger), s.device, writer)
            agent = MobileAgent("MobileAgent", device=device, model=model, settings=s, logger=logger)
            agent.run_id = self.run_id
            final = await self._run_round(agent, device, ctx)
            result = self._result(final, ctx, started)
            writer.write_run(result.to_json())
            return result
        except BaseException as exc:
            logger.exception("run_crashed", error=repr(exc))
            writer.write_run({"run_id": self.run_id, "status": "FAIL", "outcome": "failed",
                              "reason": f"internal error: {exc!r}", "steps": ctx.step,
                              "run_dir": str(writer.run_dir)})
            raise
        finally:
            restore()
            if owns_device and device is not None:
                await _close(device)
            writer.close()
            log_stream.close()

    async def _run_round(self, agent: MobileAgent, device: DeviceDriver, ctx: RunContext) -> BasicAgent:
        try:
            await device.connect()
        except DeviceError as exc:
            agent.fail_with(f"cannot connect to the device: {exc}")
            agent.set_state(agent.state_manager.get_state(MobileAgentStatus.CONTINUE))
            agent.set_state(agent.state_manager.get_state(MobileAgentStatus.FAIL))
        return await Round(ctx.request, agent, ctx).run()

    def _result(self, agent: BasicAgent, ctx: RunContext, started: float) -> RunResult:
        failed = agent.failed
        answer = agent.answer if isinstance(agent, MobileAgent) else ""
        return RunResult(
            run_id=self.run_id,
            status=MobileAgentStatus.FAIL if failed else MobileAgentStatus.FINISH,
            reason=self.redactor.text(agent.reason),
            answer="" if failed else self.redactor.text(answer),
            steps=ctx.step,
            prompt_tokens=ctx.usage.prompt_tokens,
            completion_tokens=ctx.usage.completion_tokens,
            cost_usd=round(ctx.usage.cost_usd, 6),
            run_dir=ctx.run_dir,
            duration_seconds=round(time.monotonic() - started, 3),
        )

    def _notify(self, step: StepContext) -> None:
        if self.on_step is not None:
            self.on_step(step)

    def _install_signals(self, ctx: RunContext) -> Any:
        if not self.handle_signals:
            return lambda: None
        loop = asyncio.get_running_loop()
        presses = 0

        def on_sigint() -> None:
            nonlocal presses
            presses += 1
            if presses > 1:  # a second Ctrl-C: stop waiting for the step to be recorded
                loop.remove_signal_handler(signal.SIGINT)
                signal.raise_signal(signal.SIGINT)
                return
            ctx.interrupt()

        loop.add_signal_handler(signal.SIGINT, on_sigint)
        return lambda: loop.remove_signal_handler(signal.SIGINT)


async def _close(device: DeviceDriver) -> None:
    try:
        await device.close()
    except DeviceError:
        pass
