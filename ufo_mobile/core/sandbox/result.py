"""What one sandboxed run gives back: the tool calls it made and the ``CodeRun`` record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One call the code made through the tool bridge, with what it got back."""

    name: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    result: Any = None
    error: str | None = None
    stopped: bool = False
    """The caller answered ``Stop``: the code was ended after this call."""


@dataclass(frozen=True)
class CodeRun:
    """The record of one run. Text from the sandbox process is bounded and decoded leniently.

    ``refused`` is the policy's reason (nothing ran); ``error`` is one line: the exception the code
    raised (``NameError: name 'x' is not defined (line 3)``), or the limit that ended it.
    """

    refused: str | None = None
    error: str | None = None
    output: str = ""
    calls: tuple[ToolCall, ...] = ()
    timed_out: bool = False
    stopped: bool = False
    value: str | None = None
    """``repr`` of a script's last bare expression (None for CodeAct, or when it is None)."""
    duration_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The code ran to its end, or until a tool stopped it, without an error."""
        return self.refused is None and self.error is None and not self.timed_out

    def render(self) -> str:
        """The run as the model reads it: refusal or error, the output, the value."""
        if self.refused is not None:
            return f"Refused: {self.refused}"
        parts = [f"Output:\n{self.output}"] if self.output else []
        if self.value is not None:
            parts.append(f"Value: {self.value}")
        if self.error is not None:
            parts.append(f"Error: {self.error}")
        if not parts:
            parts.append("Finished (no output)." if not self.stopped else "Stopped by a tool.")
        return "\n".join(parts)
