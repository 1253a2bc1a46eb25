"""State providers: from the device to a ``UIState``.

``StateProvider`` is the port (seed 002's shape): ``supported`` names what the states it makes can
do for tools (``element_index``: controls are addressed by index; ``convert_point``: coordinates
map to screen pixels), and ``get_state`` observes the screen. ``AndroidStateProvider`` reads the
uiautomator dump through the driver, re-reads an invalid dump up to ``dump_retries`` times, redacts
known secrets from it (in their XML-escaped forms too) before parsing, then filters and formats it
(``build_ui_state``).

``fetch`` and ``read`` split ``get_state`` so that a caller can take the screenshot while the dump
is being read, and then give the screenshot's size to the parse.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import structlog

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.errors import UIParseError
from ufo_mobile.ui.controls import FilterOptions
from ufo_mobile.ui.format import FormatOptions
from ufo_mobile.ui.state import UIState, build_ui_state


@dataclass(frozen=True)
class StateRead:
    """A parsed screen and how many dumps it took (1 when the first one was valid)."""

    ui: UIState
    attempts: int


@runtime_checkable
class StateProvider(Protocol):
    """Observes the screen for the agent and its tools."""

    supported: ClassVar[frozenset[str]]

    async def fetch(self) -> str:
        """One raw dump of the screen."""
        ...

    async def read(self, *, observation_id: str, screen_size: tuple[int, int] | None = None,
                   dump: str | None = None) -> StateRead:
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
        dump_retries: how many times an invalid dump is read again before ``UIParseError``.
        redact: applied to every dump before parsing (the run's ``Redactor.text``).
        filter_options, format_options: passed to ``build_ui_state``.
    """

    supported: ClassVar[frozenset[str]] = frozenset({"element_index", "convert_point"})

    def __init__(self, driver: DeviceDriver, *, dump_retries: int = 2, redact: Callable[[str], str] | None = None,
                 filter_options: FilterOptions | None = None, format_options: FormatOptions | None = None,
                 logger: Any = None) -> None:
        if dump_retries < 0:
            raise ValueError(f"dump_retries must be >= 0, got {dump_retries}")
        self.driver = driver
        self.dump_retries = dump_retries
        self._redact = redact
        self._filter = filter_options
        self._format = format_options
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.observe")
        self._ids = itertools.count(1)

    async def fetch(self) -> str:
        return await self.driver.get_ui_tree()

    async def read(self, *, observation_id: str, screen_size: tuple[int, int] | None = None,
                   dump: str | None = None) -> StateRead:
        """Parse ``dump`` (or a fresh one); an invalid dump is read again, up to ``dump_retries`` times.

        Raises:
            UIParseError: the dump was still invalid after the last retry.
        """
        xml = dump if dump is not None else await self.fetch()
        attempts = 1
        while True:
            if self._redact is not None:
                xml = self._redact(xml)
            try:
                ui = build_ui_state(xml, observation_id=observation_id, screen_size=screen_size,
                                    filter_options=self._filter, format_options=self._format)
                return StateRead(ui, attempts)
            except UIParseError as exc:
                if attempts > self.dump_retries:
                    raise UIParseError(f"UI dump still invalid after {attempts} attempts: {exc}") from exc
                self._log.warning("ui_dump_invalid", observation=observation_id, attempt=attempts, error=str(exc))
                attempts += 1
                xml = await self.fetch()

    async def get_state(self, *, observation_id: str | None = None,
                        screen_size: tuple[int, int] | None = None) -> UIState:
        observation_id = observation_id or f"state-{next(self._ids)}"
        return (await self.read(observation_id=observation_id, screen_size=screen_size)).ui
