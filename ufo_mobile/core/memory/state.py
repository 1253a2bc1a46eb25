"""The shared state of a run (seed 000's fields), owned by the run context.

Fields are only changed through ``apply_update`` with the reducer named in each field's metadata
(seed 003): histories ``append_items`` (an item whose ``id`` is there already is dropped), plans,
device fields and flags ``replace_value``, counters add, messages ``add_messages`` (the same). The
step history lives here once, as typed ``step_records``; ``message_history`` holds the chat
messages a phase returns. Every field but that one is read somewhere in the package
(``tests/unit/memory/test_state.py`` checks it); a field nothing reads goes to ``RETIRED_FIELDS``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ufo_mobile.core.memory import reducers as r
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.memory.records import StepRecord


class ActionEntry(BaseModel):
    """One action as it went into the history: what was asked for and on which observation."""

    model_config = ConfigDict(frozen=True)
    id: str
    step: int
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    observation_id: str = ""


#: Fields an earlier version kept and nothing read: a ``state.json`` that has them (a run resumed, a
#: replay's carried state) still loads, without them. Each went for one reason:
#: ``instruction`` (the request is ``RunContext.request``), ``step_number`` (the step is
#: ``RunContext.step``), ``previous_formatted_device_state`` (the screen diff compares ``last_screen``),
#: ``current_activity_name`` and ``visited_packages`` (nothing shows them to the model),
#: ``focused_text`` (the text manipulator reads the observation's own),
#: ``last_thought`` (each step's thought is in its record and ``steps.jsonl``), ``answer`` (the
#: run's answer is the FINISH step's reason, ``BasicAgent.answer``; the shared copy was also set by
#: a reasoning-mode executor finishing a subgoal), ``finished`` and ``success`` (how the run ended
#: is the agent's status and ``RunContext.execution``).
RETIRED_FIELDS = frozenset({
    "platform", "progress_summary", "error_flag_plan", "last_scripter_success",
    "instruction", "step_number", "previous_formatted_device_state", "current_activity_name",
    "visited_packages", "focused_text", "last_thought", "answer", "finished", "success",
})


class SharedState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_retired(cls, data: Any) -> Any:
        if isinstance(data, dict) and not RETIRED_FIELDS.isdisjoint(data):
            return {k: v for k, v in data.items() if k not in RETIRED_FIELDS}
        return data

    # device
    formatted_device_state: Annotated[str, r.replace_value] = ""
    current_package_name: Annotated[str, r.replace_value] = ""
    # the screen's size: a replay reads it from the recorded step's state.json (replay/trajectory.py)
    width: Annotated[int, r.replace_value] = 0
    height: Annotated[int, r.replace_value] = 0
    device_date: Annotated[str, r.replace_value] = ""
    # planning (the manager's plan; the flat agent's own plan too)
    plan: Annotated[list[str], r.replace_value] = Field(default_factory=list)
    current_subgoal: Annotated[str, r.replace_value] = ""
    # action history (parallel lists, one entry per executed action; the outcomes are read by
    # ``consecutive_failures``)
    action_history: Annotated[list[ActionEntry], r.append_unique] = Field(default_factory=list)
    action_outcomes: Annotated[list[bool], r.append_items] = Field(default_factory=list)
    summary_history: Annotated[list[str], r.append_items] = Field(default_factory=list)
    # what went wrong, one entry per failed action (successes add nothing)
    error_descriptions: Annotated[list[str], r.append_items] = Field(default_factory=list)
    # the steps, as typed records (rendered into the model's history)
    step_records: Annotated[list[StepRecord], r.append_items] = Field(default_factory=list)
    # memory and history; the facts the model keeps (the reply's "remember", the remember tool) are
    # seed 000's fast memory, also updated and loaded under their older name, "memory"
    manager_memory: Annotated[list[str], r.replace_value] = Field(default_factory=list)  # bounded, deduplicated
    fast_memory: Annotated[list[str], r.append_items] = Field(default_factory=list)
    # the chat messages a phase returns (seed 003's phase results, ``processors/base.py``)
    message_history: Annotated[list[ChatMessage], r.add_messages] = Field(default_factory=list)
    # your own tools' values (seed 000): a tool's state_update merges into it, later calls read
    # ctx.shared_state.custom_variables; carried into a replay's hand-over
    custom_variables: Annotated[dict[str, Any], r.merge_dict] = Field(default_factory=dict)
    # sub-agents
    scripter_history: Annotated[list[dict[str, Any]], r.append_items] = Field(default_factory=list)
    # the step budget (limits.max_steps): actions on the phone and the final answer; the manager's
    # planning turns apart (limits.max_planner_turns)
    steps_used: Annotated[int, r.add] = 0
    planner_turns: Annotated[int, r.add] = 0
    # what the screen did after each action (by the action's step number), and the screen it is
    # compared with next (a snapshot of the last observation's controls)
    screen_changes: Annotated[dict[str, str], r.merge_dict] = Field(default_factory=dict)
    last_screen: Annotated[dict[str, Any], r.replace_value] = Field(default_factory=dict)
    # actions a person refused (or nobody could approve): they do not run again in this run
    refused_actions: Annotated[list[str], r.append_unique] = Field(default_factory=list)
    # the run stopped for a person nobody could be (a question, a takeover, an approval): why
    needs_person: Annotated[str, r.replace_value] = ""
    # the structured final answer (task.output), validated when the model gave it
    output: Annotated[Any, r.replace_value] = None
    # escalation
    err_to_manager_thresh: Annotated[int, r.replace_value] = 2

    #: older field names, still accepted by ``apply_update`` (the remember tool's ``state_update``,
    #: recorded as it is in ``steps.jsonl``, says ``memory``; so may a user's tool) and in saved states
    FIELD_ALIASES: ClassVar[dict[str, str]] = {"memory": "fast_memory"}

    @model_validator(mode="before")
    @classmethod
    def _older_names(cls, data: Any) -> Any:
        """A state saved before the facts were kept as ``fast_memory`` has them under ``memory``."""
        if isinstance(data, dict) and "memory" in data:
            data = dict(data)
            older = data.pop("memory")
            data["fast_memory"] = [*older, *data.get("fast_memory", [])] if isinstance(older, list) else older
        return data

    def consecutive_failures(self) -> int:
        """How many of the most recent actions failed in a row."""
        count = 0
        for ok in reversed(self.action_outcomes):
            if ok:
                break
            count += 1
        return count
