"""Bounds on the batch process's memory: glibc's allocator told, before the runs start, to give big
buffers back to the system when they are freed.

A run's screenshots and drawings are buffers of megabytes (a 1080x2400 picture is 7-10 MB). glibc
serves such a buffer with its own mapping, but after the first one is freed it raises that bound
(its "dynamic mmap threshold") to the buffer's size, so later buffers come from the heaps of its
arenas, where freed space stays with the process. With many runs in one process, each thread's
arena keeps the high-water mark of the pictures it once held. Fixing the bound (``mallopt``) keeps
every big buffer a mapping of its own that goes back when freed. The environment variables
(``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_ARENA_MAX``) are read when the process starts, so a batch
sets the same through ``mallopt`` instead; a variable the user set wins. Other C libraries (or
other systems) are left as they are.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Mapping

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024  # glibc's starting value, kept fixed from now on
ENV = "MALLOC_MMAP_THRESHOLD_"


def bound_malloc(env: Mapping[str, str] | None = None) -> bool:
    """Keep big buffers as mappings of their own in this process (see the module's text); True when
    glibc took the setting, False when there is no glibc or the user set ``MALLOC_MMAP_THRESHOLD_``."""
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
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
