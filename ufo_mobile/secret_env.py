"""Secrets that arrive in environment variables, taken out of the environment once read.

An API key, a ``credentials.env`` variable or a service token is read through ``take``: its value is
kept here, the variable is removed from ``os.environ`` (so no process the runtime starts inherits it),
and its text is overwritten in the process's initial environment block, which is what
``/proc/<pid>/environ`` shows to anyone who may read it. Later reads (the next run of an ``eval`` in
the same process, say) get the kept value through ``environ()``, which every reader of the
environment uses: the live environment, with what was taken beside it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections import ChainMap
from collections.abc import Mapping

_taken: dict[str, str] = {}


def environ() -> Mapping[str, str]:
    """The environment as the runtime reads it: ``os.environ``, and the variables ``take`` removed."""
    return ChainMap(os.environ, _taken)


def take(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of variable ``name`` (None when unset), read once and then out of the environment.

    ``env`` other than the process's own (tests, a host passing its own mapping) is only read."""
    if env is not None and env is not os.environ and not isinstance(env, ChainMap):
        return env.get(name)
    if name in _taken:
        return _taken[name]
    value = os.environ.get(name)
    if value is None:
        return None
    _taken[name] = value
    _wipe(name)
    os.environ.pop(name, None)
    return value


def _wipe(name: str) -> None:
    """Overwrite the value of ``name`` where the C environment holds it (at start-up, the block that
    ``/proc/<pid>/environ`` reads), before the variable is removed."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        libc.getenv.restype = ctypes.c_void_p
        address = libc.getenv(name.encode())
    except (OSError, AttributeError):
        return  # no C library to reach: the variable is still removed
    if address:
        size = len(ctypes.string_at(address))
        ctypes.memset(address, ord("x"), size)


def forget() -> None:
    """Drop what was taken (the values are not put back): for a process that sets up its environment
    anew, such as a test run."""
    _taken.clear()
