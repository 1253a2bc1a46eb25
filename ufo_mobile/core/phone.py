"""The phone of a run, live: the one object through which the agents observe it and act on it.

A ``Phone`` holds the driver, the state provider that reads its screens (``AndroidStateProvider``),
the control cache (``core/ui/cache.py``: a screen observed moments ago is reused while it is
younger than the cache's TTL), the tools (``core/tools/build.py``), the credentials ``type_secret``
types, and the redactor that takes known secrets out of every dump before it is parsed, so that a
key typed into a visible field reaches neither the model nor the run directory.

Every agent of a run holds the same ``Phone`` (``core/builder/run_builder.py`` makes it for a run;
``core/agents/factory.py`` when agents are built on their own), and so does the MCP server's state
(``host/mcp/state.py``). Observing with the cache happens here and only here (``observe``); every
action goes through ``act``, which drops the cached screen whatever the action did (a failed action
may still have changed the screen).

The redactor is the run's (``Redactor.text`` of the run directory's writer): the run builder passes
it when the phone is made; a phone made without one is bound once with ``bind_redactor`` before the
run's first step.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.device.base import AppInfo, DeviceDriver
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.tools.build import build_tool_registry
from ufo_mobile.core.tools.context import ActionContext, ActionResult, Sleep
from ufo_mobile.core.tools.credentials import CredentialManager
from ufo_mobile.core.tools.registry import ToolRegistry
from ufo_mobile.core.ui.cache import ControlCache
from ufo_mobile.core.ui.format import FormatOptions
from ufo_mobile.core.ui.provider import AndroidStateProvider, StateProvider, StateRead
from ufo_mobile.core.ui.state import UIState
from ufo_mobile.settings import Settings

DEFAULT_TTL = 5.0  # seconds a screen is reused, without settings (``perception.control_cache_ttl_seconds``)


@dataclass(frozen=True)
class Seen:
    """One observed screen: its state, whether it came from the cache, and how it was read: the dump
    it was made from, the dumps it took, the refusals met and the fallback used (``StateRead``).
    ``keep``: whether it goes into the cache (a screen seen without its own dump may not)."""

    ui: UIState
    hit: bool = False
    dump: str | None = None
    attempts: int = 0
    refusals: tuple[str, ...] = ()
    fallback: str | None = None
    keep: bool = True

    @classmethod
    def of(cls, read: StateRead, *, keep: bool | None = None) -> Seen:
        """A fresh screen from a provider's read; kept when it had no fallback, unless ``keep`` says."""
        return cls(read.ui, dump=read.dump, attempts=read.attempts, refusals=tuple(read.refusals),
                   fallback=read.fallback, keep=read.fallback is None if keep is None else keep)


#: How a caller reads a fresh screen when the cache has none (``Phone.observe``).
Reader = Callable[[], Awaitable[Seen]]


class Phone:
    """The live phone (module docstring).

    Args:
        driver: the phone's driver.
        settings: the run's settings: the provider's dump retries, the cache's TTL and the tools come
            from them. Without, a provider with its defaults, a 5 s cache and no tools.
        provider: how screens are read (default: an ``AndroidStateProvider`` that redacts with this phone).
        credentials: the secrets ``type_secret`` may type.
        redact: the run's redactor; None until ``bind_redactor``.
        clock: the clock of the cache (tests pass a fake one).
        cache_ttl: overrides the settings' TTL.
        logger: a structlog-style logger for the provider.
    """

    def __init__(self, driver: DeviceDriver, *, settings: Settings | None = None,
                 provider: StateProvider | None = None, credentials: CredentialManager | None = None,
                 redact: Callable[[str], str] | None = None, clock: Callable[[], float] = time.monotonic,
                 cache_ttl: float | None = None, logger: Any = None) -> None:
        self.driver = driver
        self.credentials = credentials if credentials is not None else CredentialManager()
        self._redact = redact
        self.provider: StateProvider = provider or self._provider(settings, logger)
        ttl = settings.perception.control_cache_ttl_seconds if settings is not None else DEFAULT_TTL
        self.clock = clock
        self.cache = ControlCache(ttl if cache_ttl is None else cache_ttl, clock=clock)
        self.tools = (build_tool_registry(settings, driver, self.provider, self.credentials)
                      if settings is not None else ToolRegistry())
        self._ids = itertools.count(1)
        self._closed = False

    def _provider(self, settings: Settings | None, logger: Any) -> AndroidStateProvider:
        if settings is None:
            return AndroidStateProvider(self.driver, redact=self.redact, logger=logger)
        p = settings.perception
        # the legend of the screen text is in the system prompt
        return AndroidStateProvider(
            self.driver, stealth=settings.device.stealth, dump_retries=p.dump_retries,
            unavailable_retries=p.dump_refused_retries, retry_delay=p.dump_retry_delay_seconds,
            redact=self.redact, logger=logger, format_options=FormatOptions(legend=False))

    @property
    def serial(self) -> str:
        """The driver's name for the phone (the adb serial, or ``sim``)."""
        return self.driver.serial

    # --- the redactor ----------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` without the run's known secrets (unchanged while no redactor is bound)."""
        return self._redact(text) if self._redact is not None else text

    @property
    def redacts(self) -> bool:
        """Whether a redactor is bound."""
        return self._redact is not None

    def bind_redactor(self, redact: Callable[[str], str]) -> None:
        """Bind the run's redactor, once (binding the same one again changes nothing).

        Raises:
            ValueError: another redactor is bound already.
        """
        if self._redact is not None and self._redact != redact:
            raise ValueError("the phone's redactor is bound already")
        self._redact = redact

    # --- observing -------------------------------------------------------------------------

    async def read(self) -> Seen:
        """One fresh screen through the provider (the default ``Reader``)."""
        return Seen.of(await self.provider.read(observation_id=f"phone-{next(self._ids)}"))

    async def observe(self, read: Reader | None = None, *, force: bool = False) -> Seen:
        """The current screen: the cached one while it is younger than the cache's TTL (unless
        ``force``), else a fresh one from ``read`` (default: ``Phone.read``), which is cached when it
        says it may be."""
        cached = None if force else self.cache.get(self.serial)
        if cached is not None:
            return Seen(cached, hit=True)
        seen = await (read or self.read)()
        if seen.keep:
            self.cache.put(self.serial, seen.ui)
        return seen

    def invalidate(self) -> None:
        """Forget the cached screen (after an action, or a person's hands on the phone)."""
        self.cache.invalidate()

    # --- acting ----------------------------------------------------------------------------

    def tools_without(self, names: Iterable[str]) -> ToolRegistry:
        """This phone's tools less ``names``: one agent's view (the others keep theirs)."""
        view = ToolRegistry()
        view.tools = dict(self.tools.tools)
        view.disable(names)
        return view

    def action_context(self, ui: UIState, shared: SharedState, *, observation_id: str = "",
                       apps: Sequence[AppInfo] = (), swipe_duration_ms: int = 300, max_wait_seconds: float = 10.0,
                       sleep: Sleep = asyncio.sleep) -> ActionContext:
        """What the tools get for actions decided on ``ui``. The cache is not theirs: ``act`` drops it."""
        return ActionContext(driver=self.driver, ui=ui, shared_state=shared, state_provider=self.provider,
                             credential_manager=self.credentials, observation_id=observation_id, apps=list(apps),
                             swipe_duration_ms=swipe_duration_ms, max_wait_seconds=max_wait_seconds, sleep=sleep)

    async def act(self, name: str, args: Mapping[str, Any] | None, ctx: ActionContext, *,
                  tools: ToolRegistry | None = None) -> ActionResult:
        """Run tool ``name`` (from ``tools``, an agent's view, or this phone's own) on ``ctx``; the
        cached screen is dropped whatever happened."""
        try:
            return await (tools if tools is not None else self.tools).execute(name, args, ctx)
        finally:
            self.invalidate()

    # --- the end ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Forget the cached screen and close the driver; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.cache.invalidate()
        await self.driver.close()
