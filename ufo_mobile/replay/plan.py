"""What a replay follows and how far it got.

``ReplayPlan`` is what a session is asked to replay: a trajectory, where it comes from, and what
to do on a mismatch (``stop``: the run ends in FAIL with the report; ``agent``: the agent the
settings' mode builds does the rest). ``ReplayProgress`` is the replay's own account, kept by the
replay agent and read by its phases: the next step to follow, how many were replayed, and how the
replay ended; it goes into the run's result (``RunResult.replay``, ``run.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ufo_mobile.core.llm.base import Completion
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.errors import LLMError
from ufo_mobile.replay.trajectory import Trajectory, TrajectoryStep

Fallback = Literal["agent", "stop"]
Ending = Literal["", "finished", "fell back", "stopped", "failed"]


@dataclass(frozen=True)
class ReplayPlan:
    trajectory: Trajectory
    fallback: Fallback = "stop"
    source: str = ""  # "run <id>" or "cache <file>", for the account


@dataclass
class ReplayProgress:
    plan: ReplayPlan
    threshold: float
    position: int = 0  # the trajectory step to follow next
    replayed: int = 0
    ended: Ending = ""
    at_step: int | None = None  # the run's step at which the replay ended
    recorded_step: int | None = None  # ... and the recorded step it was at
    reason: str = ""
    report: list[str] = field(default_factory=list)

    def next_step(self) -> TrajectoryStep | None:
        steps = self.plan.trajectory.steps
        return steps[self.position] if self.position < len(steps) else None

    def last_replayed(self) -> TrajectoryStep | None:
        return self.plan.trajectory.steps[self.position - 1] if self.position > 0 else None

    def end(self, how: Ending, at_step: int, reason: str, report: Sequence[str] = ()) -> None:
        """Record how the replay ended (the first ending counts)."""
        if self.ended:
            return
        following = self.next_step()
        self.ended, self.at_step, self.reason, self.report = how, at_step, reason, list(report)
        self.recorded_step = following.step if following is not None else None

    def to_json(self) -> dict[str, Any]:
        t = self.plan.trajectory
        return {"source": self.plan.source, "recorded_run": t.run_id, "recorded_steps": len(t.steps),
                "replayed": self.replayed, "ended": self.ended or "failed", "at_step": self.at_step,
                "recorded_step": self.recorded_step, "fallback": self.plan.fallback, "threshold": self.threshold,
                "reason": self.reason, "report": self.report}


class NoModel:
    """The model of a replay that may not fall back: asking it is an error (it is never asked)."""

    name = "none (replay)"
    reads_images = False

    async def complete(self, messages: Sequence[ChatMessage], *,
                       schema: dict[str, Any] | None = None) -> Completion:
        raise LLMError("a replay with --fallback stop has no model to ask")
