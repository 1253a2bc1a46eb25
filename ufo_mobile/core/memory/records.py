"""Typed step records: what happened in a step, and how the model is told about it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ufo_mobile.core.memory.messages import ChatMessage

NOTE_CHARS = 200  # of the model's own observation, kept in the summary of an older turn
CHANGE_CHARS = 200  # of a screen change, in that summary


class ActionOutcome(BaseModel):
    """One action of a turn and what came of it (``ran`` False: the chain stopped before it)."""

    model_config = ConfigDict(frozen=True)

    action: str
    success: bool
    summary: str = ""
    ran: bool = True

    def text(self) -> str:
        if not self.ran:
            return f"{self.action} not run: {self.summary}"
        return f"{self.action} {'succeeded' if self.success else 'FAILED'}: {self.summary}"


class StepRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int
    agent: str
    observation_id: str = ""
    current_app: str = ""
    status: str
    reason: str = ""
    thought: str = ""
    observation: str = ""  # what the model said it saw (kept, cut, in the summary of older turns)
    action: dict[str, Any] | None = None  # the first action of the turn
    action_text: str = ""  # every action of the turn, rendered
    success: bool | None = None  # every action ran and succeeded
    summary: str = ""
    outcomes: list[ActionOutcome] = Field(default_factory=list)  # one per action of the turn
    subgoal: str = ""  # reasoning mode: what the manager asked this turn to do
    error: str | None = None
    raw_reply: str = ""
    timings: dict[str, float] = Field(default_factory=dict)

    def to_messages(self, change: str = "", turn: int | None = None) -> list[ChatMessage]:
        """The assistant's reply as sent, then what came of it (and of the screen: ``change``)."""
        messages: list[ChatMessage] = []
        if self.raw_reply:
            messages.append(ChatMessage(role="assistant", content=self.raw_reply, id=f"step-{self.step}-reply"))
        messages.append(ChatMessage(role="user", content=self.outcome_text(change, turn),
                                    id=f"step-{self.step}-outcome"))
        return messages

    def outcome_text(self, change: str = "", turn: int | None = None) -> str:
        """What came of the turn, as the model reads it; ``change``: what its actions did to the screen;
        ``turn``: the turn's number among the reader's own (the budget counts actions, not turns)."""
        label = f"Turn {turn if turn is not None else self.step}"
        if self.status == "TAKEOVER" and self.summary:
            return f"{label}: you asked a person to take over ({self.reason}); {self.summary}"
        if self.status == "PENDING" and self.summary:
            return f"{label}: you asked the user: {self.reason}; {self.summary}"
        if self.error:
            return f"{label} failed before acting: {self.error}"
        if self.action is None:
            return f"{label}: no action ({self.status})."
        outcomes = self.outcomes or [ActionOutcome(action=self.action_text, success=bool(self.success),
                                                   summary=self.summary)]
        if len(outcomes) == 1:
            text = f"{label}: action {outcomes[0].text()}"
        else:
            text = f"{label}: {len(outcomes)} actions:\n" + "\n".join(f"- {o.text()}" for o in outcomes)
        return text + (f"\nThen on the screen: {change}" if change else "")

    def short_text(self, change: str = "", turn: int | None = None) -> str:
        """One line for an older turn: its actions and outcome, what the model noted, what changed."""
        line = f"- turn {turn if turn is not None else self.step}: {self.action_text or self.status}"
        if self.action is not None:
            line += f" -> {'ok' if self.success else 'failed'}"
        if self.observation:
            line += f"; you saw: {cut(self.observation, NOTE_CHARS)}"
        if change:
            line += f"; then: {cut(change, CHANGE_CHARS)}"
        return line


def cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def render_history(records: Sequence[StepRecord], limit: int,
                   changes: Mapping[str, str] | None = None) -> list[ChatMessage]:
    """Messages for the last ``limit`` steps in full, with one line for each older one; ``changes``:
    what each step's actions changed on the screen, by step number."""
    if limit <= 0 or not records:
        return []
    changes = changes or {}
    kept = records[-limit:]
    older = records[: len(records) - len(kept)]
    messages: list[ChatMessage] = []
    if older:
        lines = [r.short_text(changes.get(str(r.step), ""), n) for n, r in enumerate(older, 1)]
        messages.append(ChatMessage(role="user", content="Earlier turns, in short:\n" + "\n".join(lines),
                                    id="history-summary"))
    for n, record in enumerate(kept, len(older) + 1):
        messages.extend(record.to_messages(changes.get(str(record.step), ""), n))
    return messages


def compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
