"""The boundary between async drivers and blocking device libraries (adbutils, uiautomator2).

Every blocking call runs in a worker thread under a timeout, and every error the libraries or the
socket layer raise is mapped here, once, to the ``DeviceError`` tree with the device serial:

- the call took too long                                   -> ``DeviceTimeoutError``
- the transport is gone (closed, refused, offline, unauthorized, device not found)
                                                           -> ``DeviceDisconnectedError``
- the device answered and the command failed               -> ``DeviceCommandError``

The worker thread of a timed-out call cannot be killed. Callers also pass the timeout to the
library (adbutils closes its socket when it expires) so the thread usually ends soon after, but a
frozen phone can hold a socket read forever (adbutils waits for the OKAY of a new stream with no
timeout of its own). So every call runs on its own *daemon* thread, outside any executor: the
interpreter never joins it, and a call that timed out can never keep the process alive
(``asyncio.to_thread`` would: ``asyncio.run`` and the interpreter both join executor threads).

A driver may keep ``DaemonWorkers`` for its calls: daemon threads that stay for the next call
instead of one new thread per call (starting a thread and waking it costs more CPU than a short
adb command itself). A worker whose call hangs is simply not asked again: the next call gets an
idle worker or a new one, so a frozen phone never holds up another call; an idle worker ends after
``IDLE_SECONDS``, or when the driver closes its workers.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DeviceError, DeviceTimeoutError

T = TypeVar("T")

# "shell output invalid": adbutils' shell without the v2 protocol ends each command with an exit marker;
# a stream that ends before it means the phone went away mid-command (a cable pulled, adbd killed).
_GONE = ("not found", "offline", "unauthorized", "closed", "connection refused", "connection reset",
         "broken pipe", "no devices", "device still authorizing", "transport", "eof", "disconnected",
         "shell output invalid")


def classify(exc: BaseException, *, serial: str, what: str) -> DeviceError:
    """The ``DeviceError`` for an exception raised by adbutils, uiautomator2 or the socket layer."""
    if isinstance(exc, DeviceError):
        return exc
    name = type(exc).__name__
    message = str(exc).strip() or name
    text = f"{what}: {message}"
    if isinstance(exc, TimeoutError) or "Timeout" in name:
        return DeviceTimeoutError(f"{what} timed out ({message})", serial=serial)
    if isinstance(exc, ConnectionError | EOFError) or name in ("ConnectError", "SessionBrokenError"):
        return DeviceDisconnectedError(text, serial=serial)
    lowered = message.lower()
    if isinstance(exc, OSError) or any(marker in lowered for marker in _GONE):
        return DeviceDisconnectedError(text, serial=serial)
    return DeviceCommandError(text, serial=serial)


def _deliver(future: asyncio.Future[T], result: T | None, error: BaseException | None) -> None:
    if future.done():  # the caller stopped waiting (timeout, cancellation)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)  # type: ignore[arg-type]


IDLE_SECONDS = 30.0  # an idle worker of ``DaemonWorkers`` ends after this long


class DaemonWorkers:
    """Daemon threads kept for blocking calls, one call at a time each (module docstring)."""

    def __init__(self, name: str = "ufo-blocking", idle_seconds: float = IDLE_SECONDS) -> None:
        self.name = name
        self.idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._closed = False

    def submit(self, work: Callable[[], Callable[[], None]]) -> None:
        """Run ``work()`` on an idle worker, or on a new one when none is idle (or after ``close``);
        the worker is idle again before it calls what ``work`` returned (the hand-over of the result),
        so the caller's next call finds it."""
        with self._lock:
            worker = self._idle.pop() if self._idle and not self._closed else None
        if worker is None:
            worker = _Worker(self)
            worker.start()
        worker.give(work)

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._closed

    def close(self) -> None:
        """Let the idle workers end; a call still running ends its worker when it returns (calls
        made after this run on a thread each, as without workers)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.give(None)

    def _done(self, worker: _Worker) -> bool:
        """A worker finished its call: keep it for the next one (True) or let it end (False)."""
        with self._lock:
            if self._closed:
                return False
            self._idle.append(worker)
            return True

    def _expire(self, worker: _Worker) -> bool:
        """An idle worker waited ``idle_seconds`` for a call: True if it may end (no call is on its way)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


class _Worker(threading.Thread):
    def __init__(self, workers: DaemonWorkers) -> None:
        super().__init__(name=workers.name, daemon=True)
        self.workers = workers
        self._work: Callable[[], Callable[[], None]] | None = None
        self._given = threading.Event()

    def give(self, work: Callable[[], Callable[[], None]] | None) -> None:
        """The next call (None: end)."""
        self._work = work
        self._given.set()

    def run(self) -> None:
        while True:
            if not self._given.wait(self.workers.idle_seconds):
                if self.workers._expire(self):
                    return
                continue  # a call was handed over just now
            self._given.clear()
            work, self._work = self._work, None
            if work is None:
                return
            hand_over = work()
            kept = self.workers._done(self)
            hand_over()
            if not kept:
                return


def run_in_daemon_thread(fn: Callable[[], T], *, name: str = "ufo-blocking",
                         workers: DaemonWorkers | None = None) -> asyncio.Future[T]:
    """Start ``fn()`` on a daemon thread (a new one, or one of ``workers``); the future completes with
    its result or error.

    Cancelling the future abandons the thread (it cannot be stopped); its eventual result is dropped,
    and if the event loop has closed by then, the thread ends quietly.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> Callable[[], None]:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(fn)
        except BaseException as exc:  # handed to the waiting coroutine, never raised in this thread
            error = exc

        def hand_over() -> None:
            try:
                loop.call_soon_threadsafe(_deliver, future, result, error)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        return hand_over

    if workers is not None:
        workers.submit(work)
    else:
        threading.Thread(target=lambda: work()(), name=name, daemon=True).start()
    return future


async def call_blocking(fn: Callable[..., T], *args: Any, limit: float, serial: str, what: str,
                        workers: DaemonWorkers | None = None, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` on a daemon thread (of ``workers``, if given) for at most
    ``limit`` seconds; map every failure."""
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            return await run_in_daemon_thread(partial(fn, *args, **kwargs), name=f"ufo-device-{what}",
                                              workers=workers)
    except TimeoutError as exc:
        if deadline.expired():  # our bound, not a timeout raised by the library itself
            raise DeviceTimeoutError(f"{what} timed out after {limit:g} s", serial=serial) from exc
        raise classify(exc, serial=serial, what=what) from exc
    except Exception as exc:
        raise classify(exc, serial=serial, what=what) from exc
