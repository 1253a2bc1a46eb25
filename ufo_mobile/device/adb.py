"""``AdbDriver``: a phone over the adb server, through adbutils only.

Every call goes through ``call_blocking`` (a worker thread, a timeout, one error mapping). Shell
commands are built from fixed words plus ``shlex.quote``d arguments; text typed by the model is
never placed in a shell command line as-is:

- printable ASCII without ``%s`` is typed with ``input text`` (spaces sent as ``%s``, the whole
  argument shell-quoted): exact, because that is the only rewrite Android's ``input`` applies;
- anything else (non-ASCII, newlines, a literal ``%s``) goes through the ADB Keyboard IME
  (``com.android.adbkeyboard/.AdbIME``) as base64, whose alphabet the shell cannot misread. The
  previous input method is restored afterwards. Without that IME the call fails with a clear
  message (use ``device.kind: u2``, which types through the uiautomator2 clipboard, or install it).
"""

from __future__ import annotations

import base64
import re
import shlex
import uuid
from functools import partial
from typing import Any, ClassVar

import adbutils

from ufo_mobile.device.base import KEYCODES, AppInfo, CurrentApp, DeviceDriver, normalize_key
from ufo_mobile.device.blocking import call_blocking
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError

ADB_KEYBOARD = "com.android.adbkeyboard/.AdbIME"
_PLAIN_TEXT = re.compile(r"[\x20-\x7e]*")
_PACKAGE = re.compile(r"[A-Za-z][\w]*(\.[\w]+)+")
_ACTIVITY = re.compile(r"[\w.$/]+")
_CLEAR_KEYS = 64  # DELs sent after MOVE_END when no IME can clear the field in one go

# Labels of common system apps; other apps get a label derived from the package name, because
# stock Android has no shell command that prints an app's label.
KNOWN_LABELS = {
    "com.android.settings": "Settings", "com.android.chrome": "Chrome", "com.android.vending": "Play Store",
    "com.google.android.apps.messaging": "Messages", "com.android.contacts": "Contacts",
    "com.google.android.contacts": "Contacts", "com.google.android.dialer": "Phone",
    "com.android.dialer": "Phone", "com.google.android.gm": "Gmail", "com.google.android.youtube": "YouTube",
    "com.google.android.apps.maps": "Maps", "com.google.android.calendar": "Calendar",
    "com.android.camera2": "Camera", "com.google.android.GoogleCamera": "Camera",
    "com.google.android.apps.photos": "Photos", "com.google.android.deskclock": "Clock",
    "com.android.deskclock": "Clock", "com.google.android.calculator": "Calculator",
    "com.android.calculator2": "Calculator", "com.google.android.apps.docs": "Drive",
    "com.whatsapp": "WhatsApp", "org.telegram.messenger": "Telegram", "com.android.launcher3": "Launcher",
    "com.example.notes": "Notes",
}


def label_for(package: str) -> str:
    if package in KNOWN_LABELS:
        return KNOWN_LABELS[package]
    tail = package.rsplit(".", 1)[-1]
    return tail[:1].upper() + tail[1:]


def typeable_with_input_text(text: str) -> bool:
    """True when ``input text`` reproduces ``text`` exactly."""
    return bool(_PLAIN_TEXT.fullmatch(text)) and "%s" not in text


class AdbDriver(DeviceDriver):
    supported: ClassVar[frozenset[str]] = frozenset({
        "connect", "ensure_connected", "close", "tap", "long_press", "swipe", "drag", "input_text", "press_key",
        "start_app", "install_app", "list_packages", "get_apps", "screenshot", "get_ui_tree", "get_date",
        "current_app", "screen_size",
    })

    def __init__(self, serial: str | None = None, *, client: adbutils.AdbClient | None = None,
                 timeout: float = 20.0, logger: Any = None) -> None:
        self.serial = serial or "?"
        self._wanted = serial
        self._client = client or adbutils.AdbClient()
        self._timeout = timeout
        self._device: adbutils.AdbDevice | None = None
        self._shell_v2 = False
        self._ime: str | None = None  # "" once we know the ADB Keyboard is not installed
        self._log = logger

    # --- connection ------------------------------------------------------------------------

    async def connect(self) -> None:
        device = await call_blocking(self._resolve, limit=self._timeout * 2, serial=self.serial, what="connect")
        self._device = device
        self._ime = None
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

    @property
    def device(self) -> adbutils.AdbDevice:
        if self._device is None:
            raise DeviceDisconnectedError("not connected (call connect first)", serial=self.serial)
        return self._device

    # --- plumbing --------------------------------------------------------------------------

    async def _call(self, fn: Any, *args: Any, what: str, limit: float | None = None, **kwargs: Any) -> Any:
        """Call a blocking library function; ``kwargs`` go to ``fn``, ``limit`` bounds the wait."""
        return await call_blocking(partial(fn, *args, **kwargs), limit=limit or self._timeout,
                                   serial=self.serial, what=what)

    async def _shell(self, command: str, *, what: str, check: bool = True, seconds: float | None = None) -> str:
        """Run ``command`` in the device shell; raise ``DeviceCommandError`` on a non-zero exit."""
        limit = seconds or self._timeout
        # adbutils gets the same limit, so a timed-out call also closes its socket and ends its thread
        result = await self._call(self.device.shell2, command, timeout=limit, v2=self._shell_v2,
                                  what=what, limit=limit + 1.0)
        output = str(result.output)
        if check and result.returncode != 0:
            raise DeviceCommandError(f"{what}: exit {result.returncode}: {output.strip()[:300]}", serial=self.serial)
        return output

    # --- input -----------------------------------------------------------------------------

    async def tap(self, x: int, y: int) -> None:
        await self._shell(f"input tap {int(x)} {int(y)}", what="tap")

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self._shell(f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}", what="swipe")

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        await self._shell(f"input draganddrop {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}",
                          what="drag")

    async def press_key(self, key: str) -> None:
        name = normalize_key(key)
        if name == "select_all":
            await self._shell("input keycombination 113 29", what="press_key select_all")  # CTRL+A
            return
        await self._shell(f"input keyevent {KEYCODES[name]}", what=f"press_key {name}")

    async def input_text(self, text: str, clear: bool = False) -> None:
        if clear or not typeable_with_input_text(text):
            ime = await self._adb_keyboard()
        else:
            ime = None
        if clear:
            await self._clear(ime)
        if not text:
            return
        if typeable_with_input_text(text):
            await self._shell("input text " + shlex.quote(text.replace(" ", "%s")), what="input_text")
            return
        if ime is None:
            raise DeviceCommandError(
                "this text needs the ADB Keyboard IME (com.android.adbkeyboard) to be typed exactly over adb; "
                "install it, or use device.kind: u2", serial=self.serial)
        payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
        await self._with_ime(ime, f"am broadcast -a ADB_INPUT_B64 --es msg {payload}", what="input_text")

    async def _adb_keyboard(self) -> str | None:
        """The ADB Keyboard IME id when it is installed, else None (asked once per connection)."""
        if self._ime is None:
            listing = await self._shell("ime list -s -a", what="ime list", check=False)
            self._ime = ADB_KEYBOARD if ADB_KEYBOARD in listing.split() else ""
        return self._ime or None

    async def _with_ime(self, ime: str, command: str, *, what: str) -> None:
        previous = (await self._shell("settings get secure default_input_method", what="ime", check=False)).strip()
        if previous != ime:
            await self._shell(f"ime enable {ime} && ime set {ime}", what="ime set")
        try:
            out = await self._shell(command, what=what)
            if "result=0" not in out and "result=-1" not in out:
                raise DeviceCommandError(f"{what}: the IME did not take the text: {out.strip()[:200]}",
                                         serial=self.serial)
        finally:
            if previous and previous != ime and previous != "null":
                await self._shell(f"ime set {shlex.quote(previous)}", what="ime restore", check=False)

    async def _clear(self, ime: str | None) -> None:
        if ime is not None:
            await self._with_ime(ime, "am broadcast -a ADB_CLEAR_TEXT", what="clear text")
            return
        dels = " ".join(["67"] * _CLEAR_KEYS)
        await self._shell(f"input keyevent 123 && input keyevent {dels}", what="clear text")

    # --- apps ------------------------------------------------------------------------------

    async def start_app(self, package: str, activity: str | None = None) -> None:
        if not _PACKAGE.fullmatch(package):
            raise DeviceCommandError(f"not a package name: {package!r}", serial=self.serial)
        if activity:
            if not _ACTIVITY.fullmatch(activity):
                raise DeviceCommandError(f"not an activity name: {activity!r}", serial=self.serial)
            component = activity if "/" in activity else f"{package}/{activity}"
            out = await self._shell(f"am start -W -n {shlex.quote(component)}", what="start_app")
        else:
            out = await self._shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1",
                                    what="start_app", check=False)
        if "No activities found" in out or "Error" in out or "does not exist" in out:
            raise DeviceCommandError(f"cannot start {package}: {out.strip()[:200]}", serial=self.serial)

    async def install_app(self, apk_path: str) -> None:
        await self._call(self.device.install, apk_path, what="install_app", limit=max(self._timeout, 120.0))

    async def list_packages(self) -> list[str]:
        out = await self._shell("pm list packages", what="list_packages")
        return sorted(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("package:"))

    async def get_apps(self) -> list[AppInfo]:
        return [AppInfo(p, label_for(p)) for p in await self.list_packages()]

    async def current_app(self) -> CurrentApp:
        info = await self._call(self.device.app_current, what="current_app")
        return CurrentApp(info.package, info.activity or "")

    # --- observation -----------------------------------------------------------------------

    async def screenshot(self) -> bytes:
        data = await self._call(self.device.shell, "screencap -p", encoding=None, timeout=self._timeout,
                                what="screenshot", limit=self._timeout + 1.0)
        png = bytes(data)
        if not png.startswith(b"\x89PNG\r\n\x1a\n"):
            raise DeviceCommandError(f"screencap returned no PNG ({len(png)} bytes: {png[:60]!r})",
                                     serial=self.serial)
        return png

    async def get_ui_tree(self) -> str:
        """Dump to a fresh path, read it back, delete it: a stale dump can never be read."""
        path = f"/data/local/tmp/ufo-dump-{uuid.uuid4().hex}.xml"
        out = await self._shell(f"uiautomator dump {path}", what="uiautomator dump", check=False)
        if path not in out:
            raise DeviceCommandError(f"uiautomator dump failed: {out.strip()[:200]}", serial=self.serial)
        try:
            data = await self._call(self.device.sync.read_bytes, path, what="read dump")
        finally:
            await self._shell(f"rm -f {path}", what="rm dump", check=False)
        return bytes(data).decode("utf-8", errors="replace")

    async def get_date(self) -> str:
        return (await self._shell("date", what="date")).strip()

    async def screen_size(self) -> tuple[int, int]:
        size = await self._call(self.device.window_size, what="screen_size")
        return int(size.width), int(size.height)


def _list_states(client: adbutils.AdbClient) -> list[tuple[str, str]]:
    """``(serial, state)`` for every device the server knows, unauthorized and offline included."""
    return [(info.serial, info.state) for info in client.list()]
