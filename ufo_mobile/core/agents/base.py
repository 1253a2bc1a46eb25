"""The agent side of the UFO state API, and what every agent's step needs, written once.

``BasicAgent`` holds an agent's state (from its own registry), its position in its own rulebook,
its status and the reason for it. It also runs a step for any agent (``run_step``): the processor
runs as a task the run can cancel (a signal, ``RunContext.interrupt``), under the step timeout;
then the step's usage is added to the run's, the limits are checked, the shared state the step
produced becomes the run's (``RunContext.shared`` is its one owner), and the status is taken over.
A flat agent, a manager, an executor or a CodeAct agent only say what a step is.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from ufo_mobile.core.agents.limits import LimitGuard, StepTimer, event_loop_timer
from ufo_mobile.core.llm.base import Usage
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.states.base import AgentState, AgentStateManager
from ufo_mobile.core.states.rulebook import AgentMachine, Rulebook
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import RunWriteError, StateMachineError
from ufo_mobile.settings import LimitSettings

if TYPE_CHECKING:
    from ufo_mobile.core.context import RunContext
    from ufo_mobile.core.memory.execution import ExecutionState
    from ufo_mobile.core.phone import Phone
    from ufo_mobile.core.processors.base import Processor


LOST_PHONE_PROBE_SECONDS = 2.0


def closing_limit(timeout: float, *, lost: bool) -> float:
    """How long the end of a run waits for the phone (the final screenshot, closing it): the command
    timeout, or one short try (at most ``LOST_PHONE_PROBE_SECONDS``) when the last step found the
    phone not answering, so that the process ends within that call's timeout plus a few seconds."""
    return min(LOST_PHONE_PROBE_SECONDS, timeout) if lost else timeout


class BasicAgent:
    """An agent: a name, a state from its own registry, a status, and the reason for it."""

    #: whose model this agent asks (``settings.models``; "agent": always ``model``) and whose usage it adds to
    model_role: ClassVar[str] = "agent"
    #: the run's execution state this agent's moves are reported to (``follow``)
    _execution: ExecutionState | None = None

    def __init__(self, name: str, state_manager: AgentStateManager, rules: Rulebook, *,
                 limits: LimitSettings | None = None, step_timer: StepTimer = event_loop_timer,
                 logger: Any = None, phone: Phone | None = None) -> None:
        self.name = name
        self.phone = phone  # the run's phone, shared by every agent of the run (None: an agent without one)
        self.state_manager = state_manager
        self.machine = AgentMachine(rules, logger=logger, agent_name=name)
        self._state: AgentState = state_manager.none_state
        self.status: str = MobileAgentStatus.CONTINUE
        self.reason: str = ""
        self.answer: str = ""  # what a FINISH answered (the request's result)
        self.run_id: str = ""
        self.step: int = 0
        self.failed = False
        self.limit_settings = limits or LimitSettings()
        self.limits = LimitGuard(self.limit_settings)
        self.limit_hit: str | None = None  # the limit the last step hit (the run must stop)
        self.step_timer = step_timer
        self.logger = logger

    @property
    def state(self) -> AgentState:
        """The agent's current state (from its own registry); ``set_state`` moves it."""
        return self._state

    def set_state(self, state: AgentState) -> None:
        """Move to ``state``; the rulebook must allow it.

        Raises:
            StateMachineError: the state does not come from this agent's registry.
            IllegalTransitionError: the rulebook has no such move.
        """
        if not self.state_manager.owns(state):
            raise StateMachineError(f"{state!r} is not a state of {type(self).__name__} {self.name!r}")
        self.machine.move(state.name(), step=self.step, reason=self.reason, run_id=self.run_id,
                          ends_round=state.is_round_end())
        self._state = state
        if state.name() == MobileAgentStatus.FAIL:
            self.failed = True

    def fail_with(self, reason: str) -> None:
        """Decide that the next state is FAIL, for ``reason``."""
        self.status = MobileAgentStatus.FAIL
        self.reason = reason

    async def handle(self, context: RunContext) -> None:
        """Do the current state's work (a step, a takeover, a confirmation, ...) in the run ``context``."""
        self.bind_run(context)
        await self.state.handle(self, context)

    def follow(self, execution: ExecutionState) -> None:
        """Report this agent's moves to the run's ``execution`` (through the machine's after-move
        hook), starting with where the agent stands now. Its first turn does it; a second call for
        the same run does nothing."""
        if self._execution is execution:
            return
        self._execution = execution
        self.machine.watch(lambda m: execution.moved(m.agent, m.dest, step=m.step, reason=m.reason,
                                                     ends_round=m.ends_round))
        execution.moved(self.name, self.state.name(), step=self.step, reason=self.reason,
                        ends_round=self.state.is_round_end())

    # --- the work of the states (each agent says what its states do) -------------------------

    async def process(self, context: RunContext) -> None:
        """Run one step (the CONTINUE state's work)."""
        raise NotImplementedError

    async def take_over(self, context: RunContext) -> None:
        """Have a person do what the model asked (the TAKEOVER state's work)."""
        raise NotImplementedError

    async def confirm(self, context: RunContext) -> None:
        """Have a person approve the pending action, then run it (the CONFIRM state's work)."""
        raise NotImplementedError

    async def ask_user(self, context: RunContext) -> None:
        """Put the model's question to the user (the PENDING state's work)."""
        raise NotImplementedError

    async def on_fail(self, context: RunContext) -> None:
        """Record the failure (the FAIL state's work). The default does nothing."""

    # --- one step, for every agent ------------------------------------------------------------

    def bind_run(self, context: RunContext) -> None:
        """Bind what belongs to the run before its steps: the phone's redactor is the run directory's
        (unless the phone was made with it), and the agent's moves are the run's execution state's
        (``follow``), also when a host drives the states itself. Binding the same run again changes
        nothing."""
        self.follow(context.execution)
        if self.phone is not None and not self.phone.redacts:
            self.phone.bind_redactor(context.writer.redactor.text)

    def new_step(self, context: RunContext) -> StepContext:
        """The next step of the run, on the run's shared state; the step carries its run (its writer
        and models by role: ``StepContext.run``)."""
        self.bind_run(context)
        context.step += 1
        context.round_step += 1
        self.step, self.run_id = context.step, context.run_id
        return StepContext(run_id=context.run_id, step=context.step, agent_name=self.name,
                           request=context.request, shared=context.shared, state=self.state.name(),
                           max_steps=self.limit_settings.max_steps, run=context)

    async def run_step(self, context: RunContext, processor: Processor, ctx: StepContext) -> None:
        """Run ``processor`` on ``ctx`` under the step timeout, cancellable by a signal; then the limits."""
        task = asyncio.ensure_future(processor.process(ctx))
        context.current_step_task, context.current_step = task, ctx
        timeout = self.limit_settings.step_timeout_seconds
        timer = self.step_timer(timeout, lambda: context.cancel_step(f"step {ctx.step} timed out after {timeout:g} s"))
        try:
            await task
        except RunWriteError as exc:  # not even the step's line could be written
            ctx.fail(str(exc))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not (task.cancelled() and ctx.status == MobileAgentStatus.FAIL
                    and (current is None or current.cancelling() == 0)):
                raise  # this coroutine itself was cancelled: not ours to absorb
        finally:
            timer.cancel()
            context.current_step_task, context.current_step = None, None
        self.after_step(context, ctx)

    def after_step(self, context: RunContext, ctx: StepContext) -> None:
        """The step's shared state, usage and status become the run's; the limits are checked. A step
        that waits for a person's approval (CONFIRM) goes on in the CONFIRM state: it is announced
        (``on_step``) when it ends, once."""
        context.shared = ctx.shared
        if not ctx.usage_counted:
            context.usage = context.usage + ctx.usage
            if ctx.model_calls:
                role = self.model_role
                context.usage_by_role[role] = context.usage_by_role.get(role, Usage()) + ctx.usage
            ctx.usage_counted = True
        context.device_lost = ctx.device_lost
        limit = self.limit_hit = self.limits.check(ctx, context.shared)
        if limit is not None:
            ctx.fail(limit)
        self.status, self.reason = ctx.status, ctx.reason
        if ctx.status == MobileAgentStatus.FINISH:
            self.answer = ctx.reason
        if context.on_step is not None and ctx.status != MobileAgentStatus.CONFIRM:
            context.on_step(ctx)
