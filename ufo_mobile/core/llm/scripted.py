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

A reply may name a control by its label instead of its number, as a model reading the screen
would: ``{name: click, args: {index: {label: Wi-Fi}, text: Wi-Fi}}`` in a mapping, ``{{label: Wi-Fi}}``
inside a text reply (``click(index={{label: Wi-Fi}}, text="Wi-Fi")``). The scripted model fills in the
number that control has on the screen it is sent (``ufo_mobile/core/llm/prompt_reading.py``), so the
script survives a phone that numbers its controls differently (a status bar listed first); a label
the screen does not show stops the run with an error naming the label and the reply.

A reply may wait for proof on the screen: ``{expect: {label: Use Wi-Fi, flag: check=on}, reply:
{status: FINISH, ...}}`` is sent only when the screen it is sent shows a control with that label
(and flag); otherwise the run stops with an error. A script's FINISH then never claims a result
the phone does not show (the demo's last reply does this).

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
from ufo_mobile.core.llm.prompt_reading import LabelError, fill_labels, has_labels, latest_screen, shows
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.errors import ConfigError, LLMError
from ufo_mobile.safe_text import printable

AFTER_FILE_POLL_SECONDS = 0.05  # how often a reply held by ``after_file`` looks for its file
WRAPPER_KEYS = frozenset({"reply", "delay_seconds", "after_file", "expect"})


def _brief(entry: Any) -> str:
    """A script entry on one short line, for an error message."""
    text = entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)
    text = printable(" ".join(text.split()))
    return text if len(text) <= 100 else text[:99] + "\u2026"


class Script(BaseModel):
    """A script file's content: the replies in order, an optional delay before each, whether the
    last one repeats, and the replies in other modes (``modes``) and other formats (``formats``,
    ``model.format``: a UI-TARS model's text replies, for the direct mode)."""

    model_config = ConfigDict(extra="forbid")
    delay_seconds: float = Field(default=0.0, ge=0)
    repeat_last: bool = False
    replies: list[str | dict[str, Any]] = Field(min_length=1)
    modes: dict[str, list[str | dict[str, Any]]] = Field(default_factory=dict)
    formats: dict[str, list[str | dict[str, Any]]] = Field(default_factory=dict)

    def for_mode(self, mode: str, reply_format: str = "json") -> Script:
        """The script a run in ``mode`` replays (``replies`` unless ``modes`` has that mode), or, for a
        model answering in another format than json, that format's replies.

        Raises:
            ConfigError: the script has no replies in ``reply_format``.
        """
        if reply_format != "json":
            if reply_format not in self.formats:
                raise ConfigError(f"the script has no replies in the {reply_format} format (formats: "
                                  f"{reply_format}: [...])", key="model.script")
            return self.model_copy(update={"replies": self.formats[reply_format], "modes": {}, "formats": {}})
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
    def _unwrap(entry: str | dict[str, Any]) -> tuple[str | dict[str, Any], dict[str, Any] | None]:
        """The reply itself and its wrapper (``delay_seconds``, ``after_file``, ``expect``), if any."""
        if isinstance(entry, dict) and "reply" in entry and set(entry) <= WRAPPER_KEYS:
            return entry["reply"], entry
        return entry, None

    def _read_screen(self, entry: str | dict[str, Any], expect: Any, index: int,
                     messages: Sequence[ChatMessage]) -> str | dict[str, Any]:
        """``entry`` with the controls it names by label numbered as on the screen in ``messages``,
        after checking that the screen shows what ``expect`` (``{label: ..., flag: ...}``) names."""
        if not has_labels(entry) and not expect:
            return entry
        where = f"reply {index + 1} of {self.name}"
        if expect and not (isinstance(expect, dict) and expect.get("label") and set(expect) <= {"label", "flag"}):
            raise LLMError(f"{where}: 'expect' must be {{label: ..., flag: ...}} (flag optional), not {_brief(expect)}")
        controls = latest_screen(messages)
        if controls is None:
            raise LLMError(f"{where} reads the screen, but the prompt has no screen list")
        try:
            if expect:
                shows(controls, str(expect.get("label", "")), expect.get("flag"))
            filled: str | dict[str, Any] = fill_labels(entry, controls)
        except LabelError as exc:
            raise LLMError(f"{where} ({_brief(entry)}): {printable(str(exc))}") from exc
        return filled

    async def complete(self, messages: Sequence[ChatMessage], *,
                       schema: dict[str, Any] | None = None) -> Completion:
        """Return the script's next reply (``schema`` is ignored), after its delay or its file.

        Raises:
            LLMError: no reply is left (and ``repeat_last`` is off), or a reply names a label or
                expects a control the screen does not show.
        """
        self.calls.append(list(messages))
        replies = self.script.replies
        if self._next >= len(replies):
            if not self.script.repeat_last:
                raise LLMError(f"the scripted model has no reply left (script has {len(replies)})")
            index = len(replies) - 1
        else:
            index = self._next
            self._next += 1
        reply, wrapper = self._unwrap(replies[index])
        wrapper = wrapper or {}
        reply = self._read_screen(reply, wrapper.get("expect"), index, messages)
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        after = Path(str(wrapper["after_file"])) if wrapper.get("after_file") else None
        delay = float(wrapper.get("delay_seconds", 0)) if wrapper else None  # a wrapper's own, else the script's
        while after is not None and not after.exists():  # noqa: ASYNC110 - a file has no event to wait on
            await asyncio.sleep(AFTER_FILE_POLL_SECONDS)  # the step timeout (or a signal) bounds this
        wait = self.script.delay_seconds if delay is None else delay
        if wait:
            await asyncio.sleep(wait)
        return Completion(text=text, usage=Usage(calls=1), model=self.name)
