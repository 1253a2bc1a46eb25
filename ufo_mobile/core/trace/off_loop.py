"""Run-directory writes done off the event loop, finished even when their step is cancelled.

A run directory's writes are small, but each is a create and a rename, and ``steps.jsonl`` and
``run.json`` are synced: on a busy disk one can wait tens of milliseconds, and on the event loop
that wait holds up every other run of the process (a batch drives all its phones on one loop).
``written(fn, *args)`` runs ``fn`` in one of the process's few writing threads and waits for it;
when the wait is cancelled, the write is still finished (waited for, or done at once if it had not
begun) before the cancellation goes on, so what a run records is never cut short or racing a
later write of the same file.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

WRITING_THREADS = 4  # runs writing at once (each run writes one thing at a time)
_threads: ThreadPoolExecutor | None = None


def _writing_threads() -> ThreadPoolExecutor:
    """The process's writing threads (made on first use)."""
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(WRITING_THREADS, thread_name_prefix="ufo-write")
    return _threads


def _forget_threads() -> None:
    """In a forked child: the parent's threads are not there, so make new ones when needed."""
    global _threads
    _threads = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads)


async def written(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` in a writing thread (with this task's context variables); its result or error."""
    job: Future[T] = _writing_threads().submit(contextvars.copy_context().run, fn, *args)
    try:
        return await asyncio.wrap_future(job)
    except asyncio.CancelledError:
        if job.cancelled():  # still queued when the wait was cancelled: it never ran
            fn(*args)
        else:
            job.result()  # begun: what it writes is on disk before the cancellation goes on
        raise
