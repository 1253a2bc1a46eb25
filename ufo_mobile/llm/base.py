"""The model port: one async call from messages to text, with token usage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ufo_mobile.memory.messages import ChatMessage


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = Usage()
    model: str = ""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a conversation into the next assistant reply."""

    name: str

    async def complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """Return the assistant's reply.

        Raises:
            LLMError: the provider failed or has nothing more to say.
        """
        ...
