"""``python -m ufo_mobile``: the command line (``ufo_mobile/cli/__init__.py``).

``batch`` runs many tasks in this one process, and glibc's allocator then keeps memory in up to eight
arenas per core: on Linux the command re-executes itself once, before importing anything, with
``MALLOC_ARENA_MAX=2`` (read only when a process starts; docs/batch.md, "Memory"). A value the user
set is kept as it is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

ARENAS_ENV = "MALLOC_ARENA_MAX"
BATCH_ARENAS = "2"


def batch_environment(argv: Sequence[str], env: Mapping[str, str],
                      platform: str = sys.platform) -> dict[str, str] | None:
    """The environment to re-execute ``python -m ufo_mobile ARGV`` with, or None to go on as it is."""
    if not argv or argv[0] != "batch" or not platform.startswith("linux") or ARENAS_ENV in env:
        return None
    return {**env, ARENAS_ENV: BATCH_ARENAS}


if __name__ == "__main__":
    again = batch_environment(sys.argv[1:], os.environ)
    if again is not None:
        try:
            os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], again)
        except OSError:  # not re-executed: the batch runs as it is, with the local engine's own bound
            pass
    from ufo_mobile.cli import main

    sys.exit(main())
