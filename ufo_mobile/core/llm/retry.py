"""When to try a model call again, and how long to wait first.

Exponential backoff with full jitter (the wait before retry *n* is uniform in
``[0, min(max_delay, base * 2**(n-1))]``), unless the server said how long to wait
(``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date): then that wait, exactly.
Every call is bounded twice: by a number of retries and by a total time (attempts and waits
together). The clocks, the sleep and the random source are injected, so tests never wait on real
time and never depend on the machine's speed.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC

from ufo_mobile.settings import RetrySettings


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    budget_seconds: float = 90.0
    base_delay_seconds: float = 1.0
    max_delay_seconds: float = 20.0

    @classmethod
    def from_settings(cls, settings: RetrySettings) -> RetryPolicy:
        return cls(settings.max_retries, settings.budget_seconds, settings.base_delay_seconds,
                   settings.max_delay_seconds)

    def backoff_cap(self, retry: int) -> float:
        """The longest backoff before retry number ``retry`` (1 for the first retry)."""
        exponent = min(max(retry - 1, 0), 62)  # 2**62 s is past any cap; keeps the float finite
        return min(self.max_delay_seconds, self.base_delay_seconds * 2.0 ** exponent)

    def backoff(self, retry: int, rand: Callable[[], float]) -> float:
        """Full jitter: a uniform draw in ``[0, backoff_cap(retry))`` from ``rand`` (in ``[0, 1)``)."""
        return self.backoff_cap(retry) * min(max(rand(), 0.0), 1.0)


@dataclass(frozen=True)
class RetryClock:
    """Where waiting and time come from. Tests pass a fake whose ``sleep`` advances ``monotonic``."""

    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time  # epoch seconds, for Retry-After given as an HTTP date
    random: Callable[[], float] = random.random


def retry_after_seconds(headers: Mapping[str, str], *, now: float) -> float | None:
    """The wait the server asked for, in seconds; None when it asked for none we can read.

    ``retry-after-ms`` wins over ``Retry-After``; ``Retry-After`` is seconds (a decimal is accepted)
    or an HTTP date, compared with ``now`` (epoch seconds). A date in the past means no wait.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000" parses as naive; HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - now, 0.0)


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


class RetryBudgetSpent(Exception):
    """No retry is left; ``reason`` says which bound ran out (internal: the client turns it into LLMError)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass
class RetryBudget:
    """The retries left to one call. Created when the call starts; asked before every retry."""

    policy: RetryPolicy
    clock: RetryClock = field(default_factory=RetryClock)
    retries: int = 0
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock.monotonic()

    def elapsed(self) -> float:
        return self.clock.monotonic() - self.started

    def next_delay(self, server_delay: float | None) -> tuple[float, str]:
        """The wait before the next attempt and where it came from (``retry-after`` or ``backoff``).

        Raises:
            RetryBudgetSpent: the retries are used up, or the wait would end past the time budget.
        """
        p = self.policy
        if self.retries >= p.max_retries:
            raise RetryBudgetSpent(f"gave up after {_retries(self.retries)} (model.retry.max_retries is "
                                   f"{p.max_retries})")
        if server_delay is not None:
            delay, source = server_delay, "retry-after"
        else:
            delay, source = p.backoff(self.retries + 1, self.clock.random), "backoff"
        elapsed = self.elapsed()
        if elapsed + delay > p.budget_seconds:
            asked = "the server asked to wait" if source == "retry-after" else "the next wait is"
            raise RetryBudgetSpent(
                f"gave up after {_retries(self.retries)} in {elapsed:.1f} s: {asked} {delay:.1f} s, past the "
                f"retry budget of {p.budget_seconds:g} s (model.retry.budget_seconds)")
        self.retries += 1
        return delay, source


def _retries(count: int) -> str:
    return f"{count} retr{'y' if count == 1 else 'ies'}"
