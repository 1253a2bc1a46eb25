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

A model that ``speaks`` another format (an eval's oracle for a UI-TARS, Qwen-VL or AutoGLM run, or
for a run that reads the screenshot alone) says each JSON reply as that format's model would
(``speaking.py``), looking at the phone for the controls' points (``watch``); a reply it cannot say
there may give the one to say instead (``{reply: ..., otherwise: ...}``: AutoGLM has no enter key,
so it taps the suggestion).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ufo_mobile import yamlio
from ufo_mobile.core.llm.base import Completion, Usage
from ufo_mobile.core.llm.prompt_reading import (
    LabelError,
    ScreenControl,
    by_label,
    fill_labels,
    has_labels,
    latest_screen,
    number_for,
    shows,
)
from ufo_mobile.core.llm.speaking import SPOKEN, Move, Sight, moves, say
from ufo_mobile.core.memory.messages import ChatMessage, ImagePart
from ufo_mobile.core.ui.state import UIState
from ufo_mobile.errors import ConfigError, ElementNotFoundError, LLMError
from ufo_mobile.safe_text import printable

AFTER_FILE_POLL_SECONDS = 0.05  # how often a reply held by ``after_file`` looks for its file
WRAPPER_KEYS = frozenset({"reply", "delay_seconds", "after_file", "expect", "otherwise"})


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

    def __init__(self, script: Script, *, name: str = "scripted", speaks: str | None = None) -> None:
        if speaks is not None and speaks not in SPOKEN:
            raise ValueError(f"cannot speak the {speaks} format")
        self.name = name
        self.script = script
        self.calls: list[list[ChatMessage]] = []
        self.speaks = speaks  # the format its JSON replies are said in (None: sent as written)
        self.sight: Sight | None = None
        self.numbered_on: Sight | None = None  # the screens its control numbers were written for
        self._next = 0
        self._later: list[Move] = []  # the turns a reply said in ``speaks`` still takes
        self._decided_on: UIState | None = None  # the screen they were decided on
        self._thought = ""

    def watch(self, driver: Any) -> None:
        """Look at ``driver``'s phone for the controls a spoken reply points at (its UI tree, numbered
        as the runtime numbers it)."""
        self.sight = _sight_of(driver)

    def renumber(self, driver: Any) -> None:
        """Name each control a reply numbers by its label, as ``driver``'s phone (the one the script was
        written for) numbers it: the replies then work on another phone showing the same screens (the
        same simulated phone served as an iPhone)."""
        self.numbered_on = _sight_of(driver)

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
        if self._later:  # the next turn of a reply said in another format
            move, self._later = self._later[0], self._later[1:]
            text = await self._say(move, messages, f"{self.name}'s reply {self._next}")
            return Completion(text=text, usage=Usage(calls=1), model=self.name)
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
        if self.numbered_on is not None and isinstance(reply, dict):
            reply = by_label(reply, _controls(await self.numbered_on()))
        if self.speaks is not None and isinstance(reply, dict):
            text = await self._spoken(reply, wrapper, index, messages)
        else:
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

    async def _spoken(self, reply: dict[str, Any], wrapper: dict[str, Any], index: int,
                      messages: Sequence[ChatMessage]) -> str:
        """The first turn of ``reply`` said in ``speaks``, its controls found on the phone (the later
        turns wait in ``_later``); the wrapper's ``otherwise`` when the format cannot say ``reply``."""
        where = f"reply {index + 1} of {self.name}"
        if self.sight is None:
            raise LLMError(f"{where}: the scripted model speaks {self.speaks} but does not see the phone")
        ui = await self.sight()
        controls = _controls(ui)
        expect = wrapper.get("expect")
        try:
            if expect:
                shows(controls, str(expect.get("label", "")), expect.get("flag"))
            turns = moves(fill_labels(reply, controls), lambda field: ui.get_control(field).focused)
        except (LabelError, LLMError, ElementNotFoundError, KeyError, TypeError, ValueError) as exc:
            raise LLMError(f"{where} ({_brief(reply)}): {printable(str(exc))}") from exc
        self._decided_on, self._thought = ui, str(reply.get("thought") or reply.get("observation") or "")
        self._later = turns[1:]
        try:
            return await self._say(turns[0], messages, where, ui)
        except LLMError:
            otherwise = wrapper.get("otherwise")
            if not isinstance(otherwise, dict):
                raise
            return await self._spoken(otherwise, {}, index, messages)

    async def _say(self, move: Move, messages: Sequence[ChatMessage], where: str, ui: UIState | None = None) -> str:
        """``move`` said in ``speaks``: its control's point looked up on the screen now (a later turn
        finds its control by label; without one, on the screen the reply was decided on)."""
        assert self.speaks is not None and self.sight is not None
        ui = ui or await self.sight()
        point = move.point
        try:
            if point is None and move.index is not None:
                if move.fresh or move.label is None:
                    seen = ui if move.fresh else (self._decided_on or ui)
                    point = seen.get_clear_point(move.index)
                else:
                    point = ui.get_clear_point(number_for(_controls(ui), move.label))
            return say(self.speaks, move, self._thought, point, (ui.screen_width, ui.screen_height),
                       _picture(messages))
        except (LabelError, ElementNotFoundError) as exc:
            raise LLMError(f"{where}: {printable(str(exc))}") from exc


def _sight_of(driver: Any) -> Sight:
    """Reads ``driver``'s screen as the runtime would number it."""
    from ufo_mobile.core.ui.format import FormatOptions
    from ufo_mobile.core.ui.provider import AndroidStateProvider

    provider = AndroidStateProvider(driver, format_options=FormatOptions(legend=False))
    looks = itertools.count(1)

    async def sight() -> UIState:
        return (await provider.read(observation_id=f"scripted-{next(looks)}")).ui

    return sight


def _controls(ui: UIState) -> list[ScreenControl]:
    """The controls of ``ui`` as a model reads them in its screen list."""
    return latest_screen([ChatMessage(role="user", content=ui.formatted_text)]) or []


def _picture(messages: Sequence[ChatMessage]) -> tuple[int, int] | None:
    """The size of the last picture the conversation shows the model."""
    for message in reversed(messages):
        if isinstance(message.content, list):
            for part in message.content:
                if isinstance(part, ImagePart) and part.size is not None:
                    return part.size
    return None
