"""The retry policy: Retry-After parsing, full-jitter bounds, the count and time budgets (no real time)."""

from __future__ import annotations

from datetime import timedelta
from email.utils import format_datetime

import pytest

from tests.fake_time import WALL, FakeTime
from ufo_mobile.core.llm.retry import RetryBudget, RetryBudgetSpent, RetryPolicy, retry_after_seconds
from ufo_mobile.settings import RetrySettings

NOW = WALL


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "7"}, 7.0),
    ({"Retry-After": "1.5"}, 1.5),  # a decimal is accepted, the name in any case
    ({"retry-after-ms": "250"}, 0.25),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # milliseconds win
    ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),  # an unreadable one is skipped
    ({"retry-after": format_datetime(NOW + timedelta(seconds=30), usegmt=True)}, 30.0),
    ({"retry-after": format_datetime(NOW - timedelta(seconds=30), usegmt=True)}, 0.0),  # past: no wait
    ({"retry-after": "Sun, 22 Nov 2026 12:00:12 -0000"}, 12.0),  # an unknown zone is read as GMT
    ({"retry-after": "-3"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": "inf"}, None),
    ({"retry-after": "tomorrow-ish"}, None),
    ({}, None),
])
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    got = retry_after_seconds(headers, now=NOW.timestamp())
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_backoff_is_full_jitter_under_a_doubling_cap() -> None:
    policy = RetryPolicy(max_retries=10, base_delay_seconds=1.0, max_delay_seconds=5.0)
    assert [policy.backoff_cap(n) for n in range(1, 6)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    for retry in range(1, 8):
        cap = policy.backoff_cap(retry)
        assert policy.backoff(retry, lambda: 0.0) == 0.0  # full jitter reaches down to no wait
        assert policy.backoff(retry, lambda: 0.999999) < cap
        assert policy.backoff(retry, lambda: 0.5) == pytest.approx(cap / 2)
    assert policy.backoff_cap(10_000) == 5.0  # no overflow however many retries


def test_policy_from_settings() -> None:
    settings = RetrySettings(max_retries=2, budget_seconds=9, base_delay_seconds=0.5, max_delay_seconds=3)
    assert RetryPolicy.from_settings(settings) == RetryPolicy(2, 9.0, 0.5, 3.0)


def test_budget_counts_retries_and_says_which_bound_ran_out() -> None:
    fake = FakeTime([0.5])
    budget = RetryBudget(RetryPolicy(max_retries=2, budget_seconds=100, base_delay_seconds=2), fake.clock())
    assert budget.next_delay(None) == (1.0, "backoff")  # cap 2, draw 0.5
    assert budget.next_delay(None) == (2.0, "backoff")  # cap 4
    with pytest.raises(RetryBudgetSpent) as info:
        budget.next_delay(None)
    assert info.value.reason == "gave up after 2 retries (model.retry.max_retries is 2)"


def test_budget_bounds_the_total_time() -> None:
    fake = FakeTime([0.999])
    budget = RetryBudget(RetryPolicy(max_retries=50, budget_seconds=10, base_delay_seconds=4, max_delay_seconds=4),
                         fake.clock())
    fake.now += 3.0  # the first attempt took 3 s
    delay, _ = budget.next_delay(None)
    fake.now += delay + 3.0  # the wait, then another 3 s attempt: 9.996 s spent
    with pytest.raises(RetryBudgetSpent) as info:
        budget.next_delay(None)
    assert info.value.reason == ("gave up after 1 retry in 10.0 s: the next wait is 4.0 s, past the retry budget "
                                 "of 10 s (model.retry.budget_seconds)")


def test_server_delay_is_honoured_exactly_but_not_past_the_budget() -> None:
    fake = FakeTime([0.0])
    budget = RetryBudget(RetryPolicy(max_retries=5, budget_seconds=30, max_delay_seconds=1), fake.clock())
    assert budget.next_delay(12.0) == (12.0, "retry-after")  # above max_delay: the server knows best
    with pytest.raises(RetryBudgetSpent) as info:
        budget.next_delay(31.0)
    assert "the server asked to wait 31.0 s, past the retry budget of 30 s" in info.value.reason
