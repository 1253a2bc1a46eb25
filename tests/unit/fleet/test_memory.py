"""The batch process's allocator bound (fleet/memory.py): set on glibc, left alone when the user set
the variable that says otherwise."""

from __future__ import annotations

import platform
import sys

import pytest

from ufo_mobile.fleet.memory import ENV, bound_malloc

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="the bound is glibc's (mallopt); other C libraries are left alone")
def test_glibc_takes_the_bound() -> None:
    assert bound_malloc({}) is True
    assert bound_malloc({}) is True  # again: the same setting, still taken


def test_a_variable_the_user_set_wins() -> None:
    assert bound_malloc({ENV: "1048576"}) is False


def test_other_systems_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert bound_malloc({}) is False

