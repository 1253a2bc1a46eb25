"""An offline model that replays replies from a YAML script.

Script file::

    delay_seconds: 0        # optional wait before every reply (tests of timeouts and Ctrl-C)
    repeat_last: false      # keep answering with the last reply once the script is used up
    replies:
      - status: CONTINUE    # a mapping is sent as the JSON a real model would write
        thought: Open Settings
        action: {name: open_app, args: {text: Settings}}
      - "not JSON at all"   # a string is sent verbatim (malformed replies)

An entry may also be ``{delay_seconds: 5, reply: {...}}`` to delay just that reply, or
``{after_file: PATH, reply: {...}}`` to hold it until the file PATH exists (a test, a demo or a
person decides when the run goes on; the step timeout still bounds the wait).

One script can serve every mode (``mode`` in the task file, ``run --mode``): ``replies`` are the
direct mode's, and ``modes: {reasoning: [...], codeact: [...]}`` holds the others' (the manager's
tag replies and the executor's JSON in turn; CodeAct's ```python blocks).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ufo_mobile import yamlio
from ufo_mobile.core.llm.base import Completion, Usage
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.errors import ConfigError, LLMError
from ufo_mobile.safe_text import printable

AFTER_FILE_POLL_SECONDS = 0.05  # how often a reply held by ``after_file`` looks for its file


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    delay_seconds: float = Field(default=0.0, ge=0)
    repeat_last: bool = False
    replies: list[str | dict[str, Any]] = Field(min_length=1)
    modes: dict[str, list[str | dict[str, Any]]] = Field(default_factory=dict)

    def for_mode(self, mode: str) -> Script:
        """The script a run in ``mode`` replays (``replies`` unless ``modes`` has that mode)."""
        if mode == "direct" or mode not in self.modes:
            return self
        return self.model_copy(update={"replies": self.modes[mode], "modes": {}})


class ScriptedModel:
    """Replays a script; records every conversation it was shown in ``.calls``."""

    reads_images = False  # its image parts come without bytes: nothing is encoded for it

    def __init__(self, script: Script, *, name: str = "scripted") -> None:
        self.name = name
        self.script = script
        self.calls: list[list[ChatMessage]] = []
        self._next = 0

    def skip(self, replies: int) -> None:
        """Start after the first ``replies`` answers (a resumed run already had them)."""
        self._next = min(self._next + max(replies, 0), len(self.script.replies))

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """Load a script file (bounded: see ``ufo_mobile.yamlio``); every problem is a ``ConfigError``."""
        data = yamlio.load_file(path)
        try:
            return cls(Script.model_validate(data), name=f"scripted:{path.name}")
        except ValidationError as exc:
            err = exc.errors()[0]
            key = printable(".".join(str(x) for x in err["loc"]))
            raise ConfigError(err["msg"], path=str(path), key=key) from exc

    @staticmethod
    def _render(entry: str | dict[str, Any]) -> tuple[str, float | None, Path | None]:
        """The reply's text, its own delay (None: the script's) and the file it waits for."""
        if isinstance(entry, str):
            return entry, None, None
        if "reply" in entry and set(entry) <= {"reply", "delay_seconds", "after_file"}:
            inner, _, _ = ScriptedModel._render(entry["reply"])
            after = Path(str(entry["after_file"])) if entry.get("after_file") else None
            return inner, float(entry.get("delay_seconds", 0)), after
        return json.dumps(entry, ensure_ascii=False), None, None

    async def complete(self, messages: Sequence[ChatMessage], *,
                       schema: dict[str, Any] | None = None) -> Completion:
        self.calls.append(list(messages))
        replies = self.script.replies
        if self._next >= len(replies):
            if not self.script.repeat_last:
                raise LLMError(f"the scripted model has no reply left (script has {len(replies)})")
            index = len(replies) - 1
        else:
            index = self._next
            self._next += 1
        text, delay, after = self._render(replies[index])
        while after is not None and not after.exists():  # noqa: ASYNC110 - a file has no event to wait on
            await asyncio.sleep(AFTER_FILE_POLL_SECONDS)  # the step timeout (or a signal) bounds this
        wait = self.script.delay_seconds if delay is None else delay
        if wait:
            await asyncio.sleep(wait)
        return Completion(text=text, usage=Usage(calls=1), model=self.name)
