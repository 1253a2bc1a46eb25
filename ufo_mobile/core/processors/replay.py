"""The replay agent's phases: the recorded step instead of the model, and its action checked.

- ``ReplayInteraction`` (phase 2, in place of the model): takes the next step of the trajectory,
  checks the screen against the recorded one (``ufo_mobile.replay.guard.check``) and, when it
  matches, makes the recorded action the step's action, adapted to this screen; a recorded FINISH
  ends the task with the recorded answer. What it found goes to ``steps/NNNN/replay.json``.
- ``ReplayExecution`` (phase 3): runs the action with the normal action phase (CodeAct code with
  CodeAct's), and counts it replayed when it worked.

A mismatch, an action that now fails, a step that needs a person (a takeover, an approval the
task file asks for), or a trajectory that ends without finishing: the step ends in HANDOVER (the
agent does the rest) or, without a fallback, in FAIL, with a one-line reason; the report's lines
are kept in the replay's account.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ufo_mobile.core.processors.base import Phase, PhaseResult
from ufo_mobile.core.processors.confirm import ConfirmPolicy
from ufo_mobile.core.processors.context import StepContext
from ufo_mobile.core.status import ReplayStatus
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.errors import RunWriteError
from ufo_mobile.replay.guard import Verdict, check
from ufo_mobile.replay.plan import ReplayProgress

S = ReplayStatus


def diverge(ctx: StepContext, progress: ReplayProgress, problem: str, report: Sequence[str] = ()) -> None:
    """End the replay at this step: HANDOVER to the agent, or FAIL without one."""
    recorded = progress.next_step()
    where = f"step {ctx.step}" + (f" (recorded step {recorded.step})" if recorded is not None else "")
    if progress.plan.fallback == "agent":
        ctx.status, ctx.reason = S.HANDOVER, f"replay handed over to the agent at {where}: {problem}"
        progress.end("fell back", ctx.step, ctx.reason, report)
    else:
        ctx.fail(f"replay stopped at {where}: {problem}")
        progress.end("stopped", ctx.step, ctx.reason, report)


class ReplayInteraction:
    name: ClassVar[str] = "replay"
    always: ClassVar[bool] = False

    def __init__(self, progress: ReplayProgress, *, params: Mapping[str, Sequence[str]] | None = None,
                 policy: ConfirmPolicy | None = None, writer: RunWriter | None = None) -> None:
        self.progress = progress
        self.params = dict(params or {})  # tool name -> parameter names (CodeAct calls by position)
        self.policy = policy
        self.writer = writer

    async def run(self, ctx: StepContext) -> Mapping[str, Any] | None:
        obs = ctx.observation
        assert obs is not None, "data collection must run first"
        progress, step = self.progress, self.progress.next_step()
        if step is None:
            t = progress.plan.trajectory
            diverge(ctx, progress, f"the recorded run ended here without finishing ({t.status}: {t.reason or '-'})")
            return None
        current = [obs.ui_state.get_element_info(c.index) for c in obs.ui_state.elements]
        verdict = check(step, obs.current_app.package, current, obs.screen_size, progress.threshold, self.params)
        action = verdict.action
        why = self.policy.why(action, obs.current_app.package) if action is not None and self.policy else None
        if why is not None and action is not None:  # a replay never skips an approval the task file asks for
            verdict.ok, verdict.problem = False, f"the action needs a person's approval: {why}"
            verdict.report = [f"step: recorded step {step.step} ({step.agent}): {action.render()}",
                              f"problem: {verdict.problem}"]
        self._write(ctx, step.step, verdict)
        if not verdict.ok:
            diverge(ctx, progress, verdict.problem, verdict.report)
            return None
        if step.kind == "finish":
            ctx.status, ctx.reason = S.FINISH, step.reason
            progress.position += 1
            progress.replayed += 1
            progress.end("finished", ctx.step, step.reason)
            return None
        ctx.set_actions([verdict.action] if verdict.action is not None else [])
        return None

    def _write(self, ctx: StepContext, recorded_step: int, verdict: Verdict) -> None:
        writer = self.writer if self.writer is not None else ctx.writer()
        if writer is None:
            return
        data = {"source": self.progress.plan.source, "recorded_run": self.progress.plan.trajectory.run_id,
                "recorded_step": recorded_step, **verdict.to_json()}
        try:
            writer.write_file(f"steps/{ctx.step:04d}/replay.json", data)
        except RunWriteError:
            pass  # the writer keeps the failure: the recorder fails the step with it


class ReplayExecution:
    name: ClassVar[str] = "action_execution"
    always: ClassVar[bool] = False

    def __init__(self, progress: ReplayProgress, actions: Phase, code: Phase | None = None) -> None:
        self.progress = progress
        self.actions = actions
        self.code = code  # CodeAct's phase, for recorded ``code`` steps

    async def run(self, ctx: StepContext) -> PhaseResult:
        if ctx.action is None:
            return None
        phase = self.code if ctx.action.name == "code" and self.code is not None else self.actions
        update = await phase.run(ctx)
        result = ctx.result
        if result is not None and not result.success:
            diverge(ctx, self.progress, f"the replayed action failed: {result.summary}")
            return update
        self.progress.position += 1
        self.progress.replayed += 1
        if ctx.status == S.FINISH:
            self.progress.end("finished", ctx.step, ctx.reason)
        elif ctx.status == S.FAIL:
            self.progress.end("failed", ctx.step, ctx.reason)
        return update
