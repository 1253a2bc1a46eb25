"""The phases of CodeAct mode: the model writes Python that calls the tools; the sandbox runs it.

- ``CodeActInteraction`` asks for the code (``prompts/codeact.yaml``: the tools as Python signatures,
  the step budget, the screen, the model's latest turns with what each did and changed) and takes
  one ```python block from the reply (one corrective re-ask).
- ``CodeExecution`` runs it with ``ufo_mobile.core.sandbox.run_codeact``: a separate process, only the
  tool functions and a few safe builtins in scope, no imports, no dunder names, no files, a time
  limit and a call budget. Each call of a tool in the code runs the registry's tool here, on the
  device, and the code gets its one-line summary back. Besides the tools the code has ``screen()``
  (the screen read again, as the numbered list; the numbers of later calls are that list's) and
  ``ask_user(question)``. ``complete`` ends the code and the task.

The contract is the other modes': each tool call is a step of the budget (a turn that calls none
costs one), only ``complete`` runs once only the final answer fits; a call that needs a person's
approval goes through the same gate (with a person there the code stops at it and the step waits
in CONFIRM; without, ``human.unattended`` decides); ``complete(True, ...)`` is checked against
``task.output`` (one mismatch is answered, a second ends the run). Code the policy refuses, or that
raises or overruns, is a failed action whose reason the model reads next turn: the run goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ufo_mobile.core.llm.prompt import PromptTemplates, compose
from ufo_mobile.core.llm.reply import ActionCall
from ufo_mobile.core.llm.structured import OutputSpec, StructuredOutputError
from ufo_mobile.core.llm.subagent_reply import parse_code_reply
from ufo_mobile.core.memory.records import StepRecord
from ufo_mobile.core.memory.reducers import field_name
from ufo_mobile.core.memory.state import ActionEntry, SharedState
from ufo_mobile.core.phone import Phone
from ufo_mobile.core.processors.action_execution import ActionExecution
from ufo_mobile.core.processors.confirm import (
    Attendance,
    ConfirmPolicy,
    Gate,
    needs_person,
    nobody_can_approve,
    refused_before,
    signature,
)
from ufo_mobile.core.processors.context import Observation, StepContext
from ufo_mobile.core.processors.llm_interaction import LLMInteraction, app_list
from ufo_mobile.core.sandbox import CodeRun, SandboxLimits, Stop, run_codeact
from ufo_mobile.core.sandbox.isolation import Confinement
from ufo_mobile.core.status import NEEDS_PERSON, MobileAgentStatus
from ufo_mobile.core.tools.context import ActionContext, ActionResult
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.format import screen_legend
from ufo_mobile.errors import UfoMobileError
from ufo_mobile.safe_text import cut_to
from ufo_mobile.settings import AgentSettings, CodeActSettings

SUMMARY_CHARS = 1500  # of a run's rendering, kept as the step's result for the model
GIVE_UP = "call complete(False, ...)"  # how CodeAct's code ends a task that cannot be done
FREE_CALLS = frozenset({"remember"})  # calls that are not steps (screen() and ask_user() never reach results)
FULL_TURNS = 3  # the latest turns shown with their code; older ones in one line each
EXTRA_FUNCTIONS = (
    "- screen(): The current screen, read again: the numbered list as text, in the form shown below. After it, "
    "control numbers in your calls are this list's. Not a step.\n"
    "- ask_user(question: str): Ask the user (a detail only they know); the code stops here and their "
    "answer is in your next turn.")


def python_signatures(tools: ToolRegistry) -> str:
    """The tools as the code calls them: ``- click(index: int, text: str = None): ...``, then the
    functions CodeAct adds."""
    return tools.get_tool_descriptions_text(python=True) + "\n" + EXTRA_FUNCTIONS


def describe(run: CodeRun, results: list[tuple[ActionCall, ActionResult]]) -> str:
    """What the code did, as the model reads it next turn: each call and its outcome, then the
    sandbox's own account (refusal, error, output)."""
    lines = [f"{call.render()} -> {'ok' if result.success else 'FAILED'}: {result.summary}" for call, result in results]
    tail = run.render()
    stop = next((c for c in reversed(run.calls) if c.stopped), None)
    if run.stopped and stop is not None and tail == "Stopped by a tool.":  # say where, and why, the code stopped
        said = stop.result in (None, *(r.summary for _, r in results))
        tail = "" if said else f"The code stopped at {stop.name}(): {stop.result}"
    return "\n".join([*lines, tail]).strip() or "the code ran and called nothing"


def _turn_text(record: StepRecord, changes: Mapping[str, str], turn: int) -> str:
    code = record.action.get("args", {}).get("code", "") if record.action else ""
    change = changes.get(str(record.step), "")
    body = f"```python\n{code}\n```\nWhat it did:\n{record.summary or record.error or record.status}"
    return f"Turn {turn}:\n{body}" + (f"\nThen on the screen: {change}" if change else "")


class CodeActInteraction(LLMInteraction):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("templates", PromptTemplates.load("codeact"))
        kwargs["history_steps"] = 0  # the latest turns are in the prompt, with their code
        super().__init__(*args, **kwargs)
        self.schema = None

    def system_prompt(self, screen_size: tuple[int, int]) -> str:
        t = self.templates  # screen_size is not needed: the screen's size is on the screen list's first line
        main = t.render("system", legend="\n".join(screen_legend()), phone=self.phone_words,
                        tools=python_signatures(self.tools),
                        **self.contract_parts(flag="confirm=True in its call (any function that acts takes it)"))
        output = t.render("output_schema", schema=self.output_schema) if self.output_schema else ""
        return compose([main, self.platform_note(),
                        t.render("secrets", ids=", ".join(self.secret_ids)) if self.secret_ids else "", output])

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        t, shared = self.templates, ctx.shared
        turns = [r for r in shared.step_records if r.agent == ctx.agent_name]
        full, older = turns[-FULL_TURNS:], turns[:-FULL_TURNS]
        changes, facts = shared.screen_changes, shared.fast_memory[-20:]
        history = "\n".join(r.short_text(changes.get(str(r.step), ""), n) for n, r in enumerate(older, 1))
        latest = "\n\n".join(_turn_text(r, changes, n) for n, r in enumerate(full, len(older) + 1))
        return compose([
            t.render("budget", budget=ctx.budget().line(final="call complete()")),
            t.render("memory", memory="\n".join(f"- {m}" for m in facts)) if facts else "",
            t.render("older", turns=history) if history else "",
            t.render("latest", turns=latest) if latest else "",
            t.render("user", request=ctx.request, current_app=obs.current_app.package or "?", apps=app_list(obs.apps),
                     screen=obs.ui_state.formatted_text),
            t.render("blocked") if obs.screenshot_blocked else "",
        ])

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        code = await self.ask_until_parsed(ctx, await self.conversation(ctx), parse_code_reply, what="the code reply")
        ctx.set_actions([ActionCall(name="code", args={"code": code})])
        return None


class CodeExecution(ActionExecution):
    """Phase 3 of CodeAct: the step's code, run in the sandbox, its tool calls on the device."""

    def __init__(self, tools: ToolRegistry, phone: Phone, settings: AgentSettings, codeact: CodeActSettings, *,
                 policy: ConfirmPolicy | None = None, attendance: Attendance | None = None,
                 output: OutputSpec | None = None) -> None:
        super().__init__(tools, phone, settings, policy=policy, attendance=attendance)
        self.codeact = codeact
        self.output = output
        self._mismatches = 0  # answers complete() gave that did not match task.output

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        if ctx.extra.get("confirmation") is not None:
            return await self._approved(ctx)
        if not ctx.actions or ctx.observation is None:
            return None
        obs = ctx.observation
        action_ctx = self.action_context(ctx, obs)
        params = {name: list(types) for name, types in self.tools.get_param_types().items()}
        results: list[tuple[ActionCall, ActionResult]] = []
        refused: list[str] = []
        room = ctx.budget().actions_left
        taken = [0]  # the calls that are steps: run or refused, as in the other modes (not free, not budget-stopped)

        async def call_tool(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
            kwargs = dict(kwargs)
            if name == "screen":
                return await self._screen(action_ctx, obs, len(results))
            if name == "ask_user":
                question = str((args or [kwargs.get("question", "")])[0]).strip()
                if not question:
                    return "ask_user needs a question"
                ctx.status, ctx.reason = MobileAgentStatus.PENDING, question
                return Stop("the question goes to the user; their answer is in your next turn")
            confirm = bool(kwargs.pop("confirm", False))
            call = ActionCall(name=name, args=dict(zip(params.get(name, []), args, strict=False)) | kwargs,
                              confirm=confirm)
            if name != "complete" and name not in FREE_CALLS and taken[0] >= room:
                result = ActionResult(False, "not run: only the final answer fits in the step budget now: call "
                                             "complete(success, message)")
                results.append((call, result))
                return Stop(result.summary)
            gate = self._gate(ctx, action_ctx, call, refused)
            if isinstance(gate, Stop):
                return gate
            result = gate if gate is not None else await self._execute(ctx, call, action_ctx)
            results.append((call, result))
            taken[0] += name not in FREE_CALLS
            if ctx.status == MobileAgentStatus.FAIL:
                return Stop(result.summary)
            return Stop(result.summary) if result.completion is not None else result.summary

        s = self.codeact
        limits = SandboxLimits(wall_seconds=s.wall_seconds, cpu_seconds=s.cpu_seconds, memory_mb=s.memory_mb,
                               max_tool_calls=s.max_tool_calls)
        names = [*self.tools.names(), "screen", "ask_user"]
        confinement = None if s.isolation == "auto" else Confinement(s.isolation)
        run = await run_codeact(str(ctx.actions[0].args["code"]), names, call_tool, limits, confinement)
        return self._finish(ctx, run, results, refused, taken[0])

    def _gate(self, ctx: StepContext, action_ctx: ActionContext, call: ActionCall,
              refused: list[str]) -> ActionResult | Stop | None:
        """None: the call may run. A result: it was refused (it stays refused). Stop: the code ends
        here (the step waits for a person's approval, or the run stops for one)."""
        app = ctx.observation.current_app.package if ctx.observation is not None else ""
        sig = signature(call, action_ctx.ui, app)
        verdict, why = Gate(self.policy, self.attendance).verdict(call, app, sig,
                                                                   {*ctx.shared.refused_actions, *refused})
        if verdict == "refused":  # refused stays refused: nobody is asked again
            return ActionResult(False, refused_before(GIVE_UP))
        if verdict == "run":
            return None
        if verdict == "ask":
            ctx.status = MobileAgentStatus.CONFIRM
            ctx.reason = f"{call.render()} waits for a person's approval: {why}"
            ctx.extra.update(pending_call=call.model_dump(mode="json"), confirm_why=why,
                             code_ui=action_ctx.ui, code_observation=action_ctx.observation_id)
            return Stop(f"{call.render()} waits for a person's approval; the code stops here")
        if verdict == "stop":
            reason = needs_person(call, why)
            ctx.fail(f"needs a person: {reason}")
            ctx.extra["outcome"] = NEEDS_PERSON
            ctx.extra["needs_person"] = reason
            return Stop(reason)
        refused.append(sig)
        return ActionResult(False, nobody_can_approve(why, GIVE_UP))

    async def _execute(self, ctx: StepContext, call: ActionCall, action_ctx: ActionContext) -> ActionResult:
        """Run one call of the code; ``complete(True, ...)`` is checked against ``task.output``."""
        if call.name == "complete" and self.output is not None and call.args.get("success") is True:
            try:
                self.output.extract(str(call.args.get("message", "")))
            except StructuredOutputError as exc:
                self._mismatches += 1
                if self._mismatches >= 2:
                    ctx.fail(f"the answer does not match task.output, twice: {exc}")
                return ActionResult(False, f"not done: the answer does not match task.output: {exc}; call "
                                           "complete again with an answer that matches")
        return await self.phone.act(call.name, dict(call.args), action_ctx, tools=self.tools)

    async def _screen(self, action_ctx: ActionContext, obs: Observation, calls: int) -> str:
        """``screen()``: the screen read again; the code's later calls use its numbers."""
        try:
            now = await self.state_provider.get_state(observation_id=f"{obs.observation_id}-s{calls}",
                                                      screen_size=obs.screen_size)
        except UfoMobileError as exc:
            return f"the screen could not be read: {exc}"
        action_ctx.ui, action_ctx.observation_id = now, now.observation_id
        self.device.observe(now.observation_id)
        return now.formatted_text

    def _finish(self, ctx: StepContext, run: CodeRun, results: list[tuple[ActionCall, ActionResult]],
                refused: list[str], steps: int) -> dict[str, Any]:
        """The step's result and shared-state update from the run and its calls."""
        obs = ctx.observation
        ok = run.ok and all(r.success for _, r in results)
        ctx.result = ActionResult(ok, cut_to(describe(run, results), SUMMARY_CHARS))
        ctx.extra["code_run"] = {"refused": run.refused, "error": run.error, "timed_out": run.timed_out,
                                 "calls": [{"name": c.name, "args": list(c.args), "kwargs": dict(c.kwargs),
                                            "result": c.result, "error": c.error} for c in run.calls],
                                 "seconds": round(run.duration_seconds, 3)}
        done = next((r.completion for _, r in results if r.completion is not None), None)
        if done is not None:
            if done.success:
                ctx.status, ctx.reason = MobileAgentStatus.FINISH, done.message
            else:
                ctx.fail(done.message)
        pending = ctx.status == MobileAgentStatus.CONFIRM
        update: dict[str, Any] = {
            "action_history": ActionEntry(id=f"{ctx.run_id}:{ctx.agent_name}:{ctx.step}", step=ctx.step, name="code",
                                          args={"calls": [c.name for c in run.calls]},
                                          observation_id=obs.observation_id if obs is not None else ""),
            "action_outcomes": ok, "summary_history": ctx.result.summary[:300],
            # every call that ran or was refused is a step; a turn with none costs one (one waiting for
            # approval: the action, counted when it is approved or refused)
            "steps_used": steps if steps or pending else 1}
        for _, result in results:
            if result.state_update:
                for key, value in result.state_update.items():
                    name = field_name(SharedState, key)  # the remember tool says "memory"
                    update[name] = [*update.get(name, []), value] if name == "fast_memory" else value
        if refused:
            update["refused_actions"] = refused
        if ctx.extra.get("needs_person"):
            update["needs_person"] = ctx.extra["needs_person"]
        if done is not None and done.success and self.output is not None:
            update["output"] = self.output.extract(done.message)
        if not ok:
            update["error_descriptions"] = ctx.result.summary[:300]
        if pending:
            ctx.extra["code_result"] = ctx.result.summary
        return update

    async def _approved(self, ctx: StepContext) -> Mapping[str, Any] | None:
        """The CONFIRM state's second half: the call the code stopped at runs (approved) or is
        refused, through the ordinary action phase; the step's result tells both parts."""
        pending = ActionCall.model_validate(ctx.extra["pending_call"])
        code_result = str(ctx.extra.get("code_result", ""))
        code = ctx.actions
        ctx.set_actions([pending])
        ctx.extra["pending"] = 0
        update = dict(await super().run(ctx) or {})
        ctx.set_actions(code)  # the step's record keeps the code
        if ctx.result is not None:
            ctx.result = ActionResult(ctx.result.success, cut_to(f"{code_result}\n{pending.render()} (approved) -> "
                                                                 f"{ctx.result.summary}", SUMMARY_CHARS))
        return update

    def action_context(self, ctx: StepContext, obs: Observation) -> ActionContext:
        action_ctx = super().action_context(ctx, obs)
        ui = ctx.extra.get("code_ui")
        if ui is not None and ctx.extra.get("confirmation") is not None:  # the screen the code stopped on
            action_ctx.ui, action_ctx.observation_id = ui, str(ctx.extra.get("code_observation", ui.observation_id))
        return action_ctx

