"""The shared state of a run, with the fields of DroidRun's shared state.

Fields are only changed through ``apply_update`` with the reducer named in each field's metadata:
history lists append, plan and device fields are replaced, counters add, messages merge by id.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ufo_mobile.memory import reducers as r
from ufo_mobile.memory.messages import ChatMessage


class ActionEntry(BaseModel):
    """One action as it went into the history: what was asked for and on which observation."""

    model_config = ConfigDict(frozen=True)
    id: str
    step: int
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    observation_id: str = ""


class SharedState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # task
    instruction: Annotated[str, r.replace] = ""
    step_number: Annotated[int, r.add] = 0
    platform: Annotated[str, r.replace] = "android"
    # device
    formatted_device_state: Annotated[str, r.replace] = ""
    previous_formatted_device_state: Annotated[str, r.replace] = ""
    focused_text: Annotated[str, r.replace] = ""
    current_package_name: Annotated[str, r.replace] = ""
    current_activity_name: Annotated[str, r.replace] = ""
    visited_packages: Annotated[list[str], r.append_dedup] = Field(default_factory=list)
    width: Annotated[int, r.replace] = 0
    height: Annotated[int, r.replace] = 0
    device_date: Annotated[str, r.replace] = ""
    # planning
    plan: Annotated[list[str], r.replace] = Field(default_factory=list)
    current_subgoal: Annotated[str, r.replace] = ""
    last_thought: Annotated[str, r.replace] = ""
    progress_summary: Annotated[str, r.replace] = ""
    answer: Annotated[str, r.replace] = ""
    # action history (parallel lists, one entry per executed action)
    action_history: Annotated[list[ActionEntry], r.append_dedup] = Field(default_factory=list)
    action_outcomes: Annotated[list[bool], r.append] = Field(default_factory=list)
    summary_history: Annotated[list[str], r.append] = Field(default_factory=list)
    error_descriptions: Annotated[list[str], r.append] = Field(default_factory=list)
    # memory and history
    memory: Annotated[list[str], r.append] = Field(default_factory=list)
    message_history: Annotated[list[ChatMessage], r.add_messages] = Field(default_factory=list)
    custom_variables: Annotated[dict[str, Any], r.merge_dict] = Field(default_factory=dict)
    # outcome and escalation
    finished: Annotated[bool, r.replace] = False
    success: Annotated[bool | None, r.replace] = None
    error_flag_plan: Annotated[bool, r.replace] = False
    err_to_manager_thresh: Annotated[int, r.replace] = 2

    def consecutive_failures(self) -> int:
        """How many of the most recent actions failed in a row."""
        count = 0
        for ok in reversed(self.action_outcomes):
            if ok:
                break
            count += 1
        return count
