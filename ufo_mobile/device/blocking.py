"""The boundary between async drivers and blocking device libraries (adbutils, uiautomator2).

Every blocking call runs in a worker thread under a timeout, and every error the libraries or the
socket layer raise is mapped here, once, to the ``DeviceError`` tree with the device serial:

- the call took too long                                   -> ``DeviceTimeoutError``
- the transport is gone (closed, refused, offline, unauthorized, device not found)
                                                           -> ``DeviceDisconnectedError``
- the device answered and the command failed               -> ``DeviceCommandError``

The worker thread of a timed-out call cannot be killed; callers also pass the timeout to the
library (adbutils closes its socket when it expires) so the thread ends soon after.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
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


async def call_blocking(fn: Callable[..., T], *args: Any, limit: float, serial: str, what: str,
                        **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` in a thread for at most ``limit`` seconds; map every failure."""
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            return await asyncio.to_thread(fn, *args, **kwargs)
    except TimeoutError as exc:
        if deadline.expired():  # our bound, not a timeout raised by the library itself
            raise DeviceTimeoutError(f"{what} timed out after {limit:g} s", serial=serial) from exc
        raise classify(exc, serial=serial, what=what) from exc
    except Exception as exc:
        raise classify(exc, serial=serial, what=what) from exc
