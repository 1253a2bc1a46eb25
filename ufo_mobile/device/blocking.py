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

_GONE = ("not found", "offline", "unauthorized", "closed", "connection refused", "connection reset",
         "broken pipe", "no devices", "device still authorizing", "transport", "eof", "disconnected")


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


def run_in_daemon_thread(fn: Callable[[], T], *, name: str = "ufo-blocking") -> asyncio.Future[T]:
    """Start ``fn()`` on a new daemon thread; the future completes with its result or error.

    Cancelling the future abandons the thread (it cannot be stopped); its eventual result is dropped,
    and if the event loop has closed by then, the thread ends quietly.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(fn)
        except BaseException as exc:  # handed to the waiting coroutine, never raised in this thread
            error = exc
        try:
            loop.call_soon_threadsafe(_deliver, future, result, error)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    threading.Thread(target=work, name=name, daemon=True).start()
    return future


async def call_blocking(fn: Callable[..., T], *args: Any, limit: float, serial: str, what: str,
                        **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` on a daemon thread for at most ``limit`` seconds; map every failure."""
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            return await run_in_daemon_thread(partial(fn, *args, **kwargs), name=f"ufo-device-{what}")
    except TimeoutError as exc:
        if deadline.expired():  # our bound, not a timeout raised by the library itself
            raise DeviceTimeoutError(f"{what} timed out after {limit:g} s", serial=serial) from exc
        raise classify(exc, serial=serial, what=what) from exc
    except Exception as exc:
        raise classify(exc, serial=serial, what=what) from exc
