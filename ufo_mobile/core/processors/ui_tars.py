"""The model phase for UI-TARS models (``model.format: ui-tars``): their prompt shape and their points.

UI-TARS (and UI-TARS-1.5) answer ``Thought: ...`` then ``Action: click(point='<point>x y</point>')``,
pointing on the screenshot they were given. This phase sends the screenshot without the numbered
marks (the model was trained on plain screenshots) and no control list, reads the reply with the
model family's own parser (the ``ui-tars`` package: its ``smart_resize``, the 28-pixel grid the
model's image processor puts the picture on, is how a point on the picture is read back), and maps
each point to a screen pixel: the parser gives the point as a fraction of the picture the model saw,
and the picture is the screen, scaled. Each action becomes one of the runtime's own (``click_at``,
``long_press_at``, ``swipe``, ``type_text``, ``open_app``, ``system_button``, ``wait``), so limits,
approvals, the record and replay work as for any run; ``finished`` is FINISH with its content as
the result, ``call_user`` asks the user (PENDING).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Mapping
from typing import Any

from ufo_mobile.core.llm.prompt import PromptTemplates, compose
from ufo_mobile.core.llm.reply import ActionCall, AgentReply
from ufo_mobile.core.memory.messages import ChatMessage, ContentPart, TextPart
from ufo_mobile.core.memory.records import StepRecord
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.llm_interaction import MEMORY_ITEMS, LLMInteraction, app_list
from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError

NAME = "ui-tars"
SCROLL_SHARE = 0.25  # a scroll moves the finger this share of the screen from the point
SWIPE_SECONDS = 0.5
WAIT_SECONDS = 2.0
_KEYS = {"press_home": "home", "press_back": "back"}


class UITarsInteraction(LLMInteraction):
    """The model phase, in the UI-TARS format (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.templates = PromptTemplates.load("ui_tars")
        self.schema = None  # a text reply: no JSON schema is sent
        self.max_actions = 2  # one action of the model's; a typed text it submits is two of ours

    def system_prompt(self, screen_size: tuple[int, int]) -> str:
        parts = self.contract_parts(flag="a call_user() asking for approval first", plain="without asking")
        main = self.templates.render("system", untrusted=parts["untrusted"], approval=parts["approval"],
                                     person=parts["person"])
        output = self.templates.render("output_schema", schema=self.output_schema) if self.output_schema else ""
        return compose([main, output])

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        memory = ctx.shared.fast_memory[-MEMORY_ITEMS:]
        width, height = obs.model_image_size or obs.screen_size
        return compose([
            self.templates.render("user", budget=ctx.budget().line(), width=width, height=height,
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
        messages = [ChatMessage(role="system", content=self.system_prompt(obs.screen_size)),
                    ChatMessage(role="user", content=self.templates.render("request", request=ctx.request))]
        if older:
            lines = [f"- turn {n}: {_action_line(r.raw_reply) or r.status} -> {'done' if r.success else 'failed'}"
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
        reply = parse_ui_tars(text, obs.model_image_size or obs.screen_size, obs.screen_size)
        for action in reply.actions:
            problem = self.tools.check_call(action.name, action.args)
            if problem is not None:
                raise LLMOutputParseError(problem, raw=text)
        if reply.status == MobileAgentStatus.FINISH and self.output is not None:
            self.output.extract(reply.result)
        return reply


def on_grid(size: tuple[int, int]) -> tuple[int, int]:
    """``size`` (width, height) brought down to the 28-pixel grid UI-TARS's image processor puts a
    picture on (``smart_resize``): sent at that size, the picture is exactly what the model sees, and
    a point on it is read back without rounding from one grid to another."""
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


def _action_line(reply: str) -> str:
    """The ``Action:`` of a reply, as the model wrote it."""
    found = re.search(r"Action:\s*(.+)", reply)
    return " ".join(found.group(1).split())[:200] if found else ""


def _outcome(record: StepRecord, turn: int, change: str) -> str:
    """What came of a turn, in the model's terms."""
    if record.status in ("PENDING", "TAKEOVER") and record.summary:
        return f"Turn {turn}: you called the user ({record.reason}); {record.summary}"
    if record.error:
        return f"Turn {turn} failed before acting: {record.error}"
    if record.action is None:
        return f"Turn {turn}: no action ({record.status})."
    failed = [o for o in record.outcomes if not o.success]
    text = f"Turn {turn}: done." if record.success else \
        f"Turn {turn}: failed: {_plain(failed[0].summary if failed else record.summary)}"
    return text + (f"\nThen on the screen: {change}" if change else "")


def _plain(summary: str) -> str:
    """A failure's reason without the control numbers this format never shows."""
    return re.sub(r"\s*\[\d+\]", "", summary)


def parse_ui_tars(text: str, picture: tuple[int, int], screen: tuple[int, int]) -> AgentReply:
    """A UI-TARS reply read by the ``ui-tars`` package, its points mapped from ``picture`` (the size
    of the screenshot the model saw) to ``screen`` (width, height in pixels).

    Raises:
        LLMOutputParseError: no action, more than one, or one this format does not have.
    """
    from ui_tars.action_parser import parse_action_to_structure_output

    if "Action:" not in text:
        raise LLMOutputParseError('no "Action:" line', raw=text)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the parser prints what it cannot read
            parsed = parse_action_to_structure_output(text, 1000, picture[1], picture[0], model_type="qwen25vl")
    except Exception as exc:  # noqa: BLE001 - whatever the parser trips on, the reply is unreadable
        raise LLMOutputParseError(f"the action could not be read: {type(exc).__name__}", raw=text) from None
    if len(parsed) != 1:
        raise LLMOutputParseError(f"{len(parsed)} actions; give exactly one", raw=text)
    thought = str(parsed[0].get("thought") or "")
    name, inputs = str(parsed[0]["action_type"]), dict(parsed[0]["action_inputs"])
    if name in ("finished", "call_user"):
        status = MobileAgentStatus.FINISH if name == "finished" else MobileAgentStatus.PENDING
        result = str(inputs.get("content", "")).strip() or (thought if name == "call_user" else "")
        return AgentReply(status=status, thought=thought, result=result)
    return AgentReply(status=MobileAgentStatus.CONTINUE, thought=thought, actions=_actions(name, inputs, screen))


def _actions(name: str, inputs: dict[str, Any], screen: tuple[int, int]) -> list[ActionCall]:
    if name == "type":  # a content ending in a new line is typed, then submitted (the enter key)
        content = str(inputs.get("content", ""))
        typed = [ActionCall(name="type_text", args={"text": content.removesuffix("\n")})]
        return typed + [ActionCall(name="system_button", args={"button": "enter"})] if content.endswith("\n") else typed
    return [_action(name, inputs, screen)]


def _action(name: str, inputs: dict[str, Any], screen: tuple[int, int]) -> ActionCall:
    if name in ("click", "long_press"):
        x, y = _point(inputs, "start_box", screen)
        return ActionCall(name="click_at" if name == "click" else "long_press_at", args={"x": x, "y": y})
    if name == "scroll":
        x, y = _point(inputs, "start_box", screen)
        direction = str(inputs.get("direction", "")).strip().lower()
        moves = {"down": (0, -1), "up": (0, 1), "right": (-1, 0), "left": (1, 0)}  # the finger's way
        if direction not in moves:
            raise LLMOutputParseError(f"scroll direction {direction!r}: one of down, up, right, left")
        dx, dy = moves[direction]
        end = (_clamp(x + dx * round(screen[0] * SCROLL_SHARE), screen[0]),
               _clamp(y + dy * round(screen[1] * SCROLL_SHARE), screen[1]))
        return ActionCall(name="swipe", args={"coordinate": [x, y], "coordinate2": list(end),
                                              "duration": SWIPE_SECONDS})
    if name in ("drag", "swipe"):
        start, end = _point(inputs, "start_box", screen), _point(inputs, "end_box", screen)
        return ActionCall(name="swipe", args={"coordinate": list(start), "coordinate2": list(end),
                                              "duration": SWIPE_SECONDS})
    if name == "open_app":
        return ActionCall(name="open_app", args={"text": str(inputs.get("app_name", "")).strip()})
    if name in _KEYS:
        return ActionCall(name="system_button", args={"button": _KEYS[name]})
    if name == "wait":
        return ActionCall(name="wait", args={"duration": WAIT_SECONDS})
    raise LLMOutputParseError(f"{name}() is not in the Action Space")


_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")


def _point(inputs: dict[str, Any], key: str, screen: tuple[int, int]) -> tuple[int, int]:
    """The point ``inputs[key]`` (fractions of the picture, as the parser gives them) in screen pixels."""
    numbers = [float(n) for n in _NUMBERS.findall(str(inputs.get(key, "")))]
    if len(numbers) not in (2, 4):
        raise LLMOutputParseError(f"a point is needed: <point>x y</point>, not {inputs.get(key)!r}")
    fx, fy = (numbers[0] + numbers[-2]) / 2, (numbers[1] + numbers[-1]) / 2
    if not (0 <= fx <= 1 and 0 <= fy <= 1):
        raise LLMOutputParseError("the point is outside the screenshot")
    return _clamp(round(fx * screen[0]), screen[0]), _clamp(round(fy * screen[1]), screen[1])


def _clamp(value: int, size: int) -> int:
    return max(0, min(size - 1, value))
