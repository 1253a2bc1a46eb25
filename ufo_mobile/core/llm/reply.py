"""The reply schema every model must produce, and the parser that enforces it.

A reply is one JSON object::

    {"status": "CONTINUE" | "FINISH" | "FAIL" | "PENDING" | "TAKEOVER",
     "observation": "what is on screen",
     "thought": "why the next actions",
     "actions": [{"name": "click", "args": {"index": 3}}],  # 1 or more for CONTINUE, none otherwise
     "remember": ["a fact to keep"],
     "plan": ["remaining", "steps"],
     "result": "answer, reason or question"}              # required for every status but CONTINUE

A single ``"action": {...}`` (the earlier format, used by reply scripts) is read as a one-action
``actions``. ``remember`` may be one string. ``status`` is a top-level field and is normalised to
upper case but not checked against the known statuses here: an unknown status is the state
machine's business (it ends the run in FAIL with a reason), not a formatting error to re-ask about.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import LLMOutputParseError


class ActionCall(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    confirm: bool = Field(default=False, description="ask a person to approve this action before it runs")

    def render(self) -> str:
        """``click(index=3)``: how the action is shown in progress lines and logs."""
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.name}({inner})"


_RESULT_OF = {MobileAgentStatus.FINISH: "the answer, or what was done", MobileAgentStatus.FAIL: "why it cannot be done",
              MobileAgentStatus.PENDING: "your question for the user",
              MobileAgentStatus.TAKEOVER: "what the person should do on the phone"}


class AgentReply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    status: str = Field(min_length=1)
    observation: str = ""
    thought: str = ""
    actions: list[ActionCall] = Field(default_factory=list)
    remember: list[str] = Field(default_factory=list)
    plan: list[str] = Field(default_factory=list)
    result: str = ""

    @property
    def action(self) -> ActionCall | None:
        """The first action (the only one, in most turns)."""
        return self.actions[0] if self.actions else None

    @model_validator(mode="before")
    @classmethod
    def _one_action(cls, data: Any) -> Any:
        if isinstance(data, dict) and "action" in data:
            data = dict(data)
            one = data.pop("action")
            if data.get("actions"):
                raise ValueError("give the actions in 'actions' only")
            data["actions"] = [] if one is None else [one]
        if isinstance(data, dict) and isinstance(data.get("remember"), str):
            data = {**data, "remember": [data["remember"]] if data["remember"].strip() else []}
        return data

    @field_validator("status")
    @classmethod
    def _normalise_status(cls, value: str) -> str:
        return value.strip().upper()

    @model_validator(mode="after")
    def _check_contract(self) -> AgentReply:
        if self.status == MobileAgentStatus.CONTINUE and not self.actions:
            raise ValueError("status CONTINUE needs at least one action in 'actions'")
        if self.status == MobileAgentStatus.CONFIRM:
            raise ValueError("CONFIRM is not a status to answer with; to have an action approved by a person, "
                             "answer CONTINUE with \"confirm\": true in the action")
        what = _RESULT_OF.get(MobileAgentStatus(self.status)) if self.status in set(MobileAgentStatus) else None
        if what is not None:
            if not self.result.strip():
                raise ValueError(f"status {self.status} needs a non-empty 'result': {what}")
            if self.actions:
                raise ValueError(f"status {self.status} takes no actions: 'actions' must be empty (an action "
                                 "needs status CONTINUE, and its outcome is seen next turn)")
        return self


def extract_json_object(text: str) -> str:
    """The first balanced ``{...}`` block of ``text`` (fences and prose around it are ignored)."""
    start = text.find("{")
    if start < 0:
        raise LLMOutputParseError("the reply contains no JSON object", raw=text)
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    raise LLMOutputParseError("the JSON object in the reply is not closed", raw=text)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        loc = ".".join(str(x) for x in item["loc"]) or "reply"
        parts.append(f"{loc}: {item['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def parse_reply(text: str) -> AgentReply:
    """Parse and validate a model reply.

    Raises:
        LLMOutputParseError: not JSON, or JSON that breaks the schema; the message says what to fix.
    """
    block = extract_json_object(text)
    try:
        data = json.loads(block)
    except json.JSONDecodeError as exc:
        raise LLMOutputParseError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                                  raw=text) from exc
    if not isinstance(data, dict):
        raise LLMOutputParseError("the reply must be a JSON object", raw=text)
    try:
        return AgentReply.model_validate(data)
    except ValidationError as exc:
        raise LLMOutputParseError(_describe(exc), raw=text) from exc
