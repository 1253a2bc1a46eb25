"""Chat messages as the runtime keeps them: provider-neutral, images as bytes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant"]


class TextPart(BaseModel):
    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An image for the model: ``data`` holds a PNG or JPEG file's bytes. ``label`` names it in logs
    instead of the bytes. A model that says it does not read images (``reads_images = False``, as the
    scripted one does) gets its parts with empty ``data``: where the picture stands in the
    conversation, without the cost of making it. ``size`` is the picture's (width, height) in pixels,
    as the model sees it."""

    model_config = ConfigDict(frozen=True)
    type: Literal["image"] = "image"
    data: bytes = Field(repr=False)
    label: str = "screenshot"
    detail: Literal["low", "high", "auto"] = "auto"
    size: tuple[int, int] | None = None


ContentPart = TextPart | ImagePart


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: Role
    content: str | list[ContentPart]
    id: str | None = None

    def text(self) -> str:
        """The text of the message, images replaced by a ``[image: label]`` marker."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(
            p.text if isinstance(p, TextPart) else f"[image: {p.label}]" for p in self.content
        )

    def to_log(self) -> dict[str, object]:
        """A JSON-safe form for the run directory (no image bytes)."""
        return {"role": self.role, "content": self.text()}

    def redacted(self, redact: Callable[[str], str]) -> ChatMessage:
        """The same message with ``redact`` applied to every text (images are left as they are)."""
        if isinstance(self.content, str):
            return self.model_copy(update={"content": redact(self.content)})
        parts = [TextPart(text=redact(p.text)) if isinstance(p, TextPart) else p for p in self.content]
        return self.model_copy(update={"content": parts})
