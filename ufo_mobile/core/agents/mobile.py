"""The flat MobileAgent: one four-phase processor driven by its state machine.

CONTINUE runs a step (observe, ask the model, act, remember). TAKEOVER asks a person to do what the
model asked for on the phone and waits for them; PENDING puts the model's question to the user;
CONFIRM asks a person to approve the action the step chose, then finishes the same step with it
(run, or refused for the model to read). With nobody to ask, a takeover or a question ends the run
as needing a person (``human.unattended`` decides about approvals). FAIL keeps the final screen.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from ufo_mobile.core.agents.base import BasicAgent, closing_limit
from ufo_mobile.core.agents.human import AskRequest, ConfirmRequest, PersonInTheLoop, TakeoverRequest
from ufo_mobile.core.agents.options import DEFAULT_OPTIONS, AgentOptions
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.llm.structured import OutputSpec, load_output_spec
from ufo_mobile.core.memory.records import StepRecord
from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.action_execution import ActionExecution
from ufo_mobile.core.processors.autoglm import AutoGLMInteraction
from ufo_mobile.core.processors.base import Phase, Processor
from ufo_mobile.core.processors.confirm import Attendance, ConfirmPolicy
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.processors.llm_interaction import LLMInteraction
from ufo_mobile.core.processors.memory_update import MemoryUpdate
from ufo_mobile.core.processors.qwen_vl import Qwen3VLInteraction, QwenVLInteraction
from ufo_mobile.core.processors.recorder import StepRecorder
from ufo_mobile.core.processors.ui_tars import UITarsInteraction
from ufo_mobile.core.states.base import AgentStateManager
from ufo_mobile.core.states.mobile import MobileAgentStateManager
from ufo_mobile.core.states.rulebook import MOBILE_RULES, Rulebook
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import DeviceError, RunWriteError
from ufo_mobile.settings import Settings

#: the model phase of a format that points on the screenshot (the json format's is LLMInteraction)
POINTING: dict[str, type[LLMInteraction]] = {"ui-tars": UITarsInteraction, "qwen-vl": QwenVLInteraction,
                                             "qwen3-vl": Qwen3VLInteraction, "autoglm": AutoGLMInteraction}

class MobileAgent(BasicAgent):
    """The agent of ``mode: direct``: each step it observes the phone, asks the model for the next
    action, runs it and remembers what happened, until the model ends the task or a limit does.

    ``phone`` is the run's ``Phone`` (driver, screen reader and tools), ``model`` the ``ChatModel``
    it asks, ``settings`` the run's ``Settings``; ``options`` the run-wide logger, step timer,
    person in the loop and middleware. A ``Session`` makes one (``core/agents/factory.py``); it is
    driven through its state machine (``handle``), one state's work at a time.
    """

    #: this agent's rulebook (reasoning mode's executor has its own)
    rules: Rulebook = MOBILE_RULES
    #: the model answers in the JSON reply format (CodeAct's answers are code, which calls the tools)
    json_replies: ClassVar[bool] = True
    phone: Phone  # always one

    @staticmethod
    def new_state_manager() -> AgentStateManager:
        """The registry this agent's states come from."""
        return MobileAgentStateManager()

    def __init__(self, name: str, *, phone: Phone, model: ChatModel, settings: Settings,
                 options: AgentOptions = DEFAULT_OPTIONS) -> None:
        super().__init__(name, self.new_state_manager(), self.rules, limits=settings.limits,
                         step_timer=options.step_timer, logger=options.logger, phone=phone)
        self.device = phone.driver
        self.model = model
        self.settings = settings
        self.operator = options.operator  # the person in the loop; None: nobody can take over or approve
        self.middleware = options.middleware
        # the reply's own fields keep facts ("remember") and end the task ("status")
        self.tools = phone.tools_without(("remember", "complete") if self.json_replies else ())
        self.pending: StepContext | None = None  # the step whose action waits for approval
        self.processor, self.confirm_processor = self.processors()

    def processors(self) -> tuple[Processor, Processor]:
        """The step's processor, and the one that finishes a step that waited for approval: the same
        action and memory phases, without observing or asking again. Made once, with the agent."""
        p = self.settings.perception
        phases = (DataCollection(self.phone, p, logger=self.logger), self.interaction(), self.execution(),
                  MemoryUpdate())
        recorder = StepRecorder(annotate=p.annotate)
        return (Processor(phases, recorder=recorder, middleware=self.middleware),
                Processor(phases[2:], recorder=recorder, middleware=self.middleware))

    def attendance(self) -> Attendance:
        """Whether a person can be asked in this run, and what happens to approvals when not."""
        return Attendance(self.operator is not None, self.settings.human.unattended)

    #: the model phase's class (reasoning mode's executor and text manipulator use their own)
    interaction_class: type[LLMInteraction] = LLMInteraction

    def interaction(self) -> LLMInteraction:
        """Phase 2: the model phase (the run's model for this agent's role, step by step)."""
        p = self.settings.perception
        model_settings = self.settings.model_for(self.model_role)
        kind = self.interaction_class
        if kind is LLMInteraction:  # the direct mode's model phase: in the model's own format
            kind = POINTING.get(model_settings.reply_format, LLMInteraction)
        return kind(
            self.model, self.tools, history_steps=self.settings.agent.history_steps,
            vision=self.settings.sends_screenshot(self.model_role),
            image_detail=p.image_detail, clean_screenshot=p.send_clean_screenshot,
            secret_ids=self.phone.credentials.ids(), logger=self.logger, redact=self.phone.redact,
            output=self.output_spec(), max_actions=self.settings.agent.max_actions_per_turn,
            attendance=self.attendance(), role=self.model_role, platform=self.phone.driver.platform)

    def execution(self) -> Phase:
        """Phase 3: run the chosen actions."""
        return ActionExecution(self.tools, self.phone, self.settings.agent, policy=self.confirm_policy(),
                               attendance=self.attendance())

    def output_spec(self) -> OutputSpec | None:
        """The final answer's shape, when the task asks for structured output (and this agent ends it)."""
        output = self.settings.task.output
        return load_output_spec(output) if output is not None and self.ends_task else None

    def confirm_policy(self) -> ConfirmPolicy:
        """Which actions wait for a person's approval (``human.confirm``)."""
        c = self.settings.human.confirm
        return ConfirmPolicy.of(c.tools, c.apps, c.when_model_asks)

    async def process(self, context: RunContext) -> None:
        if context.interrupted:
            self.fail_with(context.stop_reason)
            return
        await self.run_step(context, self.processor, self.new_step(context))

    async def take_over(self, context: RunContext) -> None:
        """The TAKEOVER state's work: a person does on the phone what the model asked for."""
        message, app = self.reason, context.shared.current_package_name
        person = PersonInTheLoop(self.operator, self.settings.human.timeout_seconds, context)
        answer = await person.take_over(TakeoverRequest(context.run_id, context.step, message, app))
        if isinstance(answer, str):  # nobody answered: why
            _nobody(self, context, answer)
            return
        if not answer.done:
            self.fail_with(f"the person did not take over: {answer.note or 'declined'}")
            return
        note = answer.note or "done"
        record = StepRecord(step=context.step, agent=self.name, status=MobileAgentStatus.TAKEOVER, reason=message,
                            summary=f"the person said: {note}")
        context.shared = apply_update(context.shared, {"step_records": record})
        self.phone.invalidate()  # the person changed the screen
        context.logger.info("takeover_done", step=context.step, note=note)
        self.status, self.reason = MobileAgentStatus.CONTINUE, ""

    async def ask_user(self, context: RunContext, asker: BasicAgent | None = None) -> None:
        """The PENDING state's work: the model's question (this agent's, or ``asker``'s: the manager
        asks through its executor) goes to the user; their answer is the next step's to read."""
        agent = asker or self
        question, app = agent.reason, context.shared.current_package_name
        person = PersonInTheLoop(self.operator, self.settings.human.timeout_seconds, context)
        answer = await person.ask(AskRequest(context.run_id, context.step, question, app))
        if isinstance(answer, str) or not answer.answered:
            why = answer if isinstance(answer, str) else f"needs a person: the user did not answer ({answer.text})"
            _nobody(agent, context, why)
            return
        record = StepRecord(step=context.step, agent=agent.name, status=MobileAgentStatus.PENDING, reason=question,
                            summary=f"the user answered: {answer.text}")
        context.shared = apply_update(context.shared, {"step_records": record})
        context.logger.info("question_answered", step=context.step)
        agent.status, agent.reason = MobileAgentStatus.CONTINUE, ""

    async def confirm(self, context: RunContext) -> None:
        """The CONFIRM state's work: a person approves the pending action, and the step that chose it
        goes on: the action runs (or is refused, for the model to read next turn). No step is added."""
        ctx, self.pending = self.pending, None
        actions = ctx.actions if ctx is not None else []
        index = int(ctx.extra.get("pending", 0)) if ctx is not None else 0
        if ctx is None or index >= len(actions):  # pragma: no cover - the rulebook only gets here with one
            self.fail_with("CONFIRM without an action waiting for approval")
            return
        action = actions[index]
        if ctx.extra.get("pending_call") is not None:  # CodeAct: the call the code stopped at, not the whole code
            action = ActionCall.model_validate(ctx.extra["pending_call"])
        person = PersonInTheLoop(self.operator, self.settings.human.timeout_seconds, context)
        why = str(ctx.extra.get("confirm_why", ""))
        answer = await person.confirm(ConfirmRequest(context.run_id, ctx.step, action.render(),
                                                     context.shared.current_package_name, why))
        approved, note = (False, answer) if isinstance(answer, str) else (answer.approved, answer.note)
        context.logger.info("confirmation", step=ctx.step, action=action.render(), approved=approved, note=note)
        ctx.status, ctx.reason = MobileAgentStatus.CONTINUE, ""
        ctx.extra["confirmation"] = {"approved": approved, "note": note}
        if context.interrupted:  # stopped while waiting: the step is recorded, the action refused
            ctx.fail(context.stop_reason)
        await self.run_step(context, self.confirm_processor, ctx)
    #: whether this agent's FINISH or FAIL ends the task (not so for reasoning mode's executor)
    ends_task: bool = True

    def after_step(self, context: RunContext, ctx: StepContext) -> None:
        super().after_step(context, ctx)
        if self.status == MobileAgentStatus.CONFIRM:
            self.pending = ctx

    async def on_fail(self, context: RunContext) -> None:
        """Keep the final screen and the reason; a dead device must not hide the reason."""
        await self.keep_final_screen(context, self.reason)

    async def keep_final_screen(self, context: RunContext, reason: str) -> None:
        """``final.png`` and the reason in the log, for a run that failed."""
        context.logger.warning("run_failed", step=context.step, reason=reason)
        if self.settings.perception.source == "dump":
            return  # this run takes no screenshots
        limit = closing_limit(self.settings.device.command_timeout_seconds, lost=context.device_lost)
        try:
            png = await asyncio.wait_for(self.device.screenshot(), limit)
        except (DeviceError, TimeoutError, NotImplementedError) as exc:
            context.logger.warning("final_screenshot_unavailable", error=str(exc) or f"no answer in {limit:g} s")
            return
        try:
            context.writer.write_file("final.png", png)
        except RunWriteError as exc:
            context.logger.warning("final_screenshot_not_written", error=str(exc))


def _nobody(agent: BasicAgent, context: RunContext, why: str) -> None:
    """Nobody answered a takeover or a question: the run ends, as needing a person unless it was
    stopped."""
    if not (context.interrupted and why == context.stop_reason):
        context.shared = apply_update(context.shared, {"needs_person": why})
    agent.fail_with(why)
