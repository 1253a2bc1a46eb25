"""State providers: from the device to a ``UIState``.

``StateProvider`` is the port (seed 002's shape): ``supported`` names what the states it makes can
do for tools (``element_index``: controls are addressed by index; ``convert_point``: coordinates
map to screen pixels), and ``get_state`` observes the screen. ``AndroidStateProvider`` reads the
uiautomator dump through the driver, re-reads an invalid dump up to ``dump_retries`` times, redacts
known secrets from it (in their XML-escaped forms too) before parsing, then filters and formats it
(``build_ui_state``).

``fetch`` and ``read`` split ``get_state`` so that a caller can take the screenshot while the dump
is being read, and then give the screenshot's size to the parse.

Real phones refuse dumps at times: ``ERROR: could not get idle state.`` on animated screens (video,
spinners, ads), ``ERROR: null root node returned by UiTestAutomationBridge.`` for a moment after an
app changes. Such a dump (``DumpUnavailableError`` from the driver) is tried again after a growing
pause, ``unavailable_retries`` times; then the driver's fallback dumper is asked
(``fallback_ui_tree``: uiautomator2, which does not wait for idle), and when there is none, or it
fails too, the screen is observed from its screenshot alone: no controls, and a text that says why.
An ``idle`` refusal goes to the fallback dumper at once when the driver has one: the phone already
waited up to 10 s for the screen to settle before refusing (AOSP DumpCommand's ``waitForIdle``), and
a video plays on, so another plain dump would cost the same again for the same answer.
When the device reports the soft keyboard and the dump does not show it (``uiautomator dump`` holds
the app's window only), the controls under it are left out: a tap there would hit a key.
Every read says how it went (``StateRead``), and the step records it.

Seed 002's call ``AndroidStateProvider(driver, tree_filter, tree_formatter, stealth=True)`` works:
the filter and the formatter are the stages of ``pipeline``; ``stealth`` marks every state it makes
so that the actions tap a control through the driver's ``tap_in`` (a jittered point inside it, with
a ``StealthDriver`` in the stack). Each state also carries the phone's date (``device_date``), read
through the driver when it can tell (``get_date``) and then again once ``date_ttl`` seconds have
passed; a phone that will not say leaves it as it was.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

import structlog

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.ui.controls import FilterOptions
from ufo_mobile.core.ui.format import FormatOptions
from ufo_mobile.core.ui.pipeline import TreeFilter, TreeFormatter
from ufo_mobile.core.ui.state import UIState, build_ui_state, unavailable_ui_state
from ufo_mobile.errors import DeviceError, DumpUnavailableError, UIParseError


@dataclass(frozen=True)
class DumpFailure:
    """A dump the device refused this time (what ``fetch`` returns instead of raising)."""

    kind: str
    message: str


@dataclass(frozen=True)
class StateRead:
    """A parsed screen, how many dumps it took (1 when the first one was valid), the refusals met
    on the way (``DumpUnavailableError.kind`` each), the fallback used, if any
    (``"fallback_dump"``: the driver's other dumper; ``"screenshot_only"``: no control list), and the
    dump it was read from."""

    ui: UIState
    attempts: int
    refusals: list[str] = field(default_factory=list)
    fallback: str | None = None
    dump: str | None = None  # the dump ``ui`` was made from (None for a fallback)


@runtime_checkable
class StateProvider(Protocol):
    """Observes the screen for the agent and its tools."""

    supported: ClassVar[frozenset[str]]

    async def fetch(self) -> str | DumpFailure:
        """One raw dump of the screen, or why the device gave none this time."""
        ...

    async def read(self, *, observation_id: str, screen_size: tuple[int, int] | None = None,
                   dump: str | DumpFailure | None = None) -> StateRead:
        """Parse ``dump`` (or a fresh one), reading again while it is invalid."""
        ...

    async def get_state(self, *, observation_id: str | None = None,
                        screen_size: tuple[int, int] | None = None) -> UIState:
        """The current screen."""
        ...


class AndroidStateProvider:
    """``StateProvider`` over a driver's uiautomator dump.

    Args:
        driver: where the dumps come from.
        tree_filter, tree_formatter: which controls to keep, and the screen text (``pipeline``).
        stealth: the actions tap controls at a jittered point inside them (``UIState.stealth``).
        dump_retries: how many times an invalid (unparsable) dump is read again before ``UIParseError``.
        unavailable_retries: how many times a refused dump is tried again before the fallbacks.
        retry_delay: the pause before the first of those retries; it doubles each time (at most 8 s).
        redact: applied to every dump before parsing (the run's ``Redactor.text``).
        filter_options, format_options: passed to ``build_ui_state``.
        sleep: what the pauses sleep with (tests pass one that returns at once).
        date_ttl, clock: the phone's date is read again once it is this many seconds old (by ``clock``).
    """

    supported: ClassVar[frozenset[str]] = frozenset({"element_index", "convert_point"})

    def __init__(self, driver: DeviceDriver, tree_filter: TreeFilter | None = None,
                 tree_formatter: TreeFormatter | None = None, *, stealth: bool = False, dump_retries: int = 2,
                 unavailable_retries: int = 3, retry_delay: float = 0.5, redact: Callable[[str], str] | None = None,
                 filter_options: FilterOptions | None = None, format_options: FormatOptions | None = None,
                 logger: Any = None, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 date_ttl: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        if dump_retries < 0 or unavailable_retries < 0:
            raise ValueError("dump_retries and unavailable_retries must be >= 0")
        self.driver = driver
        self.tree_filter = tree_filter
        self.tree_formatter = tree_formatter
        self.stealth = stealth
        self.date_ttl = date_ttl
        self._clock = clock
        self._date = ""
        self._date_read_at: float | None = None
        self.dump_retries = dump_retries
        self.unavailable_retries = unavailable_retries
        self.retry_delay = retry_delay
        self._redact = redact
        self._filter = filter_options
        self._format = format_options
        self._sleep = sleep
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.observe")
        self._ids = itertools.count(1)

    async def fetch(self) -> str | DumpFailure:
        try:
            return await self.driver.get_ui_tree()
        except DumpUnavailableError as exc:
            return DumpFailure(exc.kind, str(exc))

    async def read(self, *, observation_id: str, screen_size: tuple[int, int] | None = None,
                   dump: str | DumpFailure | None = None) -> StateRead:
        """Parse ``dump`` (or a fresh one). An invalid dump is read again, up to ``dump_retries``
        times; a refused one is tried again after a pause, then the fallbacks (module docstring).
        The state carries the phone's date and the provider's ``stealth``.

        Raises:
            UIParseError: the dump was still invalid after the last retry.
        """
        state = await self._read(observation_id, screen_size, dump)
        ui = replace(state.ui, device_date=await self.device_date(), stealth=self.stealth)
        return replace(state, ui=ui)

    async def device_date(self) -> str:
        """The phone's date (``get_date``), read again once ``date_ttl`` seconds old; "" when unknown."""
        now = self._clock()
        if not self.driver.supports("get_date") or (
                self._date_read_at is not None and now - self._date_read_at < self.date_ttl):
            return self._date
        self._date_read_at = now
        try:
            self._date = " ".join((await self.driver.get_date()).split())
        except DeviceError as exc:
            self._log.warning("device_date_unavailable", error=str(exc))
        return self._date

    async def _read(self, observation_id: str, screen_size: tuple[int, int] | None,
                    dump: str | DumpFailure | None) -> StateRead:
        xml = dump if dump is not None else await self.fetch()
        attempts, refusals = 1, []
        while True:
            if isinstance(xml, DumpFailure):
                refusals.append(xml.kind)
                if len(refusals) > self.unavailable_retries or self._fallback_now(xml):
                    return await self._fallback(observation_id, screen_size, xml, attempts, refusals)
                self._log.warning("ui_dump_refused", observation=observation_id, attempt=attempts, kind=xml.kind,
                                  error=xml.message)
                await self._sleep(min(8.0, self.retry_delay * 2 ** (len(refusals) - 1)))
            else:
                try:
                    return StateRead(await self._parse(xml, observation_id, screen_size), attempts, refusals,
                                     dump=xml)
                except UIParseError as exc:
                    if attempts - len(refusals) > self.dump_retries:
                        raise UIParseError(f"UI dump still invalid after {attempts} attempts: {exc}") from exc
                    self._log.warning("ui_dump_invalid", observation=observation_id, attempt=attempts,
                                      error=str(exc))
            attempts += 1
            xml = await self.fetch()

    def _fallback_now(self, failure: DumpFailure) -> bool:
        """Whether to skip the remaining retries (module docstring: an animated screen; an iPhone's system
        alert, which stays until someone answers it)."""
        return (failure.kind == "idle" and self.driver.supports("fallback_ui_tree")) or failure.kind == "alert"

    async def _parse(self, xml: str, observation_id: str, screen_size: tuple[int, int] | None) -> UIState:
        if self._redact is not None:
            xml = self._redact(xml)
        ui = self._build(xml, observation_id, screen_size, None)
        frame = await self._keyboard_frame(ui)
        if frame is None:
            return ui
        return self._build(xml, observation_id, screen_size, frame)

    def _build(self, xml: str, observation_id: str, screen_size: tuple[int, int] | None,
               keyboard_frame: tuple[int, int, int, int] | None) -> UIState:
        return build_ui_state(xml, observation_id=observation_id, screen_size=screen_size,
                              filter_options=self._filter, format_options=self._format, keyboard_frame=keyboard_frame,
                              tree_filter=self.tree_filter, tree_formatter=self.tree_formatter)

    def made_from_dump_alone(self, ui: UIState) -> bool:
        """True when ``ui`` depends on nothing but its dump (no device query): the same dump again
        would give the same screen. Not so while a text field waits for a keyboard the dump lacks."""
        return not self._asks_for_keyboard(ui)

    def _asks_for_keyboard(self, ui: UIState) -> bool:
        focused = ui.phone_state.get("focused_element") or {}
        # the dump has the keyboard's window already, or no field wants one: nothing to ask
        return bool(not ui.phone_state.get("keyboard_shown") and focused.get("editable")
                    and self.driver.supports("keyboard_state"))

    async def _keyboard_frame(self, ui: UIState) -> tuple[int, int, int, int] | None:
        """Where the keyboard covers the app, when the device shows one that the dump lacks."""
        if not self._asks_for_keyboard(ui):
            return None
        try:
            state = await self.driver.keyboard_state()
        except DeviceError as exc:
            self._log.warning("keyboard_state_unavailable", error=str(exc))
            return None
        return state.frame if state.shown else None

    async def _fallback(self, observation_id: str, screen_size: tuple[int, int] | None, failure: DumpFailure,
                        attempts: int, refusals: list[str]) -> StateRead:
        if self.driver.supports("fallback_ui_tree"):
            try:
                xml = await self.driver.fallback_ui_tree()
                ui = await self._parse(xml, observation_id, screen_size)
                self._log.warning("ui_dump_fallback", observation=observation_id, used="fallback_dump")
                return StateRead(ui, attempts + 1, refusals, "fallback_dump")
            except (DeviceError, UIParseError) as exc:
                self._log.warning("ui_dump_fallback_failed", observation=observation_id, error=str(exc))
        reason = _REASONS.get(failure.kind, f"the phone gave no UI dump ({failure.message})")
        self._log.warning("ui_dump_fallback", observation=observation_id, used="screenshot_only", reason=reason)
        size = screen_size or await self.driver.screen_size()
        return StateRead(unavailable_ui_state(observation_id, size, reason), attempts, refusals, "screenshot_only")

    async def get_state(self, *, observation_id: str | None = None,
                        screen_size: tuple[int, int] | None = None) -> UIState:
        observation_id = observation_id or f"state-{next(self._ids)}"
        return (await self.read(observation_id=observation_id, screen_size=screen_size)).ui


_REASONS = {
    "idle": "the screen never stops moving (a video, an animation), so Android will not list its controls",
    "null_root": "Android's accessibility service returned no window for it",
    "conflict": "another UI automation tool holds the accessibility service",
}
