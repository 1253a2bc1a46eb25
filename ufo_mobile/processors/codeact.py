"""The phases of CodeAct mode: the model writes Python that calls the tools; the sandbox runs it.

- ``CodeActInteraction`` asks for the code (``prompts/codeact.yaml``: the tools as Python signatures,
  the screen, what the previous code did) and takes one ```python block from the reply (one
  corrective re-ask).
- ``CodeExecution`` runs it with ``ufo_mobile.sandbox.run_codeact``: a separate process, only the
  tool functions and a few safe builtins in scope, no imports, no dunder names, no files, a time
  limit and a call budget. Each call of a tool in the code runs the registry's tool here, on the
  device, and the code gets its one-line summary back; ``complete`` ends the code and the task.
  Code the policy refuses, or that raises or overruns, is a failed action whose reason the model
  reads next turn: the run goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.llm.prompt import PromptTemplates, compose
from ufo_mobile.llm.reply import ActionCall
from ufo_mobile.llm.subagent_reply import parse_code_reply
from ufo_mobile.memory.state import ActionEntry
from ufo_mobile.processors.action_execution import ActionExecution
from ufo_mobile.processors.context import Observation, StepContext
from ufo_mobile.processors.llm_interaction import LLMInteraction, app_list
from ufo_mobile.sandbox import CodeRun, SandboxLimits, Stop, run_codeact
from ufo_mobile.settings import AgentSettings, CodeActSettings
from ufo_mobile.status import MobileAgentStatus
from ufo_mobile.tools.context import ActionResult
from ufo_mobile.tools.credentials import CredentialManager
from ufo_mobile.tools.registry import ToolRegistry
from ufo_mobile.ui.cache import ControlCache
from ufo_mobile.ui.format import screen_legend
from ufo_mobile.ui.provider import StateProvider

SUMMARY_CHARS = 1500  # of a run's rendering, kept as the step's result for the model


def python_signatures(tools: ToolRegistry) -> str:
    """The tools as the code calls them: ``- click(index: int, text: str = None): ...``."""
    return tools.get_tool_descriptions_text()


def describe(run: CodeRun, results: list[ActionResult]) -> str:
    """What the code did, as the model reads it next turn: each call and its outcome, then the
    sandbox's own account (refusal, error, output)."""
    lines = [f"{call.name}(...) -> {'ok' if result.success else 'FAILED'}: {result.summary}"
             for call, result in zip(run.calls, results, strict=False)]
    return "\n".join([*lines, run.render()]).strip() or "the code ran and called nothing"


class CodeActInteraction(LLMInteraction):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("templates", PromptTemplates.load("codeact"))
        kwargs["history_steps"] = 0  # the previous code's result is in the prompt
        super().__init__(*args, **kwargs)
        self.schema = None

    def system_prompt(self, screen_size: tuple[int, int]) -> str:
        width, height = screen_size
        t = self.templates
        main = t.render("system", width=width, height=height, legend="\n".join(screen_legend()),
                        tools=python_signatures(self.tools))
        return compose([main, t.render("secrets", ids=", ".join(self.secret_ids)) if self.secret_ids else ""])

    def user_text(self, ctx: StepContext, obs: Observation) -> str:
        t, shared = self.templates, ctx.shared
        last = shared.step_records[-1] if shared.step_records else None
        return compose([
            t.render("memory", memory="\n".join(f"- {m}" for m in shared.memory[-20:])) if shared.memory else "",
            t.render("result", output=last.summary or last.error or "(nothing)") if last is not None else "",
            t.render("user", request=ctx.request, current_app=obs.current_app.package or "?", apps=app_list(obs.apps),
                     screen=obs.ui_state.formatted_text),
            t.render("blocked") if obs.screenshot_blocked else "",
        ])

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        code = await self.ask_until_parsed(ctx, await self.conversation(ctx), parse_code_reply, what="the code reply")
        ctx.action = ActionCall(name="code", args={"code": code})
        return None


class CodeExecution(ActionExecution):
    """Phase 3 of CodeAct: the step's code, run in the sandbox, its tool calls on the device."""

    def __init__(self, tools: ToolRegistry, device: DeviceDriver, cache: ControlCache, settings: AgentSettings,
                 codeact: CodeActSettings, *, state_provider: StateProvider | None = None,
                 credentials: CredentialManager | None = None) -> None:
        super().__init__(tools, device, cache, settings, state_provider=state_provider, credentials=credentials)
        self.codeact = codeact

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        if ctx.action is None or ctx.observation is None:
            return None
        obs = ctx.observation
        action_ctx = self.action_context(ctx, obs)
        params = {name: list(types) for name, types in self.tools.get_param_types().items()}
        results: list[ActionResult] = []

        async def call_tool(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
            named = dict(zip(params.get(name, []), args, strict=False)) | kwargs
            result = await self.tools.execute(name, named, action_ctx)
            results.append(result)
            return Stop(result.summary) if result.completion is not None else result.summary

        s = self.codeact
        limits = SandboxLimits(wall_seconds=s.wall_seconds, cpu_seconds=s.cpu_seconds, memory_mb=s.memory_mb,
                               max_tool_calls=s.max_tool_calls)
        run = await run_codeact(str(ctx.action.args["code"]), list(self.tools.names()), call_tool, limits)
        ok = run.ok and all(r.success for r in results)
        ctx.result = ActionResult(ok, describe(run, results)[:SUMMARY_CHARS])
        ctx.extra["code_run"] = {"refused": run.refused, "error": run.error, "timed_out": run.timed_out,
                                 "calls": [{"name": c.name, "args": list(c.args), "kwargs": dict(c.kwargs),
                                            "result": c.result, "error": c.error} for c in run.calls],
                                 "seconds": round(run.duration_seconds, 3)}
        done = next((r.completion for r in results if r.completion is not None), None)
        if done is not None:
            if done.success:
                ctx.status, ctx.reason = MobileAgentStatus.FINISH, done.message
            else:
                ctx.fail(done.message)
        update: dict[str, Any] = {
            "action_history": ActionEntry(id=f"{ctx.run_id}:{ctx.agent_name}:{ctx.step}", step=ctx.step, name="code",
                                          args={"calls": [c.name for c in run.calls]},
                                          observation_id=obs.observation_id),
            "action_outcomes": ok, "summary_history": ctx.result.summary[:300]}
        for result in results:
            if result.state_update:
                update.update(result.state_update)
        if done is not None and done.success:
            update["answer"] = done.message
        if not ok:
            update["error_descriptions"] = ctx.result.summary[:300]
        return update
