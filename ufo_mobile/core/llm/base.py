"""The model port: one async call from messages to text, with token usage and cost.

Usage adds up per call, per step and per run. A cost of ``None`` means *unknown* (a model with no
price in the table): it stays unknown when added to anything, so a run is never reported as
costing $0 when part of it could not be priced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ufo_mobile.core.memory.messages import ChatMessage


@dataclass(frozen=True)
class Usage:
    """Tokens, cost (USD; None: unknown) and calls of one model call, a step or a run; ``+`` adds two."""

    prompt_tokens: int = 0  # all input tokens, cached ones included (as the API counts them)
    completion_tokens: int = 0
    cached_tokens: int = 0  # the part of prompt_tokens served from the provider's prompt cache
    cost_usd: float | None = 0.0  # None: unknown
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens,
                     self.cached_tokens + other.cached_tokens, cost, self.calls + other.calls)

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """The usage as JSON-ready data (the cost rounded to six decimals)."""
        return {"prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "completion_tokens": self.completion_tokens,
                "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6), "calls": self.calls}


@dataclass(frozen=True)
class Completion:
    """One reply. ``details`` holds what a client wants recorded about the call (attempts, the
    structured-output mode used, the model the endpoint says answered, seconds)."""

    text: str
    usage: Usage = Usage()
    model: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class ChatModel(Protocol):
    """Anything that turns a conversation into the next assistant reply. A model that never looks
    at image parts may say so with a class attribute ``reads_images = False``: its pictures are then
    not encoded (the parts come with empty bytes)."""

    name: str

    async def complete(self, messages: Sequence[ChatMessage], *,
                       schema: dict[str, Any] | None = None) -> Completion:
        """Return the assistant's reply.

        Args:
            messages: the conversation, images included.
            schema: the JSON schema the reply must follow; a client may send it as structured
                output where the endpoint supports it (the reply is validated either way).

        Raises:
            LLMError: the provider failed (after its retries) or has nothing more to say.
        """
        ...


@runtime_checkable
class ManagedModel(Protocol):
    """A model that holds resources for one run (a network client, a key). The session redacts its
    secrets everywhere, binds the run's logger to it once the run directory exists, and closes it
    when the run ends (if the session built it)."""

    def secrets(self) -> list[str]:
        """The values that must never be written anywhere (an API key)."""
        ...

    def bind_logger(self, logger: Any) -> None:
        """Log retries and fallbacks to ``logger`` (the run's log) from now on."""
        ...

    async def aclose(self) -> None:
        """Release what the model holds (its network client)."""
        ...
