"""The in-process host API: a session host (UFO's ``BaseSession``/``BaseRound``, or your own) drives
a mobile agent round by round with UFO's state protocol.

    async with open_agent("task.yaml") as hosted:
        agent, context = hosted.agent, hosted.context
        while not agent.state.is_round_end():
            await agent.state.handle(agent, context)
            state = agent.state.next_state(agent)
            agent = agent.state.next_agent(agent)
            agent.set_state(state)
        outcome = await hosted.end_round(agent)   # {"status": "FINISH" | "FAIL", "reason": ..., ...}
    hosted.result                                  # the recorded run (RunResult)

``open_agent`` makes what ``run`` makes (model, run directory, phone, agent) and connects the phone;
a phone that cannot be reached leaves the agent in FAIL before its first step, so the loop above
ends at once with the reason. ``context`` (a ``RunContext``) is the object the host shares with
every agent of its session: the request, the step counters (``session_step``, ``round_step``),
the cost so far, each ended round's outcome (``results``) and a ``blackboard`` dict.

The outcome is FINISH or FAIL with a reason, and ``completed`` is true only for FINISH: a FAIL is
never reported as completed (UFO's session manager reports a FAIL as COMPLETED). A host that
leaves before the round ended gets a FAIL too ("the host left the run before its round ended").
On the way out the run is recorded like any other (``run.json``, the steps, ``report.html``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from ufo_mobile.core.context import RunContext
from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.memory.execution import ExecutionState
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.session import LiveRun, RunResult, Session, connect_device
from ufo_mobile.core.states.base import AgentLike
from ufo_mobile.core.status import NONE_STATE, MobileAgentStatus
from ufo_mobile.settings import Settings, load_settings
from ufo_mobile.shipped import task_path


class HostedRun:
    """A mobile agent opened for a host (see the module docstring)."""

    def __init__(self, live: LiveRun) -> None:
        self._live = live
        self._ended: set[int] = set()

    @property
    def agent(self) -> AgentLike:
        """The agent the host drives: the root of the run (a Manager/Executor hierarchy is nested in it)."""
        return self._live.agent

    @property
    def context(self) -> RunContext:
        """The context the host shares with the agents of its session."""
        return self._live.context

    @property
    def run_dir(self) -> Path:
        """The run's directory (``run.json``, the steps, ``report.html``)."""
        return self._live.context.run_dir

    @property
    def execution(self) -> ExecutionState:
        """Where the run is (seed 003): the agent and state running, the step, and RUNNING,
        INTERRUPTED, COMPLETED or ERROR; ``run.json`` records it as ``execution``."""
        return self._live.context.execution

    @property
    def result(self) -> RunResult | None:
        """The recorded run, once ``open_agent``'s block is left (None before)."""
        return self._live.result

    async def end_round(self, agent: AgentLike) -> dict[str, Any]:
        """Close the round ``agent`` ended: run its final state's own work once (FAIL keeps the last
        screen), append the round's outcome to ``context.results`` and return it. Called on an agent
        whose round has not ended, the outcome is FAIL ("the round did not end")."""
        context = self.context
        if id(agent) not in self._ended:
            self._ended.add(id(agent))
            self._live.final = agent
            if agent.state.is_round_end():
                await agent.handle(context)
        outcome = round_outcome(agent, context.request)
        context.results.append(outcome)
        return outcome


def round_outcome(agent: AgentLike, request: str) -> dict[str, Any]:
    """How ``agent``'s round ended, as a host records it: FINISH with the answer, or FAIL with the
    reason; ``completed`` is true for FINISH only."""
    name = agent.state.name()
    failed = agent.failed or name == MobileAgentStatus.FAIL or agent.status == MobileAgentStatus.FAIL
    status: str
    if not agent.state.is_round_end():
        status, reason = MobileAgentStatus.FAIL, agent.reason or "the round did not end"
    elif failed:
        status, reason = MobileAgentStatus.FAIL, agent.reason
    else:
        status, reason = name, agent.reason
    status = str(getattr(status, "value", status))  # a plain string in the record, whatever the agent keeps
    finished = status == MobileAgentStatus.FINISH
    return {"agent": agent.name, "request": request, "status": status, "completed": finished,
            "reason": reason if not finished else "", "result": agent.answer if finished else ""}


@asynccontextmanager
async def open_agent(settings: Settings | Path | str, *, overrides: Mapping[str, Any] | None = None,
                     device: DeviceDriver | None = None, model: ChatModel | None = None, run_id: str | None = None,
                     on_step: Callable[[StepContext], None] | None = None) -> AsyncIterator[HostedRun]:
    """A mobile agent from ``settings`` (a ``Settings``, or a task file or shipped task name such as
    ``"demo"``, and ``overrides``, as ``run`` takes them), connected and ready for the host's loop;
    recorded and closed when the block ends.

    ``device`` and ``model``: your own driver or model instead of the settings' (they stay open
    for you). ``on_step`` is called with every recorded step. A bad file raises ``ConfigError``
    before anything is written.
    """
    if not isinstance(settings, Settings):
        settings = load_settings(task_path(Path(settings)), overrides=overrides)
    session = Session(settings, device=device, model=model, run_id=run_id, on_step=on_step)
    async with session.opened() as live:
        agent = live.agent
        await connect_device(agent, live.device, live.context)
        if agent.state.name() == NONE_STATE:  # connected: the agent starts in CONTINUE, as UFO's does
            agent.set_state(agent.state.next_state(agent))
        yield HostedRun(live)
