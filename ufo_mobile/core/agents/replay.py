"""The ReplayAgent: a recorded run followed again without a model, checked screen by screen.

Its CONTINUE step is the flat agent's, with the recorded step in place of the model: data
collection observes the phone as usual, ``ReplayInteraction`` checks the screen against the
recorded one and takes the recorded action (adapted to this screen), the normal action phase runs
it, and the memory phase records it; the step is on disk like any other (agent ``Replay``, no
model calls, plus ``replay.json``: the score and the controls' mapping).

Where the screen differs, the replay hands over (state HANDOVER): the agent the settings' mode
builds (``fallback``) continues from that point with the run's shared state, into which the plan
and memory the recorded run had at that point are carried (``state.json`` of the last replayed
step). Without a fallback the run ends in FAIL with the mismatch report. ``progress`` is the
replay's account: how many steps were replayed and where it ended.
"""

from __future__ import annotations

from typing import ClassVar

from ufo_mobile.core.agents.base import BasicAgent
from ufo_mobile.core.agents.mobile import MobileAgent
from ufo_mobile.core.agents.options import DEFAULT_OPTIONS, AgentOptions
from ufo_mobile.core.context import RunContext
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.scripted import ScriptedModel
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.action_execution import ActionExecution
from ufo_mobile.core.processors.base import Processor
from ufo_mobile.core.processors.codeact import CodeExecution
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.processors.data_collection import DataCollection
from ufo_mobile.core.processors.memory_update import MemoryUpdate
from ufo_mobile.core.processors.recorder import StepRecorder
from ufo_mobile.core.processors.replay import ReplayExecution, ReplayInteraction
from ufo_mobile.core.states.base import AgentLike, AgentStateManager
from ufo_mobile.core.states.replay import REPLAY_RULES, ReplayStateManager
from ufo_mobile.core.states.rulebook import Rulebook
from ufo_mobile.core.status import ReplayStatus
from ufo_mobile.replay.plan import ReplayPlan, ReplayProgress
from ufo_mobile.settings import Settings

S = ReplayStatus


class ReplayAgent(MobileAgent):
    """Follows a recorded run again step by step, without asking a model, checking each screen
    against the recorded one; on a mismatch it hands over to ``fallback`` or the run ends in FAIL."""

    rules: Rulebook = REPLAY_RULES
    json_replies: ClassVar[bool] = False  # it follows recorded calls, CodeAct's remember and complete among them

    @staticmethod
    def new_state_manager() -> AgentStateManager:
        return ReplayStateManager()

    def __init__(self, name: str = "Replay", *, plan: ReplayPlan, fallback: BasicAgent | None = None,
                 skip_scripted: bool = False, phone: Phone, model: ChatModel, settings: Settings,
                 options: AgentOptions = DEFAULT_OPTIONS) -> None:
        """``fallback``: the agent that takes over on a mismatch (None: the run stops there).
        ``skip_scripted``: a scripted model (built from the recorded run's own settings) skips the
        replies the recorded run had used up to the hand-over, as for ``run --resume``. The rest are
        ``MobileAgent``'s; the replay's progress comes first, since its processor follows it."""
        self.plan = plan
        self._fallback = fallback
        self.skip_scripted = skip_scripted
        self.progress = ReplayProgress(plan, threshold=settings.replay.threshold)
        super().__init__(name, phone=phone, model=model, settings=settings, options=options)

    @property
    def fallback(self) -> AgentLike | None:
        """The agent that takes over on a mismatch (None: the run stops there)."""
        return self._fallback

    def processors(self) -> tuple[Processor, Processor]:
        """Observe, follow the recorded step, act, remember (approvals are checked before, by the
        replay, so a replay step never waits for one: the second processor is never run)."""
        s = self.settings
        p, a = s.perception, s.agent
        actions = ActionExecution(self.tools, self.phone, a)
        code = CodeExecution(self.tools, self.phone, a, s.codeact)
        params = {name: list(types) for name, types in self.tools.get_param_types().items()}
        phases = (
            DataCollection(self.phone, p, logger=self.logger),
            ReplayInteraction(self.progress, params=params, policy=self.confirm_policy()),
            ReplayExecution(self.progress, actions, code),
            MemoryUpdate(),
        )
        recorder = StepRecorder(annotate=p.annotate)
        return (Processor(phases, recorder=recorder, middleware=self.middleware),
                Processor(phases[2:], recorder=recorder, middleware=self.middleware))

    def after_step(self, context: RunContext, ctx: StepContext) -> None:
        super().after_step(context, ctx)
        if self.status == S.FAIL:  # a limit, the device, a signal: the replay ends with the run
            self.progress.end("failed", ctx.step, self.reason)
        elif self.status == S.HANDOVER:
            context.logger.warning("replay_handover", step=ctx.step, reason=self.reason, to=self._fallback_name())

    def fail_with(self, reason: str) -> None:
        super().fail_with(reason)
        self.progress.end("failed", self.step, reason)

    async def hand_over(self, context: RunContext) -> None:
        """The HANDOVER state's work: the plan and memory the recorded run had at this point go into
        the shared state (the replayed steps' records are there already); a scripted model skips
        the replies the recorded run had used by then."""
        last = self.progress.last_replayed()
        if last is not None and last.carry:
            merged = {**context.shared.model_dump(), **last.carry}
            context.shared = SharedState.model_validate(merged)
        if self.skip_scripted and isinstance(self.model, ScriptedModel):
            self.model.skip(last.model_calls if last is not None else 0)
        self.phone.invalidate()  # the agent that takes over observes the screen afresh
        context.logger.info("replay_handed_over", step=context.step, replayed=self.progress.replayed,
                            to=self._fallback_name())

    def _fallback_name(self) -> str:
        return self._fallback.name if self._fallback is not None else ""
