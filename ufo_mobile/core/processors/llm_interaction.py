"""Phase 2: ask the model for the next step and validate its reply (one corrective re-ask).

The prompt is built from packaged templates (``prompts/mobile_agent.yaml``): a system message that
is the same every step (role, screen size, how to read the screen list, the actions this device
supports, the secret ids, the reply format), the bounded history of earlier steps, and a user
message with the request, the apps, the plan and memory when there are any, the screen text and the
screenshot(s). Every message is redacted before it is sent, and the reply schema (with one entry per
available action) goes along for models that take structured output.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, TypeVar

import structlog

from ufo_mobile.core.device.base import AppInfo
from ufo_mobile.core.llm.base import ChatModel
from ufo_mobile.core.llm.prompt import PromptTemplates, compose
from ufo_mobile.core.llm.reply import AgentReply, parse_reply
from ufo_mobile.core.llm.structured import OutputSpec
from ufo_mobile.core.memory.messages import ChatMessage, ContentPart, ImagePart, TextPart
from ufo_mobile.core.memory.records import render_history
from ufo_mobile.core.processors.confirm import Attendance
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.status import MODEL_STATUSES, MobileAgentStatus
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.format import screen_legend
from ufo_mobile.errors import LLMOutputParseError

T = TypeVar("T")
MEMORY_ITEMS = 20  # the most recent facts from ``remember`` shown to the model


def reply_schema(tools: ToolRegistry, *, max_actions: int = 5, with_plan: bool = True) -> dict[str, Any]:
    """The JSON schema of a reply, in the fewest tokens that still hold its shape: the statuses,
    and each action as one of the registry's tool names with an ``args`` object (and the optional
    ``confirm`` flag that asks a person to approve it first); ``plan`` only for an agent that keeps
    one (not the executor). The arguments are not spelled out: the prompt's action list states
    them, and each action's arguments are checked when the reply is read (a wrong one is re-asked),
    so a per-tool schema would say the same again in about six times the tokens."""
    action = {"type": "object",
              "properties": {"name": {"type": "string", "enum": tools.names()}, "args": {"type": "object"},
                             "confirm": {"type": "boolean"}},
              "required": ["name", "args"], "additionalProperties": False}
    properties: dict[str, Any] = {
        "status": {"type": "string", "enum": [s.value for s in MODEL_STATUSES]},
        "observation": {"type": "string"},
        "thought": {"type": "string"},
        "actions": {"type": "array", "items": action, "maxItems": max_actions},
        "remember": {"type": "array", "items": {"type": "string"}},
        "plan": {"type": "array", "items": {"type": "string"}},
        "result": {"type": "string"},
    }
    if not with_plan:
        del properties["plan"]
    return {"type": "object", "title": "AgentReply", "properties": properties,
            "required": ["status", "thought"], "additionalProperties": False}


def app_list(apps: Sequence[AppInfo]) -> str:
    """The installed (launchable) apps, compactly: labels in order, a package only where two apps
    share a label (``open_app`` takes either)."""
    if not apps:
        return "unknown"
    counts = Counter(a.label.casefold() for a in apps)
    named = sorted({a.label if counts[a.label.casefold()] == 1 else f"{a.label} ({a.package})" for a in apps},
                   key=str.casefold)
    return ", ".join(named)


class LLMInteraction:
    name: ClassVar[str] = "llm_interaction"
    always: ClassVar[bool] = False
    #: whether the reply carries the agent's own plan (the executor's does not: the manager keeps it)
    with_plan: ClassVar[bool] = True

    def __init__(self, model: ChatModel, tools: ToolRegistry, *,
                 history_steps: int = 6, vision: bool = True, image_detail: Literal["low", "high", "auto"] = "high",
                 clean_screenshot: bool = False, secret_ids: Sequence[str] = (),
                 templates: PromptTemplates | None = None, logger: Any = None,
                 redact: Callable[[str], str] | None = None, output: OutputSpec | None = None,
                 max_actions: int = 5, attendance: Attendance | None = None, role: str | None = None,
                 platform: str = "android") -> None:
        self.model = model
        self.platform = platform  # the phone's system (``DeviceDriver.platform``): what the prompt calls it
        self.role = role  # whose model a step of a run asks (``StepContext.run``); None: always ``model``
        self.tools = tools
        self.history_steps = history_steps
        self.vision = vision
        self.image_detail = image_detail
        self.clean_screenshot = clean_screenshot
        self.secret_ids = list(secret_ids)
        self.templates = templates or PromptTemplates.load("mobile_agent")
        self.contract = PromptTemplates.load("contract")
        self.max_actions = max_actions
        self.attendance = attendance or Attendance()
        self.schema: dict[str, Any] | None = reply_schema(tools, max_actions=max_actions, with_plan=self.with_plan)
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.core.llm")
        self._redact = redact  # applied to every message sent: no secret reaches the model
        self.output = output  # the final answer's shape (task.output), if any

    @property
    def phone_words(self) -> str:
        """The phone, as the system prompt names it."""
        return "an iPhone" if self.platform == "ios" else "an Android phone"

    def platform_note(self) -> str:
        """What the model must know of the phone's system (an iPhone has no back key), or nothing."""
        return self.contract.render("iphone") if self.platform == "ios" else ""

    @property
    def output_schema(self) -> str | None:
        """The final answer's JSON schema, for the prompt."""
        return self.output.schema_text() if self.output is not None else None

    def contract_parts(self, flag: str = '"confirm": true in the action', plain: str = "unmarked",
                       then: str = ", and runs only if a person approves") -> dict[str, str]:
        """The parts of the contract every agent states alike (``prompts/contract.yaml``): ``flag`` is
        how an action asks for approval, ``plain`` how one the request approves is done, ``then`` what
        becomes of the action (nothing, for a model that cannot ask)."""
        c = self.contract
        return {"labels": c.render("labels"), "approval": c.render("approval", flag=flag, plain=plain, then=then),
                "person": self.attendance.person_text(c), "untrusted": self.untrusted_text()}

    def untrusted_text(self) -> str:
        """Whose words the screen's are (none of them instructions), and, to a model that is sent no
        screenshot, that none comes."""
        return self.contract.render("untrusted" if self.vision else "untrusted_no_screenshot")

    def system_prompt(self, screen_size: tuple[int, int]) -> str:
        """The same for every step of a run (the screen's size is on the screen list's first line), so
        a provider's prompt cache holds it; ``screen_size`` is for the planner's prompt (reasoning.py)."""
        main = self.templates.render("system", legend="\n".join(screen_legend()), phone=self.phone_words,
                                     actions=self.tools.get_tool_descriptions_text(), max_actions=self.max_actions,
                                     **self.contract_parts())
        secrets = self.templates.render("secrets", ids=", ".join(self.secret_ids)) if self.secret_ids else ""
        output = self.templates.render("output_schema", schema=self.output_schema) if self.output_schema else ""
        return compose([main, self.platform_note(), secrets, output])

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        shared = ctx.shared
        apps = app_list(obs.apps)
        memory = shared.fast_memory[-MEMORY_ITEMS:]
        return compose([
            self.templates.render("user", budget=ctx.budget().line(), request=ctx.request,
                                  current_app=obs.current_app.package or "?", apps=apps),
            self.templates.render("plan", plan="; ".join(shared.plan)) if shared.plan else "",
            self.templates.render("memory", memory="\n".join(f"- {m}" for m in memory)) if memory else "",
            self.templates.render("screen", screen=obs.ui_state.formatted_text),
            self.templates.render("blocked") if obs.screenshot_blocked else "",
        ])

    def model_of(self, ctx: StepContext) -> ChatModel:
        """The model ``ctx`` asks: its run's model for this phase's role, else the phase's own."""
        if self.role is not None and ctx.run is not None:
            return ctx.run.model_for(self.role, self.model)
        return self.model

    def reads_pixels(self, model: ChatModel) -> bool:
        """Whether the pictures are made for ``model``: vision is on and the model reads images (a
        scripted model says it does not: it gets the parts, without bytes)."""
        return self.vision and getattr(model, "reads_images", True)

    def images(self, obs: Observation, model: ChatModel | None = None) -> list[ContentPart]:
        if not self.vision or obs.model_image_size is None:
            return []
        picture = obs.model_picture() if self.reads_pixels(model or self.model) else None
        size = obs.model_image_size
        parts: list[ContentPart] = [ImagePart(data=picture.data if picture else b"", detail=self.image_detail,
                                              label=f"annotated screenshot {obs.observation_id}", size=size)]
        if self.clean_screenshot and obs.model_image_with_clean:
            parts.append(ImagePart(data=(picture.clean or b"") if picture else b"", detail=self.image_detail,
                                   label=f"screenshot {obs.observation_id}", size=size))
        return parts

    async def conversation(self, ctx: StepContext) -> list[ChatMessage]:
        """``build_messages``, after the pictures are made off the event loop: the model's when it is
        sent, and, in a run, the record's (``annotated.jpg`` and the report's small copies); then
        the screen's full-size pixels are dropped, before the model is asked."""
        obs = ctx.observation
        if obs is not None and obs.images is not None:
            model = self.reads_pixels(self.model_of(ctx)) and obs.model_image_size is not None
            if model or ctx.writer() is not None:
                await asyncio.to_thread(obs.make_pictures, model=model)
        return self.build_messages(ctx)

    def build_messages(self, ctx: StepContext) -> list[ChatMessage]:
        obs = ctx.observation
        assert obs is not None, "data collection must run first"
        content: list[ContentPart] = [TextPart(text=self.user_text(ctx, obs)), *self.images(obs, self.model_of(ctx))]
        return [ChatMessage(role="system", content=self.system_prompt(obs.screen_size)),
                *render_history(ctx.shared.step_records, self.history_steps, ctx.shared.screen_changes),
                ChatMessage(role="user", content=content)]

    async def _ask(self, ctx: StepContext, messages: list[ChatMessage]) -> str:
        if self._redact is not None:
            messages = [m.redacted(self._redact) for m in messages]
        self._log.info("model_call", step=ctx.step, messages=len(messages))
        completion = await self.model_of(ctx).complete(messages, schema=self.schema)
        ctx.raw_replies.append(completion.text)
        ctx.usage = ctx.usage + completion.usage
        ctx.model_calls.append({"model": completion.model, **completion.usage.to_dict(), **completion.details})
        return completion.text

    async def ask_until_parsed(self, ctx: StepContext, messages: list[ChatMessage], parse: Callable[[str], T], *,
                               what: str = "the model's reply") -> T:
        """Ask, and parse the answer; after a reply ``parse`` rejects, ask once more with the reason
        (the templates' ``reask``). A second bad reply raises ``LLMOutputParseError``."""
        for attempt in (1, 2):
            ctx.messages = messages
            text = await self._ask(ctx, messages)
            try:
                return parse(text)
            except LLMOutputParseError as exc:
                ctx.parse_errors.append(str(exc))
                if attempt == 2:
                    raise LLMOutputParseError(f"{what} was invalid twice: {exc}", raw=text) from exc
                messages = [*messages, ChatMessage(role="assistant", content=text),
                            ChatMessage(role="user", content=self.templates.render("reask", error=str(exc)))]
        raise AssertionError("unreachable")

    def parse(self, text: str) -> AgentReply:
        """The JSON reply ``text``, if it keeps the contract (``kept``)."""
        return self.kept(parse_reply(text), text)

    def kept(self, reply: AgentReply, text: str) -> AgentReply:
        """``reply`` (read from ``text``) if it keeps the contract: at most ``max_actions`` actions, each
        an offered action with arguments it takes (the reply schema names the actions only), and a
        FINISH whose result matches ``task.output`` when the task asks for data."""
        if len(reply.actions) > self.max_actions:
            raise LLMOutputParseError(f"{len(reply.actions)} actions in one turn; at most {self.max_actions}",
                                      raw=text)
        for number, action in enumerate(reply.actions, 1):
            problem = self.tools.check_call(action.name, action.args)
            if problem is not None:
                raise LLMOutputParseError(self.call_problem(number, problem), raw=text)
        if reply.status == MobileAgentStatus.FINISH and self.output is not None:
            self.output.extract(reply.result)  # raises StructuredOutputError, which is re-asked about
        return reply

    def call_problem(self, number: int, problem: str) -> str:
        """What the model is told of an action ``check_call`` refused (``problem``)."""
        return f"action {number}: {problem}"

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        reply = await self.ask_until_parsed(ctx, await self.conversation(ctx), self.parse)
        return self._accept(ctx, reply)

    def _accept(self, ctx: StepContext, reply: AgentReply) -> Mapping[str, Any]:
        ctx.reply = reply
        ctx.status = reply.status
        update: dict[str, Any] = {}
        facts = [" ".join(f.split()) for f in reply.remember if f.strip()]
        if facts:
            update["fast_memory"] = facts
        if reply.plan:
            update["plan"] = list(reply.plan)
        if reply.status == MobileAgentStatus.CONTINUE:
            ctx.set_actions(list(reply.actions))
            return update
        ctx.reason = reply.result
        if reply.status in (MobileAgentStatus.FINISH, MobileAgentStatus.FAIL):
            update["steps_used"] = 1  # the final answer is a step
        if reply.status == MobileAgentStatus.FINISH:
            if self.output is not None:
                update["output"] = self.output.extract(reply.result)
        return update
