"""``IOSDriver``: an iPhone through WebDriverAgent (WDA), the XCTest HTTP server Appium and wdapy use.

WDA runs on the phone (started from Xcode, ``xcodebuild test``, go-ios or tidevice) and answers HTTP on
port 8100, which ``iproxy 8100 8100`` (or go-ios' forward) brings to this machine. The driver talks to
it through ``wdapy`` (openatx, the uiautomator2 authors' WDA client), on daemon threads under
``device.command_timeout_seconds`` (``blocking.call_blocking``), so no call can hang a run.

What it does, in WDA's terms (``supported`` lists exactly these):

- taps, long presses (``touchAndHold``), swipes and drags (``dragfromtoforduration``) at screen pixels,
  which WDA takes in points: every coordinate is divided by the screen's ``scale`` (3 on current
  iPhones), and the screenshot (pixels) and the tree (points, made pixels by ``wda_tree``) agree;
- typing into the focused field (``/wda/keys``); ``clear`` first deletes what the field holds with
  backspaces (WDA has no clear without an element, and does not say which field has the focus: as
  many as the longest text on the screen);
- keys: ``home``, ``volume_up``, ``volume_down`` (``pressButton``), ``enter`` (a new line typed) and
  ``power`` (``lock``); an iPhone has no back key, which is refused with the reason;
- apps by bundle id: ``launch``, ``terminate``, the app in front (``activeAppInfo``), and the app list:
  WDA cannot list installed apps, so the list is Apple's own apps and those ``device.wda_apps`` names,
  each kept when ``/wda/apps/state`` says it is installed;
- the screenshot (PNG) and the accessibility tree (``/source``, as uiautomator XML: ``wda_tree``);
- the screen's size in pixels (``/window/size`` times ``scale``).

A WDA that stops answering is a lost phone (``DeviceDisconnectedError``); a stale session is made anew
by wdapy itself. An alert (a system permission prompt) keeps WDA from reading the tree: the driver
says so, with the alert's text, instead of an empty screen.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver, KeyboardState, resolve_key
from ufo_mobile.core.device.blocking import DaemonWorkers, call_blocking
from ufo_mobile.core.device.wda_tree import longest_input_text, to_uiautomator
from ufo_mobile.errors import ConfigError, DeviceCommandError, DumpUnavailableError

if TYPE_CHECKING:
    from ufo_mobile.sim.phone.simphone import SimPhone

T = TypeVar("T")

#: Apple's own apps, by the name on the home screen: present on every iPhone (checked all the same)
APPLE_APPS: Mapping[str, str] = {
    "Settings": "com.apple.Preferences", "Messages": "com.apple.MobileSMS", "Safari": "com.apple.mobilesafari",
    "Contacts": "com.apple.MobileAddressBook", "Phone": "com.apple.mobilephone", "Mail": "com.apple.mobilemail",
    "Calendar": "com.apple.mobilecal", "Clock": "com.apple.mobiletimer", "Notes": "com.apple.mobilenotes",
    "Reminders": "com.apple.reminders", "Photos": "com.apple.mobileslideshow", "Camera": "com.apple.camera",
    "Maps": "com.apple.Maps", "Weather": "com.apple.weather", "App Store": "com.apple.AppStore",
    "Files": "com.apple.DocumentsApp", "Calculator": "com.apple.calculator", "Music": "com.apple.Music",
    "FaceTime": "com.apple.facetime", "Health": "com.apple.Health", "Wallet": "com.apple.Passbook",
}
HOME_SCREEN = "com.apple.springboard"
_BUTTONS = {"home": "home", "volume_up": "volumeUp", "volume_down": "volumeDown"}
KEYS = frozenset({*_BUTTONS, "enter", "power", "del"})
"""The keys an iPhone has for the driver (our names); the rest are refused."""
IOS_EXTRA = "an iPhone needs the ios extra: pip install 'ufo_mobile[ios]'"
_NOT_INSTALLED = 0  # XCUIApplicationStateUnknown: what WDA answers for a bundle id that is not installed
_DELETE = "\b"  # a backspace typed through /wda/keys deletes a character


def check_ios_extra(key: str) -> None:
    """Nothing when wdapy (the ios extra) is installed.

    Raises:
        ConfigError: it is not; ``key`` names the option or setting that asked for an iPhone.
    """
    import importlib.util

    if importlib.util.find_spec("wdapy") is None:
        raise ConfigError(IOS_EXTRA, key=key)


class IOSDriver(DeviceDriver):
    """An iPhone through WebDriverAgent at ``url`` (``http://127.0.0.1:8100``), module docstring."""

    supported: ClassVar[frozenset[str]] = frozenset({
        "connect", "ensure_connected", "close", "tap", "long_press", "swipe", "drag", "input_text", "press_key",
        "start_app", "get_apps", "screenshot", "get_ui_tree", "current_app", "screen_size", "keyboard_state",
    })
    keys: ClassVar[frozenset[str] | None] = KEYS
    platform: ClassVar[str] = "ios"

    def __init__(self, url: str, *, timeout: float = 20.0, apps: Mapping[str, str] | None = None) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.url = url.rstrip("/")
        self.serial = self.url
        self._timeout = timeout
        self._extra_apps = dict(apps or {})
        self._client: Any = None
        self._scale: float | None = None
        self._methods: dict[str, Any] = {}  # wdapy's request methods, once it is imported
        self._workers = DaemonWorkers("ufo-wda")

    # -- the client and its calls --------------------------------------------------------------

    def _make_client(self) -> Any:
        try:
            import wdapy
        except ImportError as exc:  # the ios extra is not installed
            raise DeviceCommandError(IOS_EXTRA, serial=self.serial) from exc
        client = wdapy.AppiumClient(self.url)
        client.request_timeout = self._timeout
        self._methods = {"GET": wdapy.GET, "POST": wdapy.POST}
        return client

    async def _call(self, fn: Callable[..., T], *args: Any, what: str) -> T:
        """``fn(client, *args)`` on a daemon thread, bounded (``blocking.classify``: a WDA that stopped
        answering is a lost phone, an error it answers is a failed command)."""
        if self._client is None:
            self._client = self._make_client()
        return await call_blocking(partial(fn, self._client, *args), limit=self._timeout, serial=self.serial,
                                   what=what, workers=self._workers)

    def _m(self, client: Any, call: str, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        """``client.request`` or ``client.session_request`` with wdapy's own method value."""
        return getattr(client, call)(self._methods[method], path, payload)

    async def _value(self, method: str, path: str, payload: dict[str, Any] | None = None, *, what: str,
                     session: bool = True) -> Any:
        """The ``value`` WDA answers ``method path`` with (in the session, unless ``session`` is false)."""
        call = "session_request" if session else "request"
        return await self._call(lambda c: self._m(c, call, method, path, payload)["value"], what=what)

    async def _points(self, *pixels: int) -> list[float]:
        scale = await self.scale()
        return [round(v / scale, 2) for v in pixels]

    async def scale(self) -> float:
        """Pixels per point (``/wda/screen``), read once."""
        if self._scale is None:
            value = await self._value("GET", "/wda/screen", what="screen scale")
            self._scale = float(value.get("scale") or 1) if isinstance(value, dict) else 1.0
        return self._scale

    # -- lifecycle -----------------------------------------------------------------------------

    async def connect(self) -> None:
        status = await self._call(lambda c: c.status(), what="status")
        if getattr(status, "session_id", None) is None:
            await self._call(lambda c: c.session(), what="new session")
        await self.scale()

    async def ensure_connected(self) -> None:
        if self._scale is None:
            await self.connect()

    async def close(self) -> None:
        self._workers.close()

    # -- input ---------------------------------------------------------------------------------

    async def tap(self, x: int, y: int) -> None:
        px, py = await self._points(x, y)
        await self._value("POST", "/wda/tap", {"x": px, "y": py}, what="tap")

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        px, py = await self._points(x, y)
        await self._call(lambda c: c.touch_and_hold(px, py, duration_ms / 1000), what="touch and hold")

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        points = await self._points(x1, y1, x2, y2)
        # dragfromtoforduration holds for ``duration`` before it moves: a short hold is a swipe
        await self._call(lambda c: c.swipe(*points, duration=0.05), what="swipe")

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        points = await self._points(x1, y1, x2, y2)
        await self._call(lambda c: c.swipe(*points, duration=max(duration_ms / 1000, 0.5)), what="drag")

    async def input_text(self, text: str, clear: bool = False) -> None:
        if clear:
            held = await self._longest_text()
            if held:
                await self._call(lambda c: c.send_keys(_DELETE * held), what="clear the field")
        if text:
            await self._call(lambda c: c.send_keys(text), what="type")

    async def _longest_text(self) -> int:
        """The length of the longest text a text input on the screen holds: WDA does not say which field
        has the focus, and backspaces past a field's start do nothing, so that many clear any of them."""
        return longest_input_text(str(await self._value("GET", "/source", what="source", session=False)))

    async def press_key(self, key: str | int) -> None:
        name = resolve_key(key).name
        if name not in KEYS:
            raise DeviceCommandError(f"an iPhone has no {resolve_key(key).label} key; it has: "
                                     f"{', '.join(sorted(KEYS))}", serial=self.serial)
        if name in _BUTTONS:
            await self._value("POST", "/wda/pressButton", {"name": _BUTTONS[name]}, what=f"press {name}")
        elif name == "power":
            await self._call(lambda c: c.lock(), what="lock")
        else:
            await self._call(lambda c: c.send_keys("\n" if name == "enter" else _DELETE), what=f"press {name}")

    # -- apps ----------------------------------------------------------------------------------

    async def start_app(self, package: str, activity: str | None = None) -> None:
        if package == HOME_SCREEN:
            await self._call(lambda c: c.homescreen(), what="home screen")
            return
        await self._call(lambda c: c.app_start(package), what=f"launch {package}")

    async def get_apps(self) -> list[AppInfo]:
        wanted = {**APPLE_APPS, **self._extra_apps}
        found: list[AppInfo] = []
        for label, bundle in sorted(wanted.items()):
            # the raw number: wdapy's AppState has no 0 (not installed)
            state = await self._value("POST", "/wda/apps/state", {"bundleId": bundle}, what=f"app state of {bundle}")
            if isinstance(state, int) and state != _NOT_INSTALLED:
                found.append(AppInfo(bundle, label))
        return found

    async def current_app(self) -> CurrentApp:
        info = await self._value("GET", "/wda/activeAppInfo", what="active app", session=False)
        bundle = str(info.get("bundleId") or "") if isinstance(info, dict) else ""
        return CurrentApp(bundle)

    # -- screen --------------------------------------------------------------------------------

    async def screenshot(self) -> bytes:
        encoded = await self._value("GET", "/screenshot", what="screenshot", session=False)
        return await call_blocking(base64.b64decode, encoded, limit=self._timeout, serial=self.serial,
                                   what="decode screenshot")

    async def get_ui_tree(self) -> str:
        scale = await self.scale()
        try:
            source = await self._value("GET", "/source", what="source", session=False)
        except DeviceCommandError as exc:
            alert = await self._alert_text()
            if alert is not None:
                raise DumpUnavailableError(f"an alert keeps WebDriverAgent from reading the screen: {alert!r}",
                                           kind="alert", serial=self.serial) from exc
            raise
        return await call_blocking(to_uiautomator, str(source), scale, limit=self._timeout, serial=self.serial,
                                   what="read the source")

    async def _alert_text(self) -> str | None:
        try:
            text = await self._value("GET", "/alert/text", what="alert text")
        except DeviceCommandError:
            return None
        return str(text)

    async def keyboard_state(self) -> KeyboardState:
        source = await self._value("GET", "/source", what="source", session=False)
        return KeyboardState(shown="XCUIElementTypeKeyboard" in str(source))

    async def screen_size(self) -> tuple[int, int]:
        scale = await self.scale()
        width, height = await self._call(lambda c: c.window_size(), what="window size")
        return round(width * scale), round(height * scale)



class ServedIPhone(IOSDriver):
    """An iPhone that is the simulated phone ``phone`` behind an in-process emulated WebDriverAgent
    (``sim/servers/wda``), driven through wdapy over HTTP like a real one (``eval --iphone``, tests).
    Its apps are offered by the names the simulated phone gives them; the server stops with the driver."""

    def __init__(self, phone: SimPhone, *, timeout: float = 20.0) -> None:
        from ufo_mobile.sim.servers.wda import EmulatedWda
        from ufo_mobile.sim.servers.wda.source import bundle_id

        self.phone = phone
        self.server = EmulatedWda(phone)
        self.server.start()
        apps = {app.label: bundle_id(app.package) for app in phone.installed_apps()
                if bundle_id(app.package) != HOME_SCREEN}  # the home screen is no app to open
        super().__init__(self.server.url, timeout=timeout, apps=apps)

    async def close(self) -> None:
        await super().close()
        self.server.stop()
