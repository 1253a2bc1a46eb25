"""The ``limits:``, ``agent:`` and ``human:`` sections: the step budget, how the agent acts, and
which actions wait for a person's approval."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ufo_mobile.settings.strict import Strict


class LimitSettings(Strict):
    max_steps: int = Field(default=20, gt=0, description="the step budget: each action on the phone is a step, and "
                                                          "so is the final answer, in every mode")
    max_planner_turns: int | None = Field(default=None, gt=0, description="the manager's planning turns (reasoning "
                                                                          "mode); None = twice max_steps")
    max_consecutive_failures: int = Field(default=3, gt=0)
    max_repeated_actions: int = Field(default=3, gt=1)
    step_timeout_seconds: float = Field(default=120.0, gt=0)


class AgentSettings(Strict):
    history_steps: int = Field(default=6, ge=0)
    max_actions_per_turn: int = Field(default=5, ge=1, description="actions one reply may chain on one screen")
    swipe_duration_ms: int = Field(default=300, gt=0)
    max_wait_seconds: float = Field(default=10.0, gt=0)


class ConfirmSettings(Strict):
    tools: list[str] = Field(default_factory=list, description="actions that always need a person's approval")
    apps: list[str] = Field(default_factory=list, description="packages in which every action needs approval")
    when_model_asks: bool = Field(default=True, description="honour the model's own \"confirm\": true")


Unattended = Literal["refuse", "stop", "approve"]


class HumanSettings(Strict):
    timeout_seconds: float = Field(default=600.0, gt=0, description="how long to wait for a person")
    confirm: ConfirmSettings = ConfirmSettings()
    unattended: Unattended = Field(default="refuse", description="with nobody to approve (eval, batch, a host "
                                   "without an operator): refuse the action, stop the run as needing a person, "
                                   "or approve it")
