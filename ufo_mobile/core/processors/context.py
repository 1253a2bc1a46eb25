"""The typed context of one step, filled in phase by phase, and what a step uses of its run.

The model's picture of the screen is decided and made in one place, the ``Observation``:
``fit_model_picture`` sizes it (phase 1 calls it), ``make_pictures`` makes it and the run record's
pictures (``annotated.jpg``, the report's small copies) in one go and lets the full-size pixels go
(the model phase calls it, in a worker thread, before the model is asked), holding at most one of
the process's slots for full-size pixels while it does (``ui/pixel_slots.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ufo_mobile.core.llm.base import ChatModel, Usage
from ufo_mobile.core.llm.image_tokens import fit_to_tiles
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.memory.records import ActionOutcome
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.processors.budget import StepBudget
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.settings import PerceptionSettings

if TYPE_CHECKING:
    from ufo_mobile.core.device.base import AppInfo, CurrentApp
    from ufo_mobile.core.llm.reply import ActionCall, AgentReply
    from ufo_mobile.core.memory.records import StepRecord
    from ufo_mobile.core.tools.context import ActionResult
    from ufo_mobile.core.trace.progress import Progress
    from ufo_mobile.core.trace.writer import RunWriter
    from ufo_mobile.core.ui.screen_images import ModelImage, RecordImages, ScreenImages
    from ufo_mobile.core.ui.state import UIState


class StepRun(Protocol):
    """What a step uses of the run it belongs to (``RunContext`` in ``core/context.py``): the run
    directory's writer, the model each agent role asks, and whoever watches the run live. The
    phases are made with their agent; the run comes with each step."""

    @property
    def writer(self) -> RunWriter: ...

    def model_for(self, role: str, default: ChatModel) -> ChatModel: ...

    def progress(self, event: Progress) -> None: ...


@dataclass
class Observation:
    """What the agent saw at the start of a step."""

    observation_id: str
    screenshot: bytes
    ui_state: UIState
    current_app: CurrentApp
    apps: list[AppInfo]
    screen_size: tuple[int, int]
    # the model's picture: the size it is made at (None: there is none, e.g. a secure screen), whether it
    # has the marks, whether the same without them goes too (perception.send_clean_screenshot), and the
    # factor from screen to picture pixels. It is encoded on first use (``model_image``): a model that
    # does not read pixels (a scripted one) never pays for it.
    model_image_size: tuple[int, int] | None = None
    model_image_marks: bool = True
    model_image_with_clean: bool = False
    model_image_scale: float = 1.0
    cache_hit: bool = False
    dump_attempts: int = 1
    stability: dict[str, Any] = field(default_factory=dict)
    dump_refusals: list[str] = field(default_factory=list)  # kinds of the dumps the phone refused first
    fallback: str | None = None  # "fallback_dump" or "screenshot_only" when the dumps kept being refused
    current_app_source: str = "device"  # "dump": the phone would not say, the dump's package was used
    screenshot_blocked: bool = False  # the screenshot was black (a secure screen): not sent to the model
    # the pictures of this screenshot (decoded once, marked once): the model's and the run directory's
    images: ScreenImages | None = field(default=None, repr=False)
    record_marks: bool = True  # whether the run records the marks (perception.annotate): annotated.jpg

    def fit_model_picture(self, settings: PerceptionSettings) -> None:
        """Size the model's picture: none for a black screen (FLAG_SECURE: the phone hands out black;
        ``screenshot_blocked`` says so), else the set-of-mark within ``image_longest_side`` and at most
        ``image_max_tiles`` of the model's 512 px tiles (and, if asked for, the same without the
        numbers). Decodes the screenshot for the black check, once."""
        images = self.images
        assert images is not None, "an observation is sized once it has its pictures"
        self.record_marks = settings.annotate
        if images.blank():
            self.screenshot_blocked = True
            return
        width, height = self.screen_size
        budget = settings.image_max_tiles if settings.image_max_tiles > 0 else 10**6
        size, self.model_image_scale = images.model_size(fit_to_tiles(width, height, budget,
                                                                      settings.image_longest_side))
        self.model_image_size, self.model_image_marks, self.model_image_with_clean = (
            size, settings.annotate, settings.send_clean_screenshot)

    def model_picture(self) -> ModelImage | None:
        """The model's picture (made once, then kept by ``images``), or None when there is none."""
        if self.model_image_size is None or self.images is None:
            return None
        return self.images.model_image(self.model_image_size, marks=self.model_image_marks,
                                       clean=self.model_image_with_clean)

    def record_pictures(self) -> RecordImages | None:
        """The pictures the run's record keeps of this screen (made once, then kept by ``images``)."""
        return self.images.record(annotated=self.record_marks) if self.images is not None else None

    def make_pictures(self, *, model: bool) -> None:
        """Make the model's picture (when ``model``) and the record's, then drop the full-size pixels:
        the model's wait holds none. A record picture that cannot be made is left for the recorder,
        which tries again and writes why."""
        if self.images is None:
            return
        # one working block: the screen's pixels are decoded (when they must be) once, under the
        # process's bound on screens holding full-size pixels (ui/pixel_slots.py), and let go at its end
        with self.images.working():
            try:
                if model:
                    self.model_picture()
                try:
                    self.record_pictures()
                except Exception:  # noqa: BLE001, S110 - the record never fails the step here
                    pass
            finally:
                self.images.release()

    @property
    def model_image(self) -> bytes | None:
        """The annotated screenshot at the size the model gets, as JPEG bytes."""
        picture = self.model_picture()
        return picture.data if picture is not None else None

    @property
    def model_image_clean(self) -> bytes | None:
        """The same without the numbers, when asked for."""
        picture = self.model_picture()
        return picture.clean if picture is not None else None


@dataclass
class StepContext:
    """Everything one step produced. Phases write their own fields; the recorder reads all."""

    run_id: str
    step: int
    agent_name: str
    request: str
    shared: SharedState
    state: str = MobileAgentStatus.CONTINUE  # the agent's state that ran the step
    observation: Observation | None = None
    messages: list[ChatMessage] = field(default_factory=list)
    raw_replies: list[str] = field(default_factory=list)
    parse_errors: list[str] = field(default_factory=list)
    reply: AgentReply | None = None
    action: ActionCall | None = None  # the first (usually the only) action of the turn
    actions: list[ActionCall] = field(default_factory=list)  # every action of the turn, in order
    result: ActionResult | None = None  # the turn's result (all its actions together)
    outcomes: list[ActionOutcome] = field(default_factory=list)  # one per action of the turn
    status: str = MobileAgentStatus.CONTINUE
    reason: str = ""
    error: str | None = None
    failed_phase: str | None = None
    device_lost: bool = False  # the step failed because the phone stopped answering (timed out, went away)
    timings: dict[str, float] = field(default_factory=dict)
    usage: Usage = Usage()
    model_calls: list[dict[str, Any]] = field(default_factory=list)  # usage and details of each model call
    cache: dict[str, int] = field(default_factory=dict)
    record: StepRecord | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    max_steps: int = 0  # the step budget (limits.max_steps); 0: none (a step outside a run)
    usage_counted: bool = False  # the step's usage is in the run's (a step that waited for approval goes on)
    run: StepRun | None = field(default=None, repr=False)  # the run of the step (None: a step outside a run)

    def writer(self) -> RunWriter | None:
        """The run directory's writer, when the step belongs to a run."""
        return self.run.writer if self.run is not None else None

    def __post_init__(self) -> None:
        if self.action is not None and not self.actions:  # made with one action: it is the turn's
            self.actions = [self.action]

    def budget(self) -> StepBudget:
        """The step budget as it stands at this step (``processors.budget``)."""
        return StepBudget(self.max_steps or 10**9, self.shared.steps_used)

    def set_actions(self, actions: list[ActionCall]) -> None:
        """The turn's actions (the first also as ``action``)."""
        self.actions = list(actions)
        self.action = self.actions[0] if self.actions else None

    def fail(self, reason: str) -> None:
        """End the task: the agent moves to FAIL with ``reason`` after this step."""
        self.status = MobileAgentStatus.FAIL
        self.reason = reason
