"""The ``limits:``, ``agent:`` and ``human:`` sections: the step budget, how the agent acts, and
which actions wait for a person's approval."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ufo_mobile.settings.strict import Strict


class LimitSettings(Strict):
    """The ``limits:`` section: when a run is stopped (FAIL with the limit named)."""

    max_steps: int = Field(default=20, gt=0, description="the step budget: each action on the phone is a step, and "
                                                          "so is the final answer, in every mode")
    max_planner_turns: int | None = Field(default=None, gt=0, description="the manager's planning turns (reasoning "
                                                                          "mode); None = twice max_steps")
    max_consecutive_failures: int = Field(default=3, gt=0, description="failed actions in a row that end the run")
    max_repeated_actions: int = Field(default=3, gt=1, description="the run ends when the same action "
                                                                   "repeats this often on an unchanged screen")
    step_timeout_seconds: float = Field(default=120.0, gt=0, description="longest one step (observe, model, act) "
                                                                         "may take before the run ends")


class AgentSettings(Strict):
    """The ``agent:`` section: what the model is shown of earlier steps, and how actions are carried out."""

    history_steps: int = Field(default=6, ge=0, description="previous steps shown to the model in full "
                                                             "(older ones in one summary line)")
    max_actions_per_turn: int = Field(default=5, ge=1, description="actions one reply may chain on one screen")
    swipe_duration_ms: int = Field(default=300, gt=0, description="how long a scroll's swipe takes")
    max_wait_seconds: float = Field(default=10.0, gt=0, description="the longest 'wait' action the model may ask for")


class ConfirmSettings(Strict):
    """``human.confirm``: the actions that wait for a person's approval before they run."""

    tools: list[str] = Field(default_factory=list, description="actions that always need a person's approval")
    apps: list[str] = Field(default_factory=list, description="packages in which every action needs approval")
    when_model_asks: bool = Field(default=True, description="honour the model's own \"confirm\": true")


Unattended = Literal["refuse", "stop", "approve"]


class HumanSettings(Strict):
    """The ``human:`` section: a person in the loop (the terminal, or a host's callback), and what
    happens when nobody is there to ask."""

    timeout_seconds: float = Field(default=600.0, gt=0, description="how long to wait for a person")
    confirm: ConfirmSettings = Field(default=ConfirmSettings(), description="which actions need approval")
    unattended: Unattended = Field(default="refuse", description="with nobody to approve (eval, batch, a host "
                                   "without an operator): refuse the action, stop the run as needing a person, "
                                   "or approve it")
