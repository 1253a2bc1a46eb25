"""The UI dump over adb: ``uiautomator dump``, what its failures mean, and the uiautomator2 fallback.

``uiautomator dump`` refuses at times on real phones (AOSP DumpCommand; see DESIGN's notes): it
waits up to 10 s for idle and gives up on animated screens (``ERROR: could not get idle state.``),
finds no window for a moment after an app changes (``ERROR: null root node returned by
UiTestAutomationBridge.``), and cannot connect while another UiAutomation holds the accessibility
bridge: a uiautomator2 server left running (``... already registered!``, openatx/uiautomator2 #298,
#1013). ``get_ui_tree`` raises ``DumpUnavailableError`` (``kind``: ``idle``,
``null_root``, ``conflict``, ``other`` for an empty dump) so that the caller retries with backoff.
Two refusals are handled here, each with one more dump at once: a conflict (the leftover server is
stopped first), and a null root. The null root comes from ``getRootInActiveWindow`` while the
window that just replaced the old one has not reached the accessibility service yet; the next
``uiautomator dump`` starts a new process, connects a new UiAutomation and waits for a second of
quiet again (``waitForIdle(1000, 10000)``) before it asks, so it is its own pause: the caller's
backoff (half a second and more) would only add to it. Real phones find no root now and then
(one dump in five on a Pixel 2 with Android 9: dtmilano/AndroidViewClient #257), and on the
emulated ``pixel-14`` the first dump after every app change does.

An ``idle`` refusal is predicted: the screen that refused (a video, an animation) is still moving
at the next observation, where ``uiautomator dump`` would wait its 10 s again for the same answer.
So, after one, the next ``IDLE_SKIPS`` calls refuse at once (kind ``idle``, nothing run on the
phone) and the caller goes straight to the fallback, until the driver starts an app or presses a
key (``screen_changed``); then ``uiautomator dump`` is asked again. After an idle refusal, real or
predicted, the caller's next call is the fallback (``ui/provider.py`` goes there at once), so
``get_ui_tree`` starts the fallback's dump before it raises: it runs while the caller still waits for
its screenshot, and ``fallback_ui_tree`` hands it over, or dumps anew when a tap, a swipe, a key or
typed text has reached the screen since (``screen_touched``). ``dump_ui_tree`` is the dump without
that, for callers that never ask for the fallback (reading a typed field back, the u2 driver).

``fallback_ui_tree`` dumps through uiautomator2 (its server waits for idle only briefly): start
the server with our own adb client, or use the one kept running, and ``dumpWindowHierarchy``, each
bounded by the start timeout. The server is kept running after the dump (one start for an animated
screen, not one a call) until the next ``uiautomator dump``, which stops it in its own shell
command (``pkill``, then the dump: one round trip, so that ``uiautomator dump`` finds the
accessibility bridge free), or until the driver closes.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import uuid
from typing import Any

import adbutils

from ufo_mobile.core.device.adb_base import AdbBase
from ufo_mobile.core.device.uixml import order_roots, window_count
from ufo_mobile.errors import DeviceCommandError, DeviceError, DumpUnavailableError

U2_MAIN = "com.wetest.uia2.Main"   # the uiautomator2 server (u2.jar, started by app_process)
U2_APP = "com.github.uiautomator"  # the older server, an instrumentation of uiautomator2's app
MAX_DEPTH = 50
IDLE_SKIPS = 2  # calls after an idle refusal that refuse at once (module docstring)
STOP_U2 = f"pkill -f {U2_MAIN}; am force-stop {U2_APP}"  # a uiautomator2 server of either generation
_KINDS = (("could not get idle state", "idle"), ("null root node returned", "null_root"),
          ("already registered", "conflict"))


def dump_failure_kind(output: str) -> str | None:
    """The ``DumpUnavailableError`` kind of a failed ``uiautomator dump``'s output, or None when the
    failure is not one a retry may cure."""
    lowered = output.lower()
    for marker, kind in _KINDS:
        if marker in lowered:
            return kind
    return "other" if not output.strip() else None


def pin_client(u2_device: Any, client: adbutils.AdbClient) -> None:
    """Make a uiautomator2 ``Device`` find its phone through ``client`` only. uiautomator2's
    ``_wait_for_device`` (its reconnect path) asks the global ``adbutils.adb`` (port 5037), which
    starts a second adb server there when ours runs elsewhere, and then cannot see the phone."""
    serial = u2_device.adb_device.serial

    def wait_for_device(timeout: float = 10) -> adbutils.AdbDevice:
        client.wait_for(serial, state="device", timeout=timeout)
        return client.device(serial)

    u2_device._wait_for_device = wait_for_device


def u2_connect(device: adbutils.AdbDevice, client: adbutils.AdbClient, *, jar_checked: bool = False) -> Any:
    """``uiautomator2.connect`` on our own device object (blocking: starts the server if needed).
    ``jar_checked``: the server's ``u2.jar`` was found on the phone, whole, by an earlier start over
    this connection, so its check (an MD5 of 3.7 MB on each side, one more round trip) is skipped."""
    import uiautomator2

    u2_device = (_device_with_checked_jar() if jar_checked else uiautomator2.Device)(device)
    pin_client(u2_device, client)
    return u2_device


@functools.cache
def _device_with_checked_jar() -> type:
    """uiautomator2's ``Device`` that does not check its ``u2.jar`` on the phone before a start."""
    import uiautomator2

    class CheckedJarDevice(uiautomator2.Device):  # type: ignore[misc]
        def _setup_jar(self) -> None:
            """Checked by an earlier start (``u2_connect``)."""

    return CheckedJarDevice


def u2_release(u2_device: Any) -> None:
    """Close the stream that keeps the server running, without the 10 s wait for it to go (the
    caller stops what survives with ``pkill``), and drop the exit hook uiautomator2 registered."""
    try:
        u2_device.stop_uiautomator(wait=False)
    finally:
        atexit.unregister(u2_device.stop_uiautomator)


def _u2_dump(u2_device: Any) -> str:
    return str(u2_device.jsonrpc.dumpWindowHierarchy(False, MAX_DEPTH) or "")


class AdbDumpMixin(AdbBase):
    """``AdbDriver``'s UI hierarchy: ``uiautomator dump``, and the dump through uiautomator2 when it refuses."""

    _idle_skips = 0  # predicted idle refusals left (module docstring)
    _warm_u2: Any = None  # the fallback's uiautomator2 server, kept until the next uiautomator dump
    _ahead: asyncio.Future[str] | None = None  # the fallback's dump, started at an idle refusal
    _ahead_fresh = False  # nothing has acted on the screen since it started

    def screen_changed(self) -> None:
        """The driver changed the screen (an app started, a key pressed): predict nothing of it."""
        self._idle_skips = 0
        self.screen_touched()

    def screen_touched(self) -> None:
        """The driver acted on the screen: a fallback dump started before is not this screen's."""
        self._ahead_fresh = False

    async def get_ui_tree(self) -> str:
        """``dump_ui_tree``; after an idle refusal the fallback's dump is started at once (module docstring)."""
        try:
            return await self.dump_ui_tree()
        except DumpUnavailableError as exc:
            if exc.kind == "idle" and self._ahead is None:
                self._dump_ahead()
            raise

    async def dump_ui_tree(self) -> str:
        """The hierarchy by ``uiautomator dump`` (module docstring); nothing started ahead: for
        callers that do not go on to ``fallback_ui_tree``."""
        await self._take_ahead()  # taken and never asked for: its server is stopped below
        if self._idle_skips > 0:
            self._idle_skips -= 1
            raise DumpUnavailableError("uiautomator dump skipped: this screen was never idle at the last dump",
                                       serial=self.serial, kind="idle")
        try:
            return await self._first_dump()
        except DumpUnavailableError as exc:
            if exc.kind == "null_root":  # the new window is still on its way (module docstring)
                return await self._dump_once()
            if exc.kind == "idle":
                self._idle_skips = IDLE_SKIPS
            if exc.kind != "conflict":
                raise
            self._log.warning("u2_server_blocks_dump", serial=self.serial,
                              message="a uiautomator2 server holds the accessibility bridge: stopping it "
                                      "(pkill -f com.wetest.uia2.Main) and dumping again")
        await self.stop_u2_server()
        return await self._dump_once()

    async def _first_dump(self) -> str:
        """A call's first ``uiautomator dump``; a kept fallback server is stopped in the same command,
        and our stream to it closed meanwhile (off the event loop: closing waits for its reader)."""
        u2_device, self._warm_u2 = self._warm_u2, None
        if u2_device is None:
            return await self._dump_once()
        release = asyncio.ensure_future(self._call(u2_release, u2_device, what="release uiautomator2"))
        try:
            return await self._dump_once(stop_u2=True)
        finally:
            with contextlib.suppress(DeviceError):
                await release

    async def _dump_once(self, *, stop_u2: bool = False) -> str:
        """One ``uiautomator dump`` to a fresh path, read back and deleted in the same shell command
        (one round trip): a stale dump can never be read. ``stop_u2``: the fallback's server is
        stopped first, in that same command. The dump's own line (``UI hierchary dumped to: PATH``)
        comes before the file's text; without it the dump was refused, and the output says why."""
        path = f"/data/local/tmp/ufo-dump-{uuid.uuid4().hex}.xml"
        dump = f"uiautomator dump {path} && cat {path} 2>/dev/null; rm -f {path}"
        out = await self._shell(f"{STOP_U2}; {dump}" if stop_u2 else dump, what="uiautomator dump", check=False)
        marker = f"UI hierchary dumped to: {path}"
        at = out.find(marker)
        if at < 0:
            kind = dump_failure_kind(out)
            message = f"uiautomator dump: {out.strip()[:200] or 'no output'}"
            if kind is None:
                raise DeviceCommandError(message, serial=self.serial)
            raise DumpUnavailableError(message, serial=self.serial, kind=kind)
        xml = out[at + len(marker):]
        if not xml.strip():
            raise DumpUnavailableError("uiautomator dump wrote an empty file", serial=self.serial, kind="other")
        return xml.lstrip("\r\n")

    async def stop_u2_server(self) -> None:
        """Stop a uiautomator2 server, ours or left over (both generations), so that the
        accessibility bridge is free for ``uiautomator dump``."""
        await self._shell(STOP_U2, what="stop uiautomator2 server", check=False)

    async def fallback_ui_tree(self) -> str:
        """The hierarchy through uiautomator2 (module docstring); windows top-most first: the dump
        started at the idle refusal when nothing has acted on the screen since, else a new one."""
        self._log.warning("ui_dump_through_u2", serial=self.serial,
                          message="uiautomator dump keeps refusing: dumping through uiautomator2")
        fresh = self._ahead_fresh
        ahead = await self._take_ahead(keep=fresh)
        return ahead if ahead is not None else await self._dump_through_u2()

    def _dump_ahead(self) -> None:
        """Start the fallback's dump now, while the caller still waits for its screenshot: after an
        idle refusal the fallback is its next call (``ui/provider.py``)."""
        self._ahead, self._ahead_fresh = asyncio.ensure_future(self._dump_through_u2()), True
        # a dump never asked for must not end as an unretrieved error when the driver is dropped
        self._ahead.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def _take_ahead(self, *, keep: bool = False) -> str | None:
        """Wait for the dump started ahead, if any: its text with ``keep`` (its errors raised), else
        None (its errors dropped: the server it started is kept, and stopped as any other)."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        if keep:
            return await ahead
        with contextlib.suppress(DeviceError):
            await ahead
        return None

    async def _dump_through_u2(self) -> str:
        listing = None
        try:
            if self._warm_u2 is None:
                self._warm_u2 = await self._start_u2()
            # the stacking order is read while the server dumps: one round trip less to wait for
            listing = asyncio.ensure_future(self._window_listing())
            xml = await self._call(_u2_dump, self._warm_u2, what="uiautomator2 dump", limit=self._start_timeout)
        except BaseException:
            if listing is not None:
                listing.cancel()
            await self._stop_fallback_server()
            raise
        windows = await listing
        if not xml.strip():
            raise DumpUnavailableError("uiautomator2 gave an empty dump", serial=self.serial, kind="other")
        return xml if windows is None or window_count(xml) < 2 else order_roots(xml, windows)

    async def _start_u2(self) -> Any:
        """Start the fallback's server: its jar checked (and pushed when missing or changed) at the
        first start over this connection, not at the next ones unless a start fails without it."""
        if self._u2_jar_checked:
            try:
                return await self._call(u2_connect, self.device, self._client, jar_checked=True,
                                        what="start uiautomator2", limit=self._start_timeout)
            except DeviceCommandError as exc:  # the jar gone or changed? checked (and pushed) below
                self._log.warning("u2_start_failed", serial=self.serial, error=str(exc))
                self._u2_jar_checked = False
        server = await self._call(u2_connect, self.device, self._client, what="start uiautomator2",
                                  limit=self._start_timeout)
        self._u2_jar_checked = True
        return server

    async def _stop_fallback_server(self) -> None:
        """Stop the fallback's uiautomator2 server (and any other: ``stop_u2_server``)."""
        u2_device, self._warm_u2 = self._warm_u2, None
        try:
            if u2_device is not None:
                u2_release(u2_device)
        finally:
            await self.stop_u2_server()

    async def close(self) -> None:
        try:
            await self._take_ahead()
            if self._warm_u2 is not None:
                await self._stop_fallback_server()
        except DeviceError as exc:  # a phone gone: nothing left to stop
            self._log.warning("u2_server_not_stopped", serial=self.serial, error=str(exc))
        finally:
            await super().close()

    async def ordered_windows(self, xml: str) -> str:
        """A multi-window dump with its roots in stacking order (``uixml.order_roots``)."""
        if window_count(xml) < 2:
            return xml
        windows = await self._window_listing()
        return xml if windows is None else order_roots(xml, windows)

    async def _window_listing(self) -> str | None:
        """``dumpsys window windows`` (the stacking order), or None when the phone will not say."""
        try:
            return await self._shell("dumpsys window windows", what="dumpsys window", check=False)
        except DeviceError as exc:
            self._log.warning("window_order_unknown", serial=self.serial, error=str(exc))
            return None
