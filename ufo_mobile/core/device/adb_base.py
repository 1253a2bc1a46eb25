"""``AdbBase``: the connection and plumbing every part of ``AdbDriver`` stands on.

Picking the device, ``adb connect`` for ``host:port`` serials, and the three ways to run something:
``_call`` (a blocking adbutils function through ``call_blocking``: a daemon thread, a timeout, one
error mapping), ``_shell`` (a shell command's text, failing on a non-zero exit) and ``_exec_bytes``
(a command's raw standard output). Waits between polls go through ``_sleep``, injected for tests.
The mixins (``adb_text``, ``adb_apps``, ``adb_screen``, ``adb_dump``) build on these; ``AdbDriver``
(``adb.py``) puts them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import adbutils
import structlog

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.blocking import DaemonWorkers, call_blocking
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DeviceError, DeviceTimeoutError

Sleep = Callable[[float], Awaitable[None]]
POLL_ATTEMPTS = 8       # polls of a state the phone reaches on its own (an IME binding, a package registered)
POLL_FIRST_DELAY = 0.1  # seconds; doubled after each poll, at most POLL_MAX_DELAY
POLL_MAX_DELAY = 2.0
PROBE_SECONDS = 5.0     # the bound of the one "is the phone still there" check after a failed command
# MIUI/HyperOS refuse injected input until a second developer switch is on (scrcpy's FAQ)
INJECT_DENIED = "INJECT_EVENTS permission"
XIAOMI_HINT = ("the phone refuses injected taps and keys: on Xiaomi (MIUI/HyperOS) turn on "
               "'USB debugging (Security settings)' in Developer options too")


class AdbServerClient(adbutils.AdbClient):  # type: ignore[misc]
    """adbutils' client, asking the adb server for its version once, its sockets sending at once.

    adbutils asks for the version before every command it sends to a device named by serial
    (``host:tport:serial`` needs a server of version 41 or newer), which cost every shell command a
    second connection to the server. And its sockets keep Nagle's algorithm on: uiautomator2 sends
    each JSON-RPC request over one (a forwarded ``tcp:9008``) as two writes, the headers and then
    the body, and the body waited for the adb server's delayed acknowledgement of the headers (40
    ms on Linux) on every call. ``http.client`` turns that off on the sockets it opens itself
    (``TCP_NODELAY``); here every connection to the adb server does the same."""

    _version: int | None = None

    def server_version(self) -> int:
        if self._version is None:
            self._version = int(super().server_version())
        return self._version

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        connection = super().make_connection(timeout)
        with contextlib.suppress(OSError):  # not a TCP socket: nothing to turn off
            connection.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection


class AdbBase(DeviceDriver):
    """Connection, plumbing and the per-connection facts the mixins cache."""

    def __init__(self, serial: str | None = None, *, client: adbutils.AdbClient | None = None,
                 timeout: float = 20.0, start_timeout: float = 40.0, label_cache_dir: str | Path | None = None,
                 display_id: str | None = None, logger: Any = None, sleep: Sleep = asyncio.sleep) -> None:
        self.serial = serial or "?"
        self._wanted = serial
        self._client = client or AdbServerClient()
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._label_cache_dir = Path(label_cache_dir).expanduser() if label_cache_dir is not None else None
        self._display_id = display_id
        self._sleep = sleep
        self._device: adbutils.AdbDevice | None = None
        self._shell_v2 = False
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.core.device")
        self._workers = DaemonWorkers("ufo-adb")  # threads kept for the next call (blocking.py)
        self._forget_connection()

    def _forget_connection(self) -> None:
        """Facts learnt from the phone, asked again after each ``connect``."""
        self._imes: list[str] | None = None
        self._sdk: int | None = None
        self._displays: list[str] | None = None
        self._activities_first = False  # dumpsys window names no app here: ask dumpsys activity first
        self._u2_jar_checked = False  # uiautomator2's u2.jar is on the phone, whole (adb_dump)
        self._labels: dict[str, tuple[int, str]] = {}

    # --- connection ------------------------------------------------------------------------

    async def connect(self) -> None:
        if self._workers.closed:  # connected again after ``close``
            self._workers = DaemonWorkers("ufo-adb")
        device = await call_blocking(self._resolve, limit=self._timeout * 2, serial=self.serial, what="connect")
        self._device = device
        self._forget_connection()
        self.serial = device.serial or self.serial
        features = await self._call(device.get_features, what="features")
        self._shell_v2 = "shell_v2" in str(features)

    def _resolve(self) -> adbutils.AdbDevice:
        """Pick the device: the named one (``adb connect``-ing ``host:port`` serials) or the only one."""
        wanted = self._wanted
        if wanted and ":" in wanted and wanted not in {d.serial for d in self._client.device_list()}:
            answer = str(self._client.connect(wanted, timeout=self._timeout)).strip()
            # adb answers at once: "connected to H:P", "already connected to H:P", or why not
            # ("failed to connect to 'H:P': Connection refused"); only an unauthorized phone is
            # worth waiting for, and the state check below explains that case.
            if not answer.startswith(("connected to", "already connected to", "failed to authenticate")):
                raise DeviceDisconnectedError(f"adb connect {wanted}: {answer or 'no answer'}", serial=wanted)
            if not answer.startswith("failed to authenticate"):
                self._client.wait_for(wanted, state="device", timeout=self._timeout)
        states = {serial: state for serial, state in _list_states(self._client)}
        if wanted is None:
            ready = [s for s, state in states.items() if state == "device"]
            if len(ready) != 1:
                listing = ", ".join(f"{s} ({st})" for s, st in states.items()) or "none"
                raise DeviceDisconnectedError(
                    f"{'no' if not ready else 'more than one'} device ready; pass --device SERIAL. Seen: {listing}",
                    serial="-")
            wanted = ready[0]
        state = states.get(wanted)
        if state is None:
            raise DeviceDisconnectedError(f"device {wanted} not found by the adb server", serial=wanted)
        if state != "device":
            hint = {"unauthorized": "accept the USB debugging prompt on the phone",
                    "offline": "reconnect the cable or run 'adb reconnect'"}.get(state, "")
            raise DeviceDisconnectedError(f"device {wanted} is {state}" + (f": {hint}" if hint else ""), serial=wanted)
        return self._client.device(wanted)

    async def ensure_connected(self) -> None:
        if self._device is None:
            await self.connect()
            return
        await self._shell("true", what="ping")

    async def close(self) -> None:
        self._device = None
        self._workers.close()

    @property
    def device(self) -> adbutils.AdbDevice:
        """The connected adbutils device; ``DeviceDisconnectedError`` before ``connect``."""
        if self._device is None:
            raise DeviceDisconnectedError("not connected (call connect first)", serial=self.serial)
        return self._device

    @property
    def client(self) -> adbutils.AdbClient:
        """The adb server client this driver (and the uiautomator2 it starts) talks through."""
        return self._client

    async def dump_ui_tree(self) -> str:
        """The UI dump and nothing started besides (``adb_dump``); this default is ``get_ui_tree``."""
        return await self.get_ui_tree()

    def screen_touched(self) -> None:
        """The driver acted on the screen (a tap, a swipe, text typed): what it read of the screen
        before is out of date (``adb_dump`` keeps such a read)."""

    # --- plumbing --------------------------------------------------------------------------

    async def _call(self, fn: Any, *args: Any, what: str, limit: float | None = None, **kwargs: Any) -> Any:
        """Call a blocking library function; ``kwargs`` go to ``fn``, ``limit`` bounds the wait. A
        failure the library reports as a failed command is checked against a phone that went away
        (``confirm_failure``)."""
        try:
            return await call_blocking(partial(fn, *args, **kwargs), limit=limit or self._timeout,
                                       serial=self.serial, what=what, workers=self._workers)
        except DeviceCommandError as exc:
            raise await self.confirm_failure(exc) from exc

    async def confirm_failure(self, error: DeviceCommandError) -> DeviceError:
        """What a failed command means: ``error`` itself while the phone still answers, or the phone
        lost. A phone that goes away in the middle of a command (adbd killed, a cable pulled) does
        not always say so: the adb server just ends the stream, and the command looks like one that
        printed nothing (an empty screenshot) or stopped short (a stream without its end, a
        connection that gives no OKAY). One short ``true`` in the shell tells the two apart."""
        if self._device is None:
            return error
        try:
            await self._probe()
        except (DeviceDisconnectedError, DeviceTimeoutError) as gone:
            kind = DeviceDisconnectedError if isinstance(gone, DeviceDisconnectedError) else DeviceTimeoutError
            return kind(f"{error.detail}; then the phone stopped answering ({gone.detail})", serial=self.serial)
        except DeviceCommandError as odd:  # the probe stopped short too: nothing answers on that transport
            return DeviceDisconnectedError(f"{error.detail}; then the phone stopped answering ({odd.detail})",
                                           serial=self.serial)
        return error

    async def _probe(self) -> None:
        """One ``true`` in the shell, bounded by ``PROBE_SECONDS`` (``confirm_failure``)."""
        await call_blocking(self.device.shell2, "true", timeout=PROBE_SECONDS, v2=self._shell_v2,
                            limit=PROBE_SECONDS + 1.0, serial=self.serial, what="ping", workers=self._workers)

    async def _shell(self, command: str, *, what: str, check: bool = True, seconds: float | None = None) -> str:
        """Run ``command`` in the device shell; raise ``DeviceCommandError`` on a non-zero exit."""
        limit = seconds or self._timeout
        # adbutils gets the same limit, so a timed-out call also closes its socket and ends its thread
        result = await self._call(self.device.shell2, command, timeout=limit, v2=self._shell_v2,
                                  what=what, limit=limit + 1.0)
        output = str(result.output)
        if check and result.returncode != 0:
            if INJECT_DENIED in output:
                raise DeviceCommandError(f"{what}: {XIAOMI_HINT}", serial=self.serial)
            raise DeviceCommandError(f"{what}: exit {result.returncode}: {output.strip()[:300]}", serial=self.serial)
        return output

    async def _exec_bytes(self, command: str, *, what: str) -> bytes:
        """The raw standard output of ``command`` (no terminal: binary-safe). Messages the command
        prints on stderr are merged in, so callers send them elsewhere or look past them."""
        data = await self._call(self.device.shell, command, encoding=None, timeout=self._timeout, what=what,
                                limit=self._timeout + 1.0)
        return bytes(data)

    def _exec_bytes_blocking(self, command: str) -> bytes:
        """``_exec_bytes`` for code that already runs on a worker thread (the APK reader)."""
        return bytes(self.device.shell(command, encoding=None, timeout=self._timeout))

    async def _sdk_level(self) -> int:
        """``ro.build.version.sdk`` (0 when the phone does not say)."""
        if self._sdk is None:
            value = (await self._shell("getprop ro.build.version.sdk", what="sdk", check=False)).strip()
            self._sdk = int(value) if value.isdigit() else 0
        return self._sdk

    async def _poll(self, ready: Callable[[], Awaitable[bool]], *, attempts: int = POLL_ATTEMPTS) -> bool:
        """Ask ``ready()`` until it says yes, at most ``attempts`` times, pausing longer each time."""
        delay = POLL_FIRST_DELAY
        for attempt in range(attempts):
            if await ready():
                return True
            if attempt < attempts - 1:
                await self._sleep(delay)
                delay = min(POLL_MAX_DELAY, delay * 2)
        return False


def _list_states(client: adbutils.AdbClient) -> list[tuple[str, str]]:
    """``(serial, state)`` for every device the server knows, unauthorized and offline included."""
    return [(info.serial, info.state) for info in client.list()]
