"""Phase 2: ask the model for the next step and validate its reply (one corrective re-ask)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import structlog

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.errors import LLMOutputParseError
from ufo_mobile.llm.base import ChatModel
from ufo_mobile.llm.prompt import PromptTemplates
from ufo_mobile.llm.reply import AgentReply, parse_reply
from ufo_mobile.memory.messages import ChatMessage, ContentPart, ImagePart, TextPart
from ufo_mobile.memory.records import StepRecord, render_history
from ufo_mobile.processors.context import StepContext
from ufo_mobile.states.status import MobileAgentStatus
from ufo_mobile.tools.registry import ToolRegistry


class LLMInteraction:
    name: ClassVar[str] = "llm_interaction"
    always: ClassVar[bool] = False

    def __init__(self, model: ChatModel, tools: ToolRegistry, device: DeviceDriver,
                 records: Sequence[StepRecord], *, history_steps: int = 6, vision: bool = True,
                 templates: PromptTemplates | None = None, logger: Any = None,
                 redact: Callable[[str], str] | None = None) -> None:
        self.model = model
        self.tools = tools
        self.device = device
        self.records = records
        self.history_steps = history_steps
        self.vision = vision
        self.templates = templates or PromptTemplates.load("mobile_agent")
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.llm")
        self._redact = redact  # applied to every message sent: no secret reaches the model

    def build_messages(self, ctx: StepContext) -> list[ChatMessage]:
        obs = ctx.observation
        assert obs is not None, "data collection must run first"
        width, height = obs.screen_size
        system = self.templates.render("system", width=width, height=height,
                                       actions=self.tools.get_tool_descriptions_text())
        apps = ", ".join(f"{a.label} ({a.package})" for a in obs.apps) or "unknown"
        plan = "; ".join(ctx.shared.plan) or "(none yet)"
        user = self.templates.render("user", request=ctx.request, current_app=obs.current_app.package or "?",
                                     apps=apps, plan=plan, screen=obs.ui_state.formatted_text)
        content: list[ContentPart] = [TextPart(text=user)]
        if self.vision and obs.model_image is not None:
            content.append(ImagePart(png=obs.model_image, label=f"annotated screenshot {obs.observation_id}"))
        return [ChatMessage(role="system", content=system),
                *render_history(self.records, self.history_steps),
                ChatMessage(role="user", content=content)]

    async def _ask(self, ctx: StepContext, messages: list[ChatMessage]) -> str:
        if self._redact is not None:
            messages = [m.redacted(self._redact) for m in messages]
        self._log.info("model_call", step=ctx.step, messages=len(messages))
        completion = await self.model.complete(messages)
        ctx.raw_replies.append(completion.text)
        ctx.usage = ctx.usage + completion.usage
        return completion.text

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        messages = self.build_messages(ctx)
        for attempt in (1, 2):  # the first answer, then one corrective re-ask
            ctx.messages = messages
            text = await self._ask(ctx, messages)
            try:
                return self._accept(ctx, parse_reply(text))
            except LLMOutputParseError as exc:
                ctx.parse_errors.append(str(exc))
                if attempt == 2:
                    raise LLMOutputParseError(f"the model's reply was invalid twice: {exc}", raw=text) from exc
                messages = [*messages, ChatMessage(role="assistant", content=text),
                            ChatMessage(role="user", content=self.templates.render("reask", error=str(exc)))]
        raise AssertionError("unreachable")

    def _accept(self, ctx: StepContext, reply: AgentReply) -> Mapping[str, Any]:
        ctx.reply = reply
        ctx.status = reply.status
        update: dict[str, Any] = {"last_thought": reply.thought}
        if reply.plan:
            update["plan"] = list(reply.plan)
        if reply.status == MobileAgentStatus.CONTINUE:
            ctx.action = reply.action
        else:
            ctx.reason = reply.result
            if reply.status == MobileAgentStatus.FINISH:
                update["answer"] = reply.result
        return update
