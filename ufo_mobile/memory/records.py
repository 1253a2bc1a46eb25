"""Typed step records: what happened in a step, and how the model is told about it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ufo_mobile.memory.messages import ChatMessage


class StepRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    agent: str
    observation_id: str = ""
    current_app: str = ""
    status: str
    reason: str = ""
    thought: str = ""
    action: dict[str, Any] | None = None
    action_text: str = ""
    success: bool | None = None
    summary: str = ""
    error: str | None = None
    raw_reply: str = ""
    timings: dict[str, float] = Field(default_factory=dict)

    def to_messages(self) -> list[ChatMessage]:
        """The assistant's reply as sent, then what came of it."""
        messages: list[ChatMessage] = []
        if self.raw_reply:
            messages.append(ChatMessage(role="assistant", content=self.raw_reply, id=f"step-{self.step}-reply"))
        messages.append(ChatMessage(role="user", content=self.outcome_text(), id=f"step-{self.step}-outcome"))
        return messages

    def outcome_text(self) -> str:
        if self.status == "TAKEOVER" and self.summary:
            return f"Step {self.step}: you asked a person to take over ({self.reason}); {self.summary}"
        if self.error:
            return f"Step {self.step} failed before acting: {self.error}"
        if self.action is None:
            return f"Step {self.step}: no action ({self.status})."
        verdict = "succeeded" if self.success else "FAILED"
        return f"Step {self.step}: action {self.action_text} {verdict}: {self.summary}"


def render_history(records: Sequence[StepRecord], limit: int) -> list[ChatMessage]:
    """Messages for the last ``limit`` steps, with one line standing for the older ones."""
    if limit <= 0 or not records:
        return []
    kept = records[-limit:]
    older = records[: len(records) - len(kept)]
    messages: list[ChatMessage] = []
    if older:
        lines = [f"- step {r.step}: {r.action_text or r.status} -> {'ok' if r.success else 'failed'}"
                 for r in older]
        messages.append(ChatMessage(role="user", content="Earlier steps (summarised):\n" + "\n".join(lines),
                                    id="history-summary"))
    for record in kept:
        messages.extend(record.to_messages())
    return messages


def compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
