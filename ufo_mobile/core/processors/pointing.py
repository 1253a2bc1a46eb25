"""The model phase for GUI-agent models that point on the screenshot (``model.format`` other than json).

Such a model sees the screenshot without the numbered marks (it was trained on plain screenshots)
and no control list, and answers in its own format with points on the picture. The picture is sent
on the grid the model's image processor puts it on (``on_grid``), so a point on it is the same
fraction of the screen: mapped to a screen pixel exactly, for any screen size and orientation. Each
of its actions becomes one of the runtime's own (``click_at``, ``long_press_at``, ``swipe``,
``type``, ``open_app``, ``system_button``, ``wait``), so limits, approvals, the record and
replay work as for any run. The conversation is in its shape: the request first, then each earlier
turn as the model wrote it and what came of it in its own terms (no control numbers, no screen
pixels), then the screen now, the model's messages and the user's alternating. A format
(``ui_tars.py``, ``qwen_vl.py``) names its prompt templates and reads its replies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from ufo_mobile.core.llm.prompt import PromptTemplates, compose
from ufo_mobile.core.llm.reply import AgentReply
from ufo_mobile.core.memory.messages import ChatMessage, ContentPart, TextPart
from ufo_mobile.core.memory.records import StepRecord
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.llm_interaction import MEMORY_ITEMS, LLMInteraction, app_list
from ufo_mobile.errors import LLMOutputParseError

SWIPE_SECONDS = 0.5  # a swipe or drag the model asks for, and a scroll made of one
WAIT_SECONDS = 2.0  # a wait the model gives no time for


class PointingInteraction(LLMInteraction):
    """The model phase for a model that points on the screenshot (module docstring); a format names
    its templates, how an action asks for approval, and reads its replies (``parse_reply``)."""

    templates_name: ClassVar[str]
    approval_flag: ClassVar[str]
    approval_then: ClassVar[str] = ", and runs only if a person approves"
    action_pattern: ClassVar[str]  # finds, in a reply, the action as the model wrote it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.templates = PromptTemplates.load(self.templates_name)
        self.schema = None  # a text reply: no JSON schema is sent
        self.max_actions = 2  # one action of the model's; a typed text it submits is two of ours

    def system_prompt(self, screen_size: tuple[int, int]) -> str:
        parts = self.contract_parts(flag=self.approval_flag, plain="without asking", then=self.approval_then)
        main = self.templates.render("system", untrusted=parts["untrusted"], approval=parts["approval"],
                                     phone=self.phone_words,
                                     person=parts["person"], **self.system_values(screen_size))
        output = self.templates.render("output_schema", schema=self.output_schema) if self.output_schema else ""
        return compose([main, self.platform_note(), output])

    def system_values(self, picture: tuple[int, int]) -> dict[str, object]:
        """A format's own values for its system prompt (the picture's size, for one that states it there)."""
        return {}

    def picture_phrase(self, width: int, height: int) -> str:
        """What the turn's text says of the screenshot: its size, for a format that points in its pixels."""
        return f"{width} x {height} pixels"

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        memory = ctx.shared.fast_memory[-MEMORY_ITEMS:]
        width, height = obs.model_image_size or obs.screen_size
        return compose([
            self.templates.render("user", budget=ctx.budget().line(), picture=self.picture_phrase(width, height),
                                  current_app=obs.current_app.package or "?", apps=app_list(obs.apps)),
            self.templates.render("memory", memory="\n".join(f"- {m}" for m in memory)) if memory else "",
            self.templates.render("blocked") if obs.screenshot_blocked else "",
        ])

    async def conversation(self, ctx: StepContext) -> list[ChatMessage]:
        obs = ctx.observation
        if obs is not None:  # the plain screenshot, on the model's own grid: it points on what it sees
            obs.model_image_marks, obs.model_image_with_clean = False, False
            if obs.model_image_size is not None:
                obs.model_image_size = on_grid(obs.model_image_size)
        return await super().conversation(ctx)

    def build_messages(self, ctx: StepContext) -> list[ChatMessage]:
        """The request first, then each earlier turn as the model wrote it and what came of it (in its
        own terms: no control numbers, no screen pixels), then the screen now; the last turn's outcome
        and the screen now are one message."""
        obs = ctx.observation
        assert obs is not None, "data collection must run first"
        records = ctx.shared.step_records
        kept = records[-self.history_steps:] if self.history_steps > 0 else []
        older = records[: len(records) - len(kept)]
        changes = ctx.shared.screen_changes
        picture = obs.model_image_size or obs.screen_size
        messages = [ChatMessage(role="system", content=self.system_prompt(picture)),
                    ChatMessage(role="user", content=self.templates.render("request", request=ctx.request))]
        if older:
            lines = [f"- turn {n}: {self.action_line(r.raw_reply) or r.status} -> {'done' if r.success else 'failed'}"
                     for n, r in enumerate(older, 1)]
            messages.append(ChatMessage(role="user", content="Earlier turns, in short:\n" + "\n".join(lines)))
        outcome = ""
        for n, record in enumerate(kept, len(older) + 1):
            if outcome:
                messages.append(ChatMessage(role="user", content=outcome))
            if record.raw_reply:
                messages.append(ChatMessage(role="assistant", content=record.raw_reply))
            outcome = _outcome(record, n, changes.get(str(record.step), ""))
        if outcome:
            messages.append(ChatMessage(role="user", content=outcome))
        now = ChatMessage(role="user", content=[TextPart(text=self.user_text(ctx, obs)),
                                                *self.images(obs, self.model_of(ctx))])
        return _alternating([*messages, now])

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        obs = ctx.observation
        assert obs is not None, "data collection must run first"
        reply = await self.ask_until_parsed(ctx, await self.conversation(ctx), lambda text: self.read(text, obs))
        return self._accept(ctx, reply)

    def read(self, text: str, obs: Observation) -> AgentReply:
        """The reply as the runtime's: one action (its points on the screen), or a final answer."""
        return self.kept(self.parse_reply(text, obs.model_image_size or obs.screen_size, obs.screen_size), text)

    def call_problem(self, number: int, problem: str) -> str:
        # said in the reply's terms: the runtime's tool names (the list of them) mean nothing to it
        return f"that action cannot be done here ({problem.split('; available')[0]})"

    def parse_reply(self, text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
        """The format's reading of ``text``: its points mapped from ``picture`` (the size of the
        screenshot the model saw) to ``screen``."""
        raise NotImplementedError

    def action_line(self, reply: str) -> str:
        """The action of a reply, as the model wrote it (for the summary of older turns)."""
        found = re.search(self.action_pattern, reply, re.DOTALL)
        return " ".join(found.group(1).split())[:200] if found else ""


def on_grid(size: tuple[int, int]) -> tuple[int, int]:
    """``size`` (width, height) brought down to the 28-pixel grid the image processor of Qwen2.5-VL
    and the models built on it (UI-TARS-1.5, GUI-Owl) puts a picture on (``smart_resize``, from the
    ``ui-tars`` package): sent at that size, the picture is exactly what the model sees, and a point
    on it is read back without rounding from one grid to another."""
    from ui_tars.action_parser import IMAGE_FACTOR, smart_resize

    width, height = (max(IMAGE_FACTOR, side - side % IMAGE_FACTOR) for side in size)
    height, width = smart_resize(height, width)
    return width, height


def _alternating(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with each run of user messages made one (their texts in order, the pictures last):
    the model's turns and the user's alternate, as its chat template expects."""
    merged: list[ChatMessage] = []
    for message in messages:
        if merged and message.role == "user" and merged[-1].role == "user":
            before = merged.pop()
            parts = [*_parts(before), *_parts(message)]
            texts = [p for p in parts if isinstance(p, TextPart)]
            joined = TextPart(text=compose([p.text for p in texts]))
            message = ChatMessage(role="user", content=[joined, *(p for p in parts if not isinstance(p, TextPart))])
        merged.append(message)
    return merged


def _parts(message: ChatMessage) -> list[ContentPart]:
    return [TextPart(text=message.content)] if isinstance(message.content, str) else list(message.content)


def _outcome(record: StepRecord, turn: int, change: str) -> str:
    """What came of a turn, in the model's terms: the record's own words for a turn without an action
    (a question, a takeover, a failure before acting), and for an action done or why it failed, without
    the runtime's action names and coordinates."""
    if record.action is None or record.error or record.status in ("PENDING", "TAKEOVER"):
        return record.outcome_text(change, turn)
    failed = [o for o in record.outcomes if not o.success]
    text = f"Turn {turn}: done." if record.success else \
        f"Turn {turn}: failed: {_plain(failed[0].summary if failed else record.summary)}"
    return text + (f"\nThen on the screen: {change}" if change else "")


def _plain(summary: str) -> str:
    """A failure's reason without the control numbers this format never shows."""
    return re.sub(r"\s*\[\d+\]", "", summary)


def to_screen(fx: float, fy: float, screen: tuple[int, int]) -> tuple[int, int]:
    """A point given as fractions of the picture, in screen pixels (the picture is the screen, scaled).

    Raises:
        LLMOutputParseError: the point is off the picture.
    """
    if not (0 <= fx <= 1 and 0 <= fy <= 1):
        raise LLMOutputParseError("the point is outside the screenshot")
    return clamp(round(fx * screen[0]), screen[0]), clamp(round(fy * screen[1]), screen[1])


def clamp(value: int, size: int) -> int:
    return max(0, min(size - 1, value))
