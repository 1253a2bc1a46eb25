"""Small value types of the simulated phone, and its clocks."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import NamedTuple

DEFAULT_TIME = datetime(2025, 1, 15, 9, 41, tzinfo=UTC)


class InstalledApp(NamedTuple):
    package: str
    label: str


class Foreground(NamedTuple):
    package: str
    activity: str


def fixed_clock(when: datetime = DEFAULT_TIME) -> Callable[[], datetime]:
    """A clock that always answers ``when`` (the default, for reproducible screenshots)."""
    return lambda: when


def real_clock() -> datetime:
    """The local wall-clock time."""
    return datetime.now(UTC).astimezone()
