"""Reasoning mode: a ManagerAgent that plans over nested sub-agents, each with its own state machine.

- ``ManagerAgent`` (states CONTINUE, ASSIGN, REPLAN, FINISH, FAIL): observes, plans, and hands the
  first subgoal of its plan, through ``next_agent``, to the sub-agent for it (``assignee``): a plain
  subgoal to the ``ExecutorAgent``, a ``<script>`` item to the ``ScripterAgent``, a ``TEXT_TASK:`` item
  to the ``TextManipulatorAgent``.
- ``ExecutorAgent``: one atomic action for the subgoal (the flat agent's step with the executor's
  prompt), then hands back: FINISH when the action worked (or the subgoal was already done), FAIL
  when it did not.
- ``TextManipulatorAgent``: reads the focused field, asks the model for its new text, and types it
  over the old one.
- Escalation: the manager counts executor failures in a row, and an action repeated on a screen it
  did not change counts as one; at ``reasoning.err_to_manager_thresh`` the hand-back moves the manager
  to REPLAN, whose prompt lists the failed attempts. A limit or a signal moves it to FAIL.

All of them share the run's state through ``RunContext.shared`` and the run's ``Phone`` (``core/phone.py``):
the device, its screen cache, the tools and the redactor.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any, ClassVar

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.agents.options import DEFAULT_OPTIONS, AgentOptions
from ufo_mobile.core.agents.scripter import ScripterAgent
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.structured import load_output_spec
from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.base import Processor
from ufo_mobile.core.processors.confirm import Attendance
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.processors.llm_interaction import LLMInteraction
from ufo_mobile.core.processors.memory_update import MemoryUpdate
from ufo_mobile.core.processors.reasoning import ExecutorInteraction, ManagerInteraction, TextInteraction
from ufo_mobile.core.processors.recorder import StepRecorder
from ufo_mobile.core.states.base import AgentLike, AgentStateManager
from ufo_mobile.core.states.reasoning import MANAGER_RULES, SUBAGENT_RULES, ManagerStateManager, SubAgentStateManager
from ufo_mobile.core.states.rulebook import Rulebook
from ufo_mobile.core.status import ManagerStatus
from ufo_mobile.settings import Settings

S = ManagerStatus


class ExecutorAgent(MobileAgent):
    """The actions of one subgoal, then back to the manager."""

    model_role: ClassVar[str] = "executor"
    rules: Rulebook = SUBAGENT_RULES
    interaction_class: type[LLMInteraction] = ExecutorInteraction
    ends_task = False

    @staticmethod
    def new_state_manager() -> AgentStateManager:
        """The sub-agents' registry: a subgoal's states, then back to the manager."""
        return SubAgentStateManager()

    def __init__(self, name: str, *, parent: ManagerAgent, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)  # without "complete" (a JSON reply's tools): only the manager ends the task
        self.parent: AgentLike = parent

    def after_step(self, context: RunContext, ctx: StepContext) -> None:
        super().after_step(context, ctx)
        if self.status == S.CONTINUE:  # the action ran: the subgoal's outcome is the action's
            ok = ctx.result is not None and ctx.result.success
            self.status = S.FINISH if ok else S.FAIL
            self.reason = ctx.result.summary if ctx.result is not None else (ctx.error or "no action")

    async def hand_back(self, context: RunContext) -> None:
        """Tell the manager how the subgoal went."""
        manager = self.parent
        assert isinstance(manager, ManagerAgent)
        manager.subtask_done(context, self, ok=self.status == S.FINISH)

    async def on_fail(self, context: RunContext) -> None:
        """The executor's FAIL hands back; the final screen is the manager's to keep."""


class TextManipulatorAgent(ExecutorAgent):
    """``TEXT_TASK:`` items: the focused field's text, rewritten by the model, typed over the old."""

    model_role: ClassVar[str] = "text_manipulator"
    interaction_class: type[LLMInteraction] = TextInteraction


class ManagerAgent(BasicAgent):
    """The planner of ``mode: reasoning``: it keeps a plan and a memory, and hands each subgoal to
    the executor (an action), the text manipulator (rewriting a field's text) or the scripter (Python
    off the phone); it alone ends the task. Made with the same arguments as ``MobileAgent``."""

    model_role: ClassVar[str] = "manager"
    phone: Phone  # always one

    def __init__(self, name: str, *, phone: Phone, model: ChatModel, settings: Settings,
                 options: AgentOptions = DEFAULT_OPTIONS) -> None:
        super().__init__(name, ManagerStateManager(), MANAGER_RULES, limits=settings.limits,
                         step_timer=options.step_timer, logger=options.logger, phone=phone)
        self.settings, self.model, self.device = settings, model, phone.driver
        common: dict[str, Any] = {"phone": phone, "model": model, "settings": settings, "options": options}
        self.executor = ExecutorAgent("Executor", parent=self, **common)
        self.text_manipulator = TextManipulatorAgent("TextManipulator", parent=self, **common)
        self.scripter = ScripterAgent("Scripter", parent=self, **common)
        self.subgoal: dict[str, Any] = {}
        self.failures = 0  # executor failures in a row (escalation)
        self._last_attempt: tuple[str, str] | None = None  # (action, screen) of the last executor step
        # what a plan may ask the executor for: the JSON reply's tools (without "remember" and "complete")
        self.tools = phone.tools_without(("remember", "complete"))
        self.processor = self.planner(Attendance(options.operator is not None, settings.human.unattended))

    # --- planning ---------------------------------------------------------------------------

    def planner(self, attendance: Attendance) -> Processor:
        """Observe, plan, remember: the manager's step, made once with it."""
        s = self.settings
        p, r = s.perception, s.reasoning
        output = load_output_spec(s.task.output) if s.task.output is not None else None
        phases = (
            DataCollection(self.phone, p, logger=self.logger),
            ManagerInteraction(self.model, self.tools, vision=s.sends_screenshot("manager"),
                               image_detail=p.image_detail, logger=self.logger, redact=self.phone.redact,
                               memory_items=r.memory_items, scripter_enabled=r.scripter.enabled,
                               app_cards_dir=r.app_cards_dir, output=output,
                               attendance=attendance,
                               planner_turns=self.planner_turn_limit, role=self.model_role,
                               platform=self.phone.driver.platform),
            MemoryUpdate(),
        )
        return Processor(phases, recorder=StepRecorder(annotate=p.annotate))

    @property
    def planner_turn_limit(self) -> int:
        """``limits.max_planner_turns``, or twice the step budget."""
        limits = self.settings.limits
        return limits.max_planner_turns or 2 * limits.max_steps

    async def process(self, context: RunContext) -> None:
        if context.interrupted:
            self.fail_with(context.stop_reason)
            return
        if context.shared.planner_turns >= self.planner_turn_limit:
            self.fail_with(f"the planner used its {self.planner_turn_limit} turns (limits.max_planner_turns) "
                           "without finishing")
            return
        if self.state.name() == S.REPLAN:
            context.logger.warning("replan", failures=self.failures, step=context.step + 1)
        ctx = self.new_step(context)
        ctx.shared = apply_update(ctx.shared, {"err_to_manager_thresh": self.settings.reasoning.err_to_manager_thresh})
        await self.run_step(context, self.processor, ctx)
        self.subgoal = dict(ctx.extra.get("subgoal") or {})

    def assignee(self) -> AgentLike:
        """The sub-agent the current subgoal goes to."""
        kind = self.subgoal.get("kind", "action")
        if kind == "script":
            return self.scripter
        if kind == "text_task":
            return self.text_manipulator
        return self.executor

    # --- hand-back and escalation ------------------------------------------------------------

    def subtask_done(self, context: RunContext, agent: BasicAgent, *, ok: bool) -> None:
        """A sub-agent is done with the subgoal: count the failure (or the repeat), and choose
        the manager's next state: CONTINUE, REPLAN, or FAIL when the run must stop."""
        repeated = self._repeated(context)
        if ok and not repeated:
            self.failures = 0
        else:
            self.failures += 1
            if ok:  # the action "worked" but changed nothing, again: a failure for planning purposes
                context.shared = apply_update(context.shared, {
                    "error_descriptions": f"{agent.reason} (the same action again; the screen did not change)"})
        stop = context.stop_reason if context.interrupted else agent.limit_hit
        if stop:
            self.fail_with(stop)
        elif self.failures >= self.settings.reasoning.err_to_manager_thresh:
            self.status, self.reason = S.REPLAN, f"the executor failed {self.failures} times in a row"
        else:
            self.status, self.reason = S.CONTINUE, ""
        context.logger.info("hand_back", agent=agent.name, ok=ok, failures=self.failures, next=self.status)

    def _repeated(self, context: RunContext) -> bool:
        """Whether the last executor step repeated the one before on an unchanged screen."""
        records = [r for r in context.shared.step_records if r.agent == self.executor.name]
        if not records or records[-1].action is None:
            return False
        screen = blake2b(context.shared.formatted_device_state.encode(), digest_size=8).hexdigest()
        attempt = (records[-1].action_text, screen)
        repeated, self._last_attempt = attempt == self._last_attempt, attempt
        return repeated

    async def on_fail(self, context: RunContext) -> None:
        await self.executor.keep_final_screen(context, self.reason)

    async def ask_user(self, context: RunContext) -> None:
        """The manager's question goes to the user, as the executor's would (``MobileAgent.ask_user``)."""
        await self.executor.ask_user(context, asker=self)

    async def take_over(self, context: RunContext) -> None:  # pragma: no cover - not a manager state
        raise NotImplementedError

