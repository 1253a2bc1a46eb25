"""The chat-completions wire format: our messages and reply schema as the OpenAI API takes them,
and what we read back from its answer.

User messages keep their parts: text as ``text`` parts, each ``ImagePart`` as an ``image_url`` part
holding a base64 data URL (JPEG or PNG, as its bytes say) and its ``detail``. System and assistant
messages are sent as plain strings, the form every OpenAI-compatible server accepts; an image there
is a programming error (the API takes images from the user only).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.memory.messages import ChatMessage, ImagePart, TextPart

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def image_part(part: ImagePart) -> dict[str, Any]:
    url = f"data:{image_type(part.data)};base64," + base64.b64encode(part.data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url, "detail": part.detail}}


def image_type(data: bytes) -> str:
    """The media type of an image file's bytes, from its signature: JPEG or PNG."""
    return "image/jpeg" if data[:3] == b"\xff\xd8\xff" else "image/png"


def to_openai_message(message: ChatMessage) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": message.role, "content": message.content}
    if message.role != "user":
        if any(isinstance(p, ImagePart) for p in message.content):
            raise ValueError(f"a {message.role} message cannot carry an image; only user messages can")
        return {"role": message.role, "content": "\n".join(p.text for p in message.content
                                                           if isinstance(p, TextPart))}
    parts = [{"type": "text", "text": p.text} if isinstance(p, TextPart) else image_part(p)
             for p in message.content]
    return {"role": "user", "content": parts}


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    return [to_openai_message(m) for m in messages]


def json_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``response_format`` for ``schema``. Not strict: the reply's ``args`` is a free-form object,
    which strict mode forbids; the reply is validated by the caller either way."""
    title = schema.get("title")
    name = _NAME_CHARS.sub("_", title)[:64] if isinstance(title, str) and title else "reply"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": False}}


@dataclass(frozen=True)
class WireReply:
    """What we use of a chat completion. ``tokens`` is None when the server counted nothing usable."""

    text: str
    finish_reason: str | None
    model: str | None
    tokens: tuple[int, int, int] | None  # prompt (cached included), completion, cached


def read_reply(response: Any) -> WireReply:
    """Read a chat completion defensively: the SDK builds it without validation, so a server may
    have sent any shape. A missing or odd text is an empty reply (the caller re-asks); odd token
    counts are no counts (the cost is then unknown).

    Raises:
        ValueError: the answer is not a chat completion at all.
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise ValueError("answered with something that is not a chat completion (no 'choices' list)")
    choice = choices[0] if choices else None
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        content = getattr(message, "refusal", None)
    finish = getattr(choice, "finish_reason", None)
    model = getattr(response, "model", None)
    return WireReply(text=content if isinstance(content, str) else "",
                     finish_reason=finish if isinstance(finish, str) else None,
                     model=model if isinstance(model, str) and model else None,
                     tokens=_tokens(getattr(response, "usage", None)))


def _tokens(usage: Any) -> tuple[int, int, int] | None:
    prompt = _count(getattr(usage, "prompt_tokens", None))
    completion = _count(getattr(usage, "completion_tokens", None))
    cached = _count(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None) or 0)
    if prompt is None or completion is None or cached is None:
        return None
    return prompt, completion, cached


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
