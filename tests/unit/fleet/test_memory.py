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
    assert bound_malloc({ENV: "8"}) is False


def test_other_systems_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert bound_malloc({}) is False



def test_python_m_batch_runs_again_with_two_arenas() -> None:
    from ufo_mobile.__main__ import ARENAS_ENV, batch_environment

    assert batch_environment(["batch", "demo", "--devices", "sim:16"], {"PATH": "/bin"}, "linux") == \
        {"PATH": "/bin", ARENAS_ENV: "2"}
    assert batch_environment(["batch", "demo"], {ARENAS_ENV: "8"}, "linux") is None  # the user's value, once
    assert batch_environment(["run", "demo"], {}, "linux") is None
    assert batch_environment([], {}, "linux") is None
    assert batch_environment(["batch", "demo"], {}, "darwin") is None
