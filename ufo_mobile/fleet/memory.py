"""Bounds on the batch process's memory: glibc's allocator told, before the runs start, to keep at
most two arenas.

glibc gives each thread that finds the others' arenas busy an arena of its own, up to eight per
core, and each arena keeps the high-water mark of what its threads once held: with many runs in one
process, a run's screenshots and drawings (a 1080x2400 picture is 7-10 MB) leave their space in
every arena a worker thread touched. Two arenas bound that, at no cost in CPU (fixing the mmap
threshold instead, so that every big buffer is a mapping of its own, bounds memory as well but
costs the page faults of mapping every picture afresh: about 20 ms of system time a step, measured
on a 16-phone batch). ``MALLOC_ARENA_MAX`` is read when the process starts: ``python -m ufo_mobile
batch`` re-executes itself with it (``ufo_mobile/__main__.py``); a batch started otherwise (the
``ufo-mobile`` script, the API) gets the same through ``mallopt`` when its local engine is made,
which bounds only the arenas made from then on. A variable the user set wins. Other C libraries (or
other systems) are left as they are.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Mapping

M_ARENA_MAX = -8  # glibc's malloc.h
ARENAS = 2
ENV = "MALLOC_ARENA_MAX"


def bound_malloc(env: Mapping[str, str] | None = None) -> bool:
    """Keep this process to ``ARENAS`` malloc arenas (see the module's text); True when glibc took the
    setting, False when there is no glibc or the user set ``MALLOC_ARENA_MAX``."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux") or ENV in env:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)  # glibc has it; musl does not
    if mallopt is None or not hasattr(libc, "gnu_get_libc_version"):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, ARENAS))
