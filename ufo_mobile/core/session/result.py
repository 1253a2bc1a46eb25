"""How a run ended and what is written after it: ``RunResult`` (``run.json``'s outcome), the run
cache's account (looked up before the run, saved to after a finished one) and ``report.html``."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import structlog

from ufo_mobile.core.context import RunContext
from ufo_mobile.core.states.base import AgentLike
from ufo_mobile.core.status import NEEDS_PERSON, MobileAgentStatus
from ufo_mobile.core.trace.writer import Redactor, Thumbnail
from ufo_mobile.replay.cache import plan_from_cache, save_run
from ufo_mobile.replay.plan import ReplayPlan
from ufo_mobile.settings import Settings


@dataclass
class RunResult:
    """How one run ended: what ``Session.run`` returns, and the outcome part of ``run.json``.

    - ``run_id``: the run's name, also the name of its directory ``run_dir``.
    - ``status``: "FINISH" (the agent called the task done) or "FAIL"; ``ok`` is True for FINISH.
      A FINISH can still have ``actions_failed``; ``outcome`` says success, failed or needs_person.
    - ``reason``: why it ended, in a sentence; ``answer``: the agent's final answer (empty on FAIL);
      ``output``: that answer as structured data, when the task asks for one (``task.output``).
    - ``steps``: the recorded turns; ``steps_used``: the part of the step budget (``limits.max_steps``)
      spent, one per action on the phone and one for the final answer; ``actions_failed``: the
      actions that ran, or were refused, and did not succeed.
    - ``prompt_tokens``, ``completion_tokens``, ``cached_tokens`` (the part of the prompt served from
      the provider's cache), ``model_calls`` and ``cost_usd`` (None when a model has no known
      price), all models together; ``usage_by_role``: the same per agent role, with its model's name.
    - ``duration_seconds``: the wall-clock time of the run.
    - ``interrupted``: stopped from outside (a signal or ``RunContext.interrupt``), and ``signal``:
      the number of the signal that stopped it, if one did.
    - ``needs_person``: it stopped for a person nobody could be (a question, a takeover, an approval).
    - ``replay``: the replay's account, when the run replayed a trajectory first; ``run_cache``: the
      run cache's account, when ``replay.cache_dir`` is set.
    - ``execution``: where the run ended (the last agent, its state and the step) and how it stands
      (COMPLETED, INTERRUPTED or ERROR).
    """

    run_id: str
    status: str  # FINISH or FAIL: how the run ended
    reason: str
    answer: str
    steps: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: unknown (a model without a price)
    run_dir: Path
    duration_seconds: float
    interrupted: bool = False  # stopped from outside (a signal, or RunContext.interrupt)
    signal: int | None = None  # the signal that stopped the run, if one did
    cached_tokens: int = 0  # the part of prompt_tokens served from the provider's prompt cache
    model_calls: int = 0
    output: Any = None  # the answer as structured data, when the task asks for it (task.output)
    replay: dict[str, Any] | None = None  # the replay's account, when the run replayed a trajectory
    run_cache: dict[str, Any] | None = None  # the run cache's account, when replay.cache_dir is set
    needs_person: bool = False  # it stopped for a person nobody could be (a question, a takeover, an approval)
    steps_used: int = 0  # of the step budget: actions on the phone and the final answer
    usage_by_role: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> model, tokens, cost, calls
    execution: dict[str, Any] = field(default_factory=dict)  # where the run ended: RunContext.execution
    # actions that ran, or were refused, and did not succeed (SharedState.action_outcomes; CodeAct: a turn's code)
    actions_failed: int = 0

    @property
    def ok(self) -> bool:
        """Whether the run ended in FINISH."""
        return self.status == MobileAgentStatus.FINISH

    @property
    def outcome(self) -> str:
        """success, failed, or needs_person (a FAIL that waited for a person nobody could be)."""
        return "success" if self.ok else NEEDS_PERSON if self.needs_person else "failed"

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data (``run.json``'s fields): the path as text, the signal by
        name, and ``outcome`` added."""
        data = asdict(self)
        data["run_dir"] = str(self.run_dir)
        data["outcome"] = self.outcome
        data["signal"] = signal.Signals(self.signal).name if self.signal is not None else None
        return data


def result_of(agent: AgentLike, ctx: RunContext, started: float, *, settings: Settings,
              redactor: Redactor) -> RunResult:
    """The result of the run whose round ``agent`` ended (``started``: its ``time.monotonic()``)."""
    failed = agent.failed or agent.status == MobileAgentStatus.FAIL
    stopped = ctx.interrupted and failed and agent.reason == ctx.stop_reason
    # a structured answer was checked in the round (a mismatch is re-asked about, then fails the step)
    answer, reason, output = agent.answer, agent.reason, ctx.shared.output
    ctx.execution.end(failed=failed, reason=reason)  # a host that left early, an abandoned run
    return RunResult(
        run_id=ctx.run_id,
        status=MobileAgentStatus.FAIL if failed else MobileAgentStatus.FINISH,
        reason=redactor.text(reason),
        answer="" if failed else redactor.text(answer),
        steps=ctx.step,
        prompt_tokens=ctx.usage.prompt_tokens,
        completion_tokens=ctx.usage.completion_tokens,
        cost_usd=None if ctx.usage.cost_usd is None else round(ctx.usage.cost_usd, 6),
        run_dir=ctx.run_dir,
        duration_seconds=round(time.monotonic() - started, 3),
        interrupted=stopped,
        signal=ctx.stop_signal if stopped else None,
        cached_tokens=ctx.usage.cached_tokens,
        model_calls=ctx.usage.calls,
        output=None if failed else output,
        needs_person=failed and not stopped and bool(ctx.shared.needs_person),
        steps_used=ctx.shared.steps_used,
        usage_by_role={role: {"model": settings.model_for(role).name, **usage.to_dict()}
                       for role, usage in sorted(ctx.usage_by_role.items())},
        execution=ctx.execution.to_json(),
        actions_failed=ctx.shared.action_outcomes.count(False),
    )


def replay_plan(settings: Settings, request: str, logger: Any, *, given: ReplayPlan | None,
                resuming: bool) -> tuple[ReplayPlan | None, dict[str, Any] | None]:
    """The trajectory to replay first: the one ``given``, else (a new run, ``replay.cache_dir`` set)
    the run cache's for this task; and the cache's account (None without a cache)."""
    if settings.replay.cache_dir is None:
        return given, None
    if given is not None or resuming:
        return given, {"file": None, "hit": False, "saved": False, "note": ""}
    plan, account = plan_from_cache(settings, request)
    logger.info("replay_cache", hit=account["hit"], file=account["file"], note=account["note"])
    return plan, account


def cache_after(settings: Settings, run: dict[str, Any], result: RunResult, account: dict[str, Any],
                request: str, logger: Any) -> dict[str, Any]:
    """Save a finished run's trajectory (``run``: its ``run.json``) to the run cache (not one that
    only replayed the cache's); the cache's account."""
    if not result.ok:
        return {**account, "note": "not saved: the run did not finish"}
    if account["hit"] and result.replay is not None and result.replay["ended"] == "finished":
        return {**account, "note": "replayed from the cache to the end; the cached trajectory stands"}
    path, why = save_run(settings, request, result.run_dir, run)
    logger.info("replay_cache_saved" if path else "replay_cache_not_saved", file=str(path or ""), note=why)
    return {**account, "file": str(path) if path else account["file"], "saved": path is not None,
            "note": f"not saved: {why}" if why else ""}


async def write_report(run_dir: Path, thumbnails: Mapping[str, Thumbnail]) -> None:
    """``report.html`` for every run that ends (finished, failed, interrupted, crashed). It is
    a view of the run directory (helped by the thumbnails the run kept of its screenshots):
    when it cannot be made, the run's outcome stands."""
    from ufo_mobile.report import write_report as write_html

    try:
        await asyncio.to_thread(partial(write_html, run_dir, thumbnails=thumbnails))
    except Exception as exc:  # noqa: BLE001 - nothing about the report may change the run
        structlog.get_logger("ufo_mobile.report").warning("report_not_written", run_dir=str(run_dir),
                                                          error=repr(exc))
