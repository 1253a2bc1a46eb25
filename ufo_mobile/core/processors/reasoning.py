"""The model phases of reasoning mode, each a variant of phase 2 (``LLMInteraction``):

- ``ManagerInteraction``: the manager plans. Its prompt (``prompts/manager.yaml``) carries the
  request, the screen, the app card, its memory, its previous plan, the latest outcomes and the
  errors so far (or, in the REPLAN state, the failed attempts and the demand for another plan). Its
  reply (``<thought>``, ``<add_memory>``, ``<plan>`` or ``<request_accomplished>``) is parsed
  strictly, with one corrective re-ask. A plan sets the step's status to ASSIGN and the first item
  becomes ``current_subgoal``; a final tag ends the task (FINISH, or FAIL with the answer as reason).
- ``ExecutorInteraction``: one atomic action for the current subgoal (``prompts/executor.yaml``),
  in the flat agent's JSON reply format.
- ``TextInteraction``: the TextManipulator reads the focused field and asks for its new text; the
  step's action then types it over the old one (``type`` with ``clear``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ufo_mobile.core.llm.manager_reply import ManagerReply, parse_manager_reply, remember
from ufo_mobile.core.llm.prompt import PromptTemplates, compose
from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.llm.subagent_reply import parse_text_reply
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.llm_interaction import LLMInteraction, app_list
from ufo_mobile.core.status import ManagerStatus, MobileAgentStatus
from ufo_mobile.core.ui.format import screen_legend
from ufo_mobile.safe_text import printable

RECENT = 5  # outcomes and errors shown to the manager
CARD_CHARS = 4000  # an app card is cut to this many characters


def numbered(items: list[str]) -> str:
    return "\n".join(f"{n}. {item}" for n, item in enumerate(items, 1))


def recent_outcomes(ctx: StepContext, *, own: bool = False, limit: int = RECENT) -> str:
    """The latest step records, one line each, oldest first, with what each changed on the screen:
    the other agents' (the manager reads what its sub-agents did), or this agent's own (the executor
    reads its own actions, each with the subgoal it served)."""
    answered = MobileAgentStatus.PENDING  # a question and its answer are every agent's to read
    records = [r for r in ctx.shared.step_records
               if (r.agent == ctx.agent_name) == own or (r.status == answered and r.summary)]
    first = max(len(records) - limit, 0)
    changes = ctx.shared.screen_changes
    lines = []
    for n, r in enumerate(records[first:], first + 1):  # numbered among these turns: the budget counts actions
        line = r.outcome_text(changes.get(str(r.step), ""), n).replace("\n", "\n  ")
        lines.append(f"- {line}" + (f"\n  (for the subgoal: {r.subgoal})" if own and r.subgoal else ""))
    return "\n".join(lines)


class ManagerInteraction(LLMInteraction):
    """The manager's model phase (module docstring)."""

    def __init__(self, *args: Any, memory_items: int = 20, scripter_enabled: bool = False,
                 app_cards_dir: str | None = None, planner_turns: int = 40, **kwargs: Any) -> None:
        kwargs.setdefault("templates", PromptTemplates.load("manager"))
        kwargs["history_steps"] = 0  # the manager's prompt carries its own account of the steps
        super().__init__(*args, **kwargs)
        self.schema = None  # tags, not JSON
        self.memory_items = memory_items
        self.scripter_enabled = scripter_enabled
        self.app_cards_dir = Path(app_cards_dir) if app_cards_dir else None
        self.planner_turns = planner_turns

    def system_prompt(self, screen_size: tuple[int, int]) -> str:
        t = self.templates
        width, height = screen_size
        script = "\n" + t.render("script_item").rstrip("\n") if self.scripter_enabled else ""  # never offered when off
        return compose([t.render("system", actions=self.tools.get_tool_descriptions_text(), width=width,
                                 phone=self.phone_words,
                                 height=height, legend="\n".join(screen_legend()), script_item=script,
                                 person=self.attendance.person_text(self.contract),
                                 untrusted=self.untrusted_text()),
                        self.platform_note(),
                        t.render("output_schema", schema=self.output_schema) if self.output_schema else ""])

    def app_card(self, package: str) -> str:
        """``<app_cards_dir>/<package>.md`` when there is one (bounded)."""
        if self.app_cards_dir is None or not package:
            return ""
        path = self.app_cards_dir / f"{package}.md"
        try:
            card = path.read_text(encoding="utf-8", errors="replace")[:CARD_CHARS].strip()
        except OSError:
            return ""
        return self.templates.render("app_card", app=package, card=card) if card else ""

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        t, shared = self.templates, ctx.shared
        errors = shared.error_descriptions[-RECENT:]
        replan = ctx.state == ManagerStatus.REPLAN
        attempts = "\n".join(f"- {e}" for e in errors[-shared.err_to_manager_thresh:])
        outcomes = recent_outcomes(ctx)
        facts = shared.fast_memory[-self.memory_items:]
        return compose([
            ctx.budget().planner_line(shared.planner_turns, self.planner_turns),
            t.render("user", request=ctx.request, current_app=obs.current_app.package or "?", apps=app_list(obs.apps)),
            t.render("device_date", date=date) if (date := obs.ui_state.device_date or shared.device_date) else "",
            self.app_card(obs.current_app.package),
            t.render("memory", memory="\n".join(f"- {m}" for m in shared.manager_memory))
            if shared.manager_memory else "",
            t.render("executor_facts", facts="\n".join(f"- {m}" for m in facts)) if facts else "",
            t.render("previous_plan", plan=numbered(shared.plan)) if shared.plan else "",
            t.render("recent_actions", outcomes=outcomes) if outcomes else "",
            self._scripter_result(ctx),
            t.render("replan", failures=shared.consecutive_failures(), attempts=attempts) if replan
            else (t.render("error_history", errors="\n".join(f"- {e}" for e in errors)) if errors else ""),
            t.render("screen", screen=obs.ui_state.formatted_text),
            t.render("blocked") if obs.screenshot_blocked else "",
        ])

    def _scripter_result(self, ctx: StepContext) -> str:
        history = ctx.shared.scripter_history
        if not history or history[-1].get("step", 0) < ctx.step - 1:
            return ""
        last = history[-1]
        return self.templates.render("scripter_result", task=last.get("task", ""), status=last.get("status", ""),
                                     output=last.get("output", "") or "(nothing)")

    def parse_manager(self, text: str) -> ManagerReply:
        """A manager reply whose successful final answer matches ``task.output`` when the task asks
        for data (a mismatch is re-asked about, like a format error)."""
        reply = parse_manager_reply(text)
        if reply.final is not None and reply.final.success and self.output is not None:
            self.output.extract(reply.final.answer)
        return reply

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        reply = await self.ask_until_parsed(ctx, await self.conversation(ctx), self.parse_manager,
                                            what="the manager's reply")
        return self._plan(ctx, reply)

    def _plan(self, ctx: StepContext, reply: ManagerReply) -> Mapping[str, Any]:
        ctx.extra["manager_reply"] = reply.model_dump(mode="json")
        update: dict[str, Any] = {"planner_turns": 1,
                                  "manager_memory": remember(ctx.shared.manager_memory, reply.memory,
                                                             limit=self.memory_items)}
        if reply.question is not None:
            ctx.status, ctx.reason = MobileAgentStatus.PENDING, reply.question
            return update
        if reply.final is not None:
            update["steps_used"] = 1  # the final answer is a step
            if reply.final.success:
                ctx.status, ctx.reason = MobileAgentStatus.FINISH, reply.final.answer
                if self.output is not None:
                    update["output"] = self.output.extract(reply.final.answer)
            else:
                ctx.fail(reply.final.answer or "the manager declared the request impossible")
            return update
        assert reply.plan is not None  # the parser guarantees one of the three
        if ctx.budget().actions_left == 0:  # only the final answer fitted: the plan is not carried out
            ctx.fail(ctx.budget().limit_reason())
            return update
        ctx.status = ManagerStatus.ASSIGN
        first = reply.plan[0]
        ctx.reason = f"{first.kind}: {printable(first.text, 200)}"
        ctx.extra["subgoal"] = first.model_dump()
        update.update({"plan": [item.render() for item in reply.plan], "current_subgoal": first.text})
        return update


class ExecutorInteraction(LLMInteraction):
    """The executor's model phase: the current subgoal, its actions."""

    with_plan = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("templates", PromptTemplates.load("executor"))
        kwargs["history_steps"] = 0  # its own latest actions and the subgoal are in its prompt
        super().__init__(*args, **kwargs)

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        shared = ctx.shared
        outcomes = recent_outcomes(ctx, own=True)
        return compose([
            self.templates.render("recent_actions", outcomes=outcomes) if outcomes else "",
            self.templates.render("user", budget=ctx.budget().line(), request=ctx.request,
                                  plan=numbered(shared.plan) or "-", subgoal=shared.current_subgoal,
                                  current_app=obs.current_app.package or "?", screen=obs.ui_state.formatted_text),
            self.templates.render("blocked") if obs.screenshot_blocked else "",
        ])


class TextInteraction(LLMInteraction):
    """The TextManipulator's model phase: the focused field's new text, typed over the old."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("templates", PromptTemplates.load("text_manipulator"))
        super().__init__(*args, **kwargs)
        self.schema = None

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        obs = ctx.observation
        assert obs is not None, "data collection must run first"
        focused = obs.ui_state.phone_state.get("focused_element") or {}
        if not focused.get("editable"):
            ctx.fail("TEXT_TASK: no text field has focus (the plan must focus the field first)")
            return None
        index = focused.get("index")
        t = self.templates
        messages = [ChatMessage(role="system", content=t.render("system", phone=self.phone_words)),
                    ChatMessage(role="user", content=t.render("user", request=ctx.request,
                                                              instruction=ctx.shared.current_subgoal,
                                                              text=obs.ui_state.focused_text))]
        new_text = await self.ask_until_parsed(ctx, messages, parse_text_reply, what="the text reply")
        args: dict[str, Any] = {"text": new_text, "clear": True}
        if isinstance(index, int):
            args["index"] = index
        ctx.set_actions([ActionCall(name="type", args=args)])
        return None
