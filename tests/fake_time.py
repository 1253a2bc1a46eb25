"""Time for retry tests: a monotonic clock that moves only when the code under test sleeps."""

from __future__ import annotations

from datetime import UTC, datetime

from ufo_mobile.core.llm.retry import RetryClock

WALL = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


class FakeTime:
    """``sleep`` records the wait and advances the clock at once; ``random`` replays ``draws`` (the
    last one repeats). Pass ``clock()`` to the model under test."""

    def __init__(self, draws: list[float] | None = None) -> None:
        self.now = 1000.0
        self.slept: list[float] = []
        self.draws = list(draws or [0.5])

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def random(self) -> float:
        return self.draws.pop(0) if len(self.draws) > 1 else self.draws[0]

    def clock(self) -> RetryClock:
        return RetryClock(sleep=self.sleep, monotonic=lambda: self.now, wall=WALL.timestamp, random=self.random)
