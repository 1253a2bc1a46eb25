"""``RecordingDriver``: every action on the device, one JSON line each, for replay later.

Each line is appended, flushed and fsynced before the action returns (failures too, then
re-raised). Secrets: every string argument and error message passes through ``redact`` (give it
the run's ``Redactor.text``; ``for_run`` does); inside ``with recorder.secret_text():`` (secrets,
and text the tools type into a password field) and whenever the field focused on the screen last
observed is a password field, typed text is withheld entirely: only its length is written. Any
other typed text is written as typed. Any line whose arguments were altered is marked ``redacted``
and ``replay`` refuses it (before issuing anything) unless told to skip it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ufo_mobile.core.device.base import Box, DeviceDriver, box_edges
from ufo_mobile.core.device.uixml import focused_field
from ufo_mobile.core.device.wrappers import DriverWrapper, Sleep
from ufo_mobile.core.trace.files import append_line
from ufo_mobile.core.trace.off_loop import written
from ufo_mobile.errors import RecordingError

if TYPE_CHECKING:
    from ufo_mobile.core.trace.writer import RunWriter

ActionName = Literal["tap", "tap_in", "long_press", "swipe", "drag", "input_text", "press_key", "start_app",
                     "install_app"]
WITHHELD = "[WITHHELD]"
_PASSWORD_FIELD = re.compile(r'\bpassword="true"')


class RecordedAction(BaseModel):
    """One line of a recording: what was done, when, on which observation, and how it went."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(ge=0)
    action: ActionName
    args: dict[str, Any]
    start_s: float = Field(ge=0, description="seconds since the recording started (monotonic)")
    duration_s: float = Field(ge=0)
    ok: bool
    error_type: str | None = None
    error_message: str | None = None
    observation: str | None = None
    redacted: bool = Field(False, description="some argument was redacted or withheld: not replayable")
    text_len: int | None = Field(None, description="length of the typed text (input_text only)")


class RecordingDriver(DriverWrapper):
    """Appends a ``RecordedAction`` line to ``path`` for every action (see the module docstring).

    The observation an action was taken on is the id last given to ``observe``; if none was given,
    an automatic ``auto-<n>``, where n counts observation rounds: the first ``get_ui_tree`` or
    ``screenshot`` after an action opens a new round, so a concurrent screenshot + tree share one.
    """

    def __init__(self, inner: DeviceDriver, path: Path | str, *, redact: Callable[[str], str] | None = None,
                 overwrite: bool = False, append: bool = False, withhold_on_password_screen: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(inner)
        path = Path(path)  # seed 002 writes RecordingDriver(driver, "x.jsonl")
        self.path = path
        self._redact = redact or (lambda text: text)
        self._withhold_on_password = withhold_on_password_screen
        self._clock = clock
        path.parent.mkdir(parents=True, exist_ok=True)
        self._seq = 0
        if append and path.exists():  # a resumed run goes on with the same recording
            self._seq = sum(1 for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line)
        else:
            with path.open("w" if overwrite else "x", encoding="utf-8"):
                pass  # "x" refuses to mix two recordings' timelines in one file
        self._t0 = clock()
        self._explicit: str | None = None
        self._rounds = 0
        self._acted = True
        self._secret_depth = 0
        self._password_screen = False

    @classmethod
    def for_run(cls, inner: DeviceDriver, writer: RunWriter, name: str = "actions.jsonl") -> RecordingDriver:
        """Record into the run directory, redacting with the run's ``Redactor``."""
        return cls(inner, writer.run_dir / name, redact=writer.redactor.text, append=writer.resumed)

    def observe(self, observation_id: str | None) -> None:
        """Name the observation the next actions are taken on (``None`` returns to automatic ids)."""
        self._explicit = observation_id
        super().observe(observation_id)

    @property
    def observation(self) -> str | None:
        """The id of the observation the next action is taken on; None before the first one."""
        if self._explicit is not None:
            return self._explicit
        return f"auto-{self._rounds}" if self._rounds else None

    @contextmanager
    def secret_text(self) -> Iterator[None]:
        """Within this block, text typed is never written, only its length (per driver, not task)."""
        self._secret_depth += 1
        try:
            yield
        finally:
            self._secret_depth -= 1

    def _observed(self) -> None:
        if self._acted:
            self._rounds += 1
            self._acted = False

    async def screenshot(self) -> bytes:
        self._observed()
        return await self.inner.screenshot()

    async def get_ui_tree(self) -> str:
        self._observed()
        xml = await self.inner.get_ui_tree()
        field = focused_field(xml) if _PASSWORD_FIELD.search(xml) else None
        self._password_screen = field is not None and field.password
        return xml

    async def tap(self, x: int, y: int) -> None:
        await self._record("tap", {"x": x, "y": y}, self.inner.tap(x, y))

    async def tap_in(self, bounds: Box) -> None:
        """Recorded as the element's bounds: the point inside is the inner driver's choice."""
        await self._record("tap_in", {"bounds": list(box_edges(bounds))}, self.inner.tap_in(bounds))

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        args = {"x": x, "y": y, "duration_ms": duration_ms}
        await self._record("long_press", args, self.inner.long_press(x, y, duration_ms))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        args = {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "duration_ms": duration_ms}
        await self._record("swipe", args, self.inner.swipe(x1, y1, x2, y2, duration_ms))

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        args = {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "duration_ms": duration_ms}
        await self._record("drag", args, self.inner.drag(x1, y1, x2, y2, duration_ms))

    async def input_text(self, text: str, clear: bool = False) -> None:
        withhold = self._secret_depth > 0 or (self._withhold_on_password and self._password_screen)
        shown = None if withhold else text
        await self._record("input_text", {"text": shown, "clear": clear}, self.inner.input_text(text, clear),
                           text=text, withheld=withhold)

    async def press_key(self, key: str | int) -> None:
        await self._record("press_key", {"key": key}, self.inner.press_key(key))

    async def start_app(self, package: str, activity: str | None = None) -> None:
        args = {"package": package, "activity": activity}
        await self._record("start_app", args, self.inner.start_app(package, activity))

    async def install_app(self, apk_path: str) -> None:
        await self._record("install_app", {"apk_path": apk_path}, self.inner.install_app(apk_path))

    async def _record(self, action: ActionName, args: dict[str, Any], call: Awaitable[None], *,
                      text: str | None = None, withheld: bool = False) -> None:
        seq, observation = self._seq, self.observation
        self._seq += 1
        start = self._clock()
        error: BaseException | None = None
        try:
            await call
        except BaseException as exc:  # cancellation too: the line says how the action ended
            error = exc
            raise
        finally:
            self._acted = True
            line = self._line(seq, action, args, start, error, observation, text, withheld)
            # whole lines, synced, in a writing thread: the sync's wait holds up no other run of the
            # process; a full disk raises RunWriteError and leaves no partial line
            await written(append_line, self.path, line)

    def _line(self, seq: int, action: ActionName, args: dict[str, Any], start: float,
              error: BaseException | None, observation: str | None, text: str | None, withheld: bool) -> str:
        safe = {k: self._redact(v) if isinstance(v, str) else v for k, v in args.items()}
        message = None
        if error is not None:
            message = self._redact(str(error))
            if withheld and text:
                message = message.replace(text, WITHHELD)
        record = RecordedAction(
            seq=seq, action=action, args=safe, start_s=max(0.0, start - self._t0),
            duration_s=max(0.0, self._clock() - start), ok=error is None,
            error_type=type(error).__name__ if error is not None else None, error_message=message,
            observation=observation, redacted=withheld or safe != args,
            text_len=len(text) if text is not None else None)
        return json.dumps(record.model_dump(mode="json"), ensure_ascii=False)


def load_recording(path: Path | str) -> list[RecordedAction]:
    """Read a recording; a malformed line raises ``RecordingError`` naming the file and line."""
    path = Path(path)
    actions: list[RecordedAction] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            actions.append(RecordedAction.model_validate_json(line))
        except ValidationError as exc:
            raise RecordingError(f"{path}:{number}: not a recorded action: {exc}") from exc
    return actions


@dataclass(frozen=True)
class ReplayResult:
    """Which recorded actions (by ``seq``) were re-issued and which were skipped."""

    replayed: list[int] = field(default_factory=list)
    skipped_failed: list[int] = field(default_factory=list)
    skipped_redacted: list[int] = field(default_factory=list)
    waited_s: list[float] = field(default_factory=list)


async def replay(recording: Path | str | Sequence[RecordedAction], driver: DeviceDriver, *, speed: float = 1.0,
                 keep_timing: bool = True, max_gap_s: float = 5.0,
                 on_redacted: Literal["raise", "skip"] = "raise", skip_failed: bool = True,
                 sleep: Sleep = asyncio.sleep) -> ReplayResult:
    """Re-issue recorded actions on ``driver`` in start order.

    With ``keep_timing`` the idle gap between one recorded action's end and the next one's start
    is waited, divided by ``speed`` and capped at ``max_gap_s``. Actions that failed when recorded
    are skipped unless ``skip_failed`` is false. Redacted actions cannot be replayed: by default
    the replay raises ``RecordingError`` before issuing anything; ``on_redacted="skip"`` leaves
    them out and lists them in the result.
    """
    if speed <= 0 or max_gap_s < 0:
        raise ValueError("speed must be > 0 and max_gap_s >= 0")
    actions = load_recording(recording) if isinstance(recording, Path | str) else list(recording)
    actions.sort(key=lambda a: (a.start_s, a.seq))
    redacted = [a.seq for a in actions if a.redacted and not (skip_failed and not a.ok)]
    if redacted and on_redacted == "raise":
        raise RecordingError(f"actions {redacted} were recorded with redacted or withheld text and cannot "
                             "be replayed; pass on_redacted='skip' to leave them out")
    result = ReplayResult()
    previous_end: float | None = None
    for action in actions:
        gap = 0.0 if previous_end is None else max(0.0, action.start_s - previous_end)
        previous_end = action.start_s + action.duration_s
        if skip_failed and not action.ok:
            result.skipped_failed.append(action.seq)
            continue
        if action.redacted:
            result.skipped_redacted.append(action.seq)
            continue
        wait = min(gap / speed, max_gap_s) if keep_timing else 0.0
        if wait > 0:
            await sleep(wait)
        result.waited_s.append(wait)
        await _issue(driver, action)
        result.replayed.append(action.seq)
    return result


async def _issue(driver: DeviceDriver, action: RecordedAction) -> None:
    method: Callable[..., Awaitable[None]] = getattr(driver, action.action)
    try:
        inspect.signature(method).bind(**action.args)
    except TypeError as exc:
        raise RecordingError(f"action {action.seq} ({action.action}) has bad arguments: {exc}") from exc
    await method(**action.args)
