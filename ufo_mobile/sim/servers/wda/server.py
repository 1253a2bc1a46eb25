"""``EmulatedWda``: the simulated phone served as an iPhone's WebDriverAgent, over HTTP on 127.0.0.1.

WebDriverAgent (appium/WebDriverAgent) is the XCTest runner Appium and facebook-wda/wdapy talk to on
an iPhone: JSON over HTTP, routes in ``WebDriverAgentLib/Commands/*.m``. This server answers the same
routes, with the same shapes, for the ``SimPhone`` shown as an iPhone (``source`` turns its screen
into WDA's page source); wdapy's ``AppiumClient`` drives it unchanged.

What it does as WDA does:

* Answers are ``FBResponseWithStatus``'s: ``{"value": ..., "sessionId": <the active session or null>}``,
  pretty-printed by ``NSJSONSerialization`` (``"key" : value``, ``\\/`` for ``/``) as
  ``application/json;charset=UTF-8``. Errors are W3C errors ``{"error", "message", "traceback"}``
  with ``FBCommandStatus``'s HTTP codes: an unknown route is ``unknown command`` (404, "Unhandled
  endpoint: ..."), a session id that is not the active one ``invalid session id`` (404, "Session does
  not exist", which wdapy's ``session_request`` answers by making a new session), no alert ``no such
  alert`` (404), bad arguments ``invalid argument`` (400), the rest ``unknown error`` (500).
* One session at a time (``FBSession``): a new one kills the old, and killing a session terminates its
  app (``shouldTerminateApp``, on by default). A body that is not JSON is taken as ``{}``, as WDA's
  router does. Session-only routes (``/wda/tap``, ``/wda/keys``, ``/wda/pressButton``, the app routes)
  are unknown without a ``/session/:id`` prefix, exactly like WDA's.
* Coordinates are points; screenshots are pixels; ``scale`` (3 by default, an iPhone 15) is pixels per
  point, so ``/wda/tap {x, y}`` touches pixel ``(round(x*scale), round(y*scale))``.
* ``/wda/apps/state`` answers ``XCUIApplicationState``: 0 for a bundle id that is not installed, 1 not
  running, 4 in the foreground and 2 (running in the background, suspended) for an app with a task
  behind; the simulated apps never run in the background, so 3 never comes (wdapy's ``AppState`` has
  no 3 either). SpringBoard (the launcher) is always 4. Launching (``bundleId`` capability, or
  ``/wda/apps/launch`` of an app not running) starts an app afresh with a new pid; a session whose
  app is no longer running answers session commands with "...is not running, possibly crashed".
* The soft keyboard is on (``soft_keyboard``): a focused field brings up ``XCUIElementTypeKeyboard``
  over the bottom of the screen and taps there type; ``/wda/keys`` types into the focused field
  (``\\n`` is Return, ``\\b`` and DEL delete) and, with no keyboard up, fails with "The on-screen
  keyboard must be present to send keys" (invalid element state, 400).
* A system alert (``show_alert``; a session's ``defaultAlertAction`` capability accepts or dismisses
  it at once, as WDA's alerts monitor does) is modal: ``/alert/text``, ``/wda/alert/buttons``,
  ``/alert/accept`` (the last button) and ``/alert/dismiss`` (the first) work, a tap on one of its
  buttons presses it, every other touch and key is swallowed, and screenshots show it. ``/source``
  is blocked by it: on a real iPhone the snapshot of the app behind a SpringBoard alert takes long
  and fails; here the request waits at most ``limits.source_alert_wait`` seconds for the alert to go,
  then answers the failed-snapshot error WDA raises (``FBStaleElementException``: stale element
  reference, 404, "The previously found element ... is not present in the current view anymore").
* ``/wda/lock`` locks: touches and keys do nothing and screenshots are a dark lock screen until
  ``/wda/unlock``.

HTTP: stdlib ``ThreadingHTTPServer`` (daemon threads) on loopback only, port 0 for any free port.
Request bodies over ``limits.max_body`` bytes are refused (413) without being read, a body that stops
short times out after ``limits.read_timeout`` (408), and every answer closes its connection (WDA's
server keeps it alive; closing keeps ``stop()`` bounded and a client that never closes its
connections, as wdapy does not, leaves no socket open). Every request runs under one lock around the
phone and the server's state, so requests are served one at a time, as XCTest serves them.

Not emulated: element lookup (``/element``, ``/elements``) and element commands, W3C actions, ``/url``,
video recording and the MJPEG stream.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import socket
import socketserver
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import structlog

from ufo_mobile.errors import DeviceError, SimulatorError
from ufo_mobile.sim.phone.simphone import LAUNCHER, SimPhone
from ufo_mobile.sim.phone.view import Rect
from ufo_mobile.sim.servers import check_loopback
from ufo_mobile.sim.servers.wda.source import (
    BUNDLE_IDS,
    bundle_id,
    element_tree,
    package_for,
    to_description,
    to_json,
    to_xml,
)

__all__ = ["BUNDLE_IDS", "EmulatedWda", "WdaError", "WdaLimits"]

IPHONE_SIZE = (1179, 2556)  # an iPhone 15's screen in pixels: 393x852 points at 3x
IOS_VERSION = "17.5"
WDA_VERSION = "9.15.1"
BUILD_TIME = "Jan 15 2025 09:41:00"
SPRINGBOARD_PID = 34
FIRST_APP_PID = 1201
_NS_DOMAIN = "com.facebook.WebDriverAgent"
_KEYBOARD_ABSENT = "The on-screen keyboard must be present to send keys"
_KEYBOARD_STAYS = ("Did not know how to dismiss the keyboard. Try to dismiss it in the way supported by your "
                   "application under test.")
_BUTTONS = ("home", "volumedown", "volumeup")  # fb_availableButtonNames on an iPhone without an Action button
_STANDARD_CAPS = frozenset({"browserName", "browserVersion", "platformName", "acceptInsecureCerts",
                            "pageLoadStrategy", "proxy", "setWindowRect", "timeouts", "unhandledPromptBehavior"})
_ORIENTATIONS = ("PORTRAIT", "LANDSCAPE", "UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT",
                 "UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN")


@dataclass(frozen=True)
class WdaLimits:
    """Bounds of the server: seconds to read a request, seconds a ``/source`` waits for an alert to go,
    the largest request body in bytes, seconds ``stop()`` waits for the serving thread."""

    read_timeout: float = 10.0
    source_alert_wait: float = 5.0
    max_body: int = 16 * 1024 * 1024
    stop_timeout: float = 5.0


class WdaError(Exception):
    """A W3C WebDriver error as WDA answers it: its name, HTTP status and message."""

    def __init__(self, error: str, status: int, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
        self.message = message


def _invalid_session() -> WdaError:
    return WdaError("invalid session id", 404, "Session does not exist")


def _invalid_argument(message: str) -> WdaError:
    return WdaError("invalid argument", 400, message)


def _invalid_state(message: str) -> WdaError:
    return WdaError("invalid element state", 400, message)


def _unknown(message: str) -> WdaError:
    return WdaError("unknown error", 500, message)


def _no_alert(message: str = "An attempt was made to operate on a modal dialog when one was not open") -> WdaError:
    return WdaError("no such alert", 404, message)


def _not_created(message: str) -> WdaError:
    return WdaError("session not created", 500, message)


def _ns_error(description: str, domain: str = _NS_DOMAIN, code: int = 1) -> str:
    """An ``NSError``'s ``description``, as WDA puts it in error messages (``FBErrorBuilder``)."""
    return f'Error Domain={domain} Code={code} "{description}" UserInfo={{NSLocalizedDescription={description}}}'


def _ns_array(items: Iterable[str]) -> str:
    """An ``NSArray``'s description (how WDA lists names in a message)."""
    return "(\n" + ",\n".join(f"    {item}" for item in items) + "\n)"


def _missing_app(bundle: str) -> str:
    """FrontBoard's refusal to open a bundle id that is not installed, as WDA passes it on (an
    ``NSError`` description; the shape reported in appium/WebDriverAgent#706)."""
    opened = f'The request to open "{bundle}" failed.'
    nil = f'Application info provider (FBSApplicationLibrary) returned nil for "{bundle}"'
    return (f'Error Domain=FBSOpenApplicationServiceErrorDomain Code=4 "{_quoted(opened)}" '
            f"UserInfo={{BSErrorCodeDescription=InvalidRequest, NSLocalizedDescription={opened}, "
            f'NSUnderlyingError={{Error Domain=FBSOpenApplicationErrorDomain Code=4 "{_quoted(nil)}" '
            f"UserInfo={{BSErrorCodeDescription=NotFound, NSLocalizedFailureReason={nil}}}}}}}")


def _quoted(text: str) -> str:
    """``text`` as an ``NSError`` description quotes it: inner double quotes escaped."""
    return text.replace('"', '\\"')


def _number(value: Any) -> float | None:
    """A JSON number (or a numeric string, as ``NSNumber doubleValue`` reads one); None otherwise."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _json_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


@dataclass
class _Session:
    id: str
    bundle: str | None = None
    package: str | None = None
    expected: bool = False           # isTestedApplicationExpectedToRun
    terminate: bool = True           # shouldTerminateApp
    alert_action: str = ""           # defaultAlertAction: "accept", "dismiss" or ""
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Alert:
    text: str
    buttons: tuple[str, ...]
    on_choice: Callable[[str], None] | None = None


@dataclass
class _Request:
    method: str
    path: str
    url: str
    params: dict[str, str]
    args: dict[str, Any]
    session: _Session | None


@dataclass(frozen=True)
class _Raw:
    """A route's answer that is not JSON (``/health``, ``/wda/shutdown``)."""

    content_type: str
    text: str


Handler = Callable[[_Request], Any]


@dataclass(frozen=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    session: bool


def _compile(path: str, session: bool) -> re.Pattern[str]:
    template = ("/session/:sessionID" + path) if session else (path or "/")
    regex = re.sub(r":(\w+)", r"(?P<\1>[^/]+)", re.escape(template).replace("\\:", ":"))
    return re.compile(regex.replace("\\*", ".*"))


class EmulatedWda:
    """An iPhone's WebDriverAgent on ``host:port`` (port 0 = any free port) showing ``phone``.

    ``scale`` is pixels per point (3 on current iPhones; the phone's pixel size divided by it is the
    screen in points). ``soft_keyboard`` turns the phone's soft keyboard on, as an iPhone has no other.
    ``start()``/``stop()`` or ``with``; ``url`` is ``http://host:port``. Test hooks: ``show_alert``,
    ``alert_choices`` (the alert buttons pressed, in order), ``session_id``."""

    def __init__(self, phone: SimPhone, *, host: str = "127.0.0.1", port: int = 0, scale: float = 3,
                 limits: WdaLimits | None = None, soft_keyboard: bool = True, logger: Any = None) -> None:
        check_loopback(host, "the emulated WebDriverAgent")
        if scale <= 0:
            raise ValueError(f"scale must be positive, not {scale}")
        self.phone = phone
        self.host = host
        self.scale = scale
        self.limits = limits or WdaLimits()
        self._log = logger if logger is not None else structlog.get_logger("ufo_mobile.sim.servers.wda")
        if soft_keyboard:
            phone.soft_keyboard = True
        self._requested_port = port
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._session: _Session | None = None
        self._alert: _Alert | None = None
        self.alert_choices: list[str] = []
        self._locked = False
        self._pasteboard = b""
        self._pids: dict[str, int] = {}
        self._next_pid = FIRST_APP_PID
        self._launch_args: dict[str, tuple[list[Any], dict[str, Any]]] = {}
        self._routes: list[_Route] = []
        self._register_routes()
        self._httpd: _HttpServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._shutdown_pending = False
        self._stop_lock = threading.Lock()
        self._stopped = threading.Event()
        self._fonts: Any = None

    # -- lifecycle --------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port it listens on (the one picked when asked for port 0)."""
        if self._httpd is None:
            raise RuntimeError("the emulated WebDriverAgent is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://host:port``, what a WDA client is given."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        """Listen and serve in a daemon thread; returns once listening (raises ``OSError`` if it cannot)."""
        if self._httpd is not None:
            raise RuntimeError("the emulated WebDriverAgent is already started")
        httpd = _HttpServer((self.host, self._requested_port), self)
        self._httpd = httpd
        self._stopping = False
        self._stopped.clear()
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                         name=f"wda-{self.port}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening, close every open connection and wake every waiting request (bounded); a
        second caller returns once the first has stopped it."""
        with self._stop_lock:
            httpd, self._httpd = self._httpd, None
            if httpd is None:
                return
            with self._lock:
                self._stopping = True
                self._changed.notify_all()
            if self._thread is not None and self._thread is not threading.current_thread():
                httpd.shutdown()
                self._thread.join(self.limits.stop_timeout)
            httpd.server_close()
            httpd.close_connections()
            self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server is stopped (``stop()`` or ``GET /wda/shutdown``); False on timeout."""
        return self._stopped.wait(timeout)

    def __enter__(self) -> EmulatedWda:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test hooks -------------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The active session's id, or None."""
        with self._lock:
            return self._session.id if self._session is not None else None

    @property
    def alert_text(self) -> str | None:
        """The text of the alert on screen, or None."""
        with self._lock:
            return self._alert.text if self._alert is not None else None

    def show_alert(self, text: str, buttons: Sequence[str] = ("OK",), *,
                   on_choice: Callable[[str], None] | None = None) -> None:
        """Raise a system alert (SpringBoard's, such as a permission prompt) over whatever is shown.
        ``text`` is its title and message (one per line), ``buttons`` its buttons left to right;
        ``on_choice(button)`` is called when one is pressed (under the server's lock: it must not make
        requests to the server). With a session whose ``defaultAlertAction`` is accept or dismiss, it
        is answered at once."""
        if not buttons:
            raise ValueError("an alert needs at least one button")
        with self._lock:
            self._alert = _Alert(text, tuple(buttons), on_choice)
            action = self._session.alert_action if self._session is not None else ""
            if action in ("accept", "dismiss"):
                self._press_alert(self._alert.buttons[-1 if action == "accept" else 0])

    def _press_alert(self, button: str) -> None:
        alert, self._alert = self._alert, None
        self.alert_choices.append(button)
        self._changed.notify_all()
        if alert is not None and alert.on_choice is not None:
            alert.on_choice(button)

    # -- dispatch ---------------------------------------------------------------------------------

    def handle(self, method: str, target: str, body: bytes) -> tuple[int, str, bytes]:
        """One request: (HTTP status, content type, body). Thread-safe; runs under the server's lock."""
        split = urlsplit(target)
        path = unquote(split.path) or "/"
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        try:
            parsed = json.loads(body) if body.strip() else {}
        except (ValueError, UnicodeDecodeError, RecursionError):
            parsed = {}  # WDA: [NSJSONSerialization JSONObjectWithData:...] ?: @{}
        args = parsed if isinstance(parsed, dict) else {}
        url = f"{path} -- http://{self.host}:{self._port_or_zero()}/"
        with self._lock:
            try:
                value = self._dispatch(method.upper(), path, url, params, args)
            except WdaError as exc:
                return exc.status, *self._payload({"error": exc.error, "message": exc.message, "traceback": ""})
            except (DeviceError, SimulatorError) as exc:
                return 500, *self._payload({"error": "unknown error", "message": str(exc), "traceback": ""})
            except Exception as exc:  # WDA answers an exception it did not expect as an unknown error
                self._log.exception("wda_request_failed", method=method, path=path)
                return 500, *self._payload({"error": "unknown error", "message": repr(exc), "traceback": ""})
            if isinstance(value, _Raw):
                return 200, value.content_type, value.text.encode("utf-8")
            return 200, *self._payload(value)

    def _port_or_zero(self) -> int:
        return int(self._httpd.server_address[1]) if self._httpd is not None else 0

    def _payload(self, value: Any) -> tuple[str, bytes]:
        response = {"value": value, "sessionId": self._session.id if self._session is not None else None}
        text = json.dumps(response, ensure_ascii=False, indent=2, separators=(",", " : "))
        return "application/json;charset=UTF-8", text.replace("/", "\\/").encode("utf-8", "replace")

    def _dispatch(self, method: str, path: str, url: str, params: dict[str, str], args: dict[str, Any]) -> Any:
        for route in self._routes:
            if route.method != method:
                continue
            match = route.pattern.fullmatch(path)
            if match is None:
                continue
            found = {**params, **match.groupdict()}
            session = None
            if route.session:
                if self._session is None or found.get("sessionID") != self._session.id:
                    raise _invalid_session()
                session = self._session
            return route.handler(_Request(method, path, url, found, args, session))
        raise WdaError("unknown command", 404, f"Unhandled endpoint: {url} with parameters {params or {}}")

    def _route(self, method: str, path: str, handler: Handler, *, session: bool = True) -> None:
        self._routes.append(_Route(method, _compile(path, session), handler, session))

    def _both(self, method: str, path: str, handler: Handler) -> None:
        self._route(method, path, handler, session=True)
        self._route(method, path, handler, session=False)

    def _register_routes(self) -> None:
        r, both = self._route, self._both
        # FBSessionCommands
        r("POST", "/session", self._create_session, session=False)
        r("POST", "/wda/apps/launch", self._launch)
        r("POST", "/wda/apps/activate", self._activate)
        r("POST", "/wda/apps/terminate", self._terminate)
        r("POST", "/wda/apps/state", self._app_state)
        r("GET", "/wda/apps/list", self._apps_list)
        r("GET", "", self._get_session)
        r("DELETE", "", self._delete_session)
        r("GET", "/status", self._status, session=False)
        r("GET", "/wda/healthcheck", lambda req: None, session=False)
        r("GET", "/appium/settings", self._get_settings)
        r("POST", "/appium/settings", self._set_settings)
        # FBCustomCommands
        r("POST", "/timeouts", lambda req: None)
        r("POST", "/wda/homescreen", self._homescreen, session=False)
        r("POST", "/wda/deactivateApp", self._deactivate)
        r("POST", "/wda/keyboard/dismiss", self._dismiss_keyboard)
        both("POST", "/wda/lock", self._lock_screen)
        both("POST", "/wda/unlock", self._unlock_screen)
        both("GET", "/wda/locked", lambda req: self._locked)
        both("GET", "/wda/screen", self._screen)
        both("GET", "/wda/activeAppInfo", self._active_app_info)
        both("POST", "/wda/setPasteboard", self._set_pasteboard)
        both("POST", "/wda/getPasteboard", self._get_pasteboard)
        r("GET", "/wda/batteryInfo", self._battery)
        r("POST", "/wda/pressButton", self._press_button)
        r("POST", "/wda/apps/launchUnattached", self._launch_unattached, session=False)
        both("GET", "/wda/device/info", self._device_info)
        # FBDebugCommands, FBScreenshotCommands, FBOrientationCommands
        both("GET", "/source", self._source)
        both("GET", "/screenshot", self._screenshot)
        both("GET", "/orientation", lambda req: "PORTRAIT")
        both("POST", "/orientation", self._set_orientation)
        # FBElementCommands (the coordinate gestures)
        both("GET", "/window/size", self._window_size)
        r("GET", "/window/rect", self._window_rect)
        r("POST", "/wda/tap", self._tap)
        r("POST", "/wda/touchAndHold", self._touch_and_hold)
        r("POST", "/wda/dragfromtoforduration", self._drag)
        r("POST", "/wda/keys", self._keys)
        # FBAlertViewCommands
        both("GET", "/alert/text", self._alert_get_text)
        r("POST", "/alert/text", self._alert_set_text)
        both("POST", "/alert/accept", lambda req: self._alert_answer(req, accept=True))
        both("POST", "/alert/dismiss", lambda req: self._alert_answer(req, accept=False))
        r("GET", "/wda/alert/buttons", self._alert_buttons)
        # FBWebServer's own routes, then FBUnknownCommands' catch-all
        r("GET", "/health", lambda req: _Raw(
            "text/html", "<!DOCTYPE html><html><title>Health Check</title><body><p>I-AM-ALIVE</p></body></html>"),
          session=False)
        r("GET", "/wda/shutdown", self._shutdown, session=False)
        r("OPTIONS", "/*", lambda req: None, session=False)

    # -- apps and processes -----------------------------------------------------------------------

    def _installed(self) -> list[str]:
        return [app.package for app in self.phone.installed_apps()]

    def _package(self, bundle: Any) -> str | None:
        return package_for(bundle, self._installed()) if isinstance(bundle, str) else None

    def _running(self) -> set[str]:
        """Packages with a process (a task), the launcher always; keeps the pids in step."""
        running = {top.package for top in self.phone.task_tops()} | {LAUNCHER}
        for package in list(self._pids):
            if package not in running:
                del self._pids[package]
                self._launch_args.pop(package, None)
        for package in sorted(running):
            if package not in self._pids:
                self._pids[package] = SPRINGBOARD_PID if package == LAUNCHER else self._new_pid()
        return running

    def _new_pid(self) -> int:
        pid, self._next_pid = self._next_pid, self._next_pid + 1
        return pid

    def _foreground(self) -> str:
        return self.phone.current_app().package

    def _state(self, package: str | None) -> int:
        """``XCUIApplicationState`` of ``package`` (None: not installed)."""
        if package is None:
            return 0
        if package == LAUNCHER:
            return 4
        running = self._running()
        if package == self._foreground():
            return 4
        return 2 if package in running else 1

    def _pid(self, package: str) -> int:
        self._running()
        return self._pids.get(package, 0)

    def _start(self, package: str, arguments: Any = None, environment: Any = None) -> None:
        """Bring ``package`` up: resume it when running, else launch it (new process, given arguments)."""
        if package == LAUNCHER:
            self.phone.home()
            return
        fresh = self._state(package) <= 1
        self.phone.start_app(package)
        self._running()
        if fresh:
            self._launch_args[package] = (list(arguments) if isinstance(arguments, list) else [],
                                          dict(environment) if isinstance(environment, dict) else {})

    def _relaunch(self, package: str, arguments: Any, environment: Any) -> None:
        """``XCUIApplication launch``: a running instance is terminated first."""
        if package != LAUNCHER:
            self.phone.stop_app(package)
            self._running()
        self._start(package, arguments, environment)

    def _active(self, session: _Session | None) -> str:
        """``FBSession.activeApplication``: the app under test when in front, else the front app; an app
        under test that should run but does not is reported as crashed."""
        if session is not None and session.package is not None:
            state = self._state(session.package)
            if state >= 4:
                return session.package
            if session.expected and state <= 1:
                raise _invalid_state(f"The application under test with bundle id '{session.bundle}' is not "
                                     "running, possibly crashed")
        return self._foreground()

    def _label(self, package: str) -> str:
        return self.phone.app(package).label

    # -- sessions ---------------------------------------------------------------------------------

    def _create_session(self, req: _Request) -> Any:
        raw = req.args.get("capabilities")
        if not isinstance(raw, dict):
            raise _not_created("'capabilities' is mandatory to create a new session")
        caps = _parse_capabilities(raw)
        if self._session is not None:
            self._kill_session()
        bundle = caps.get("bundleId")
        package = None
        if bundle is not None:
            package = self._package(bundle)
            if package is None:
                raise _not_created(_missing_app(str(bundle)))
            force = caps.get("forceAppLaunch", True) is not False
            if self._state(package) < 3 or force:
                self._relaunch(package, caps.get("arguments"), caps.get("environment"))
            else:
                self._start(package)
        action = caps.get("defaultAlertAction")
        self._session = _Session(
            id=str(uuid.uuid4()).upper(), bundle=bundle if package is not None else None, package=package,
            expected=package is not None, terminate=caps.get("shouldTerminateApp", True) is not False,
            alert_action=action.lower() if isinstance(action, str) else "")
        if self._alert is not None and self._session.alert_action in ("accept", "dismiss"):
            self._press_alert(self._alert.buttons[-1 if self._session.alert_action == "accept" else 0])
        return self._session_info()

    def _session_info(self) -> dict[str, Any]:
        return {"sessionId": self._session.id if self._session is not None else None,
                "capabilities": {"device": "iphone", "sdkVersion": IOS_VERSION}}

    def _get_session(self, req: _Request) -> Any:
        return self._session_info()

    def _delete_session(self, req: _Request) -> Any:
        self._kill_session()
        return None

    def _kill_session(self) -> None:
        """``FBSession kill``: the app under test is terminated (``shouldTerminateApp``)."""
        session, self._session = self._session, None
        if session is None or session.package is None or not session.terminate or session.package == LAUNCHER:
            return
        if self._state(session.package) >= 2:
            self.phone.stop_app(session.package)
            self._running()

    def _status(self, req: _Request) -> Any:
        return {
            "ready": True, "message": "WebDriverAgent is ready to accept commands", "state": "success",
            "os": {"name": "iOS", "version": IOS_VERSION, "sdkVersion": IOS_VERSION, "testmanagerdVersion": 65535},
            "ios": {"ip": self.host},
            "build": {"time": BUILD_TIME, "productBundleIdentifier": "com.facebook.WebDriverAgentRunner",
                      "version": WDA_VERSION},
            "device": "iphone",
        }

    def _get_settings(self, req: _Request) -> Any:
        assert req.session is not None
        return {"defaultAlertAction": req.session.alert_action, "shouldTerminateApp": req.session.terminate,
                **req.session.settings}

    def _set_settings(self, req: _Request) -> Any:
        assert req.session is not None
        settings = req.args.get("settings", {})
        if not isinstance(settings, dict):
            raise _invalid_argument("settings must be a dictionary")
        for name, value in settings.items():
            if name == "defaultAlertAction":
                req.session.alert_action = str(value or "").lower()
            else:
                req.session.settings[str(name)] = value
        return self._get_settings(req)

    # -- app routes -------------------------------------------------------------------------------

    def _bundle_arg(self, req: _Request) -> str:
        bundle = req.args.get("bundleId")
        if not isinstance(bundle, str) or not bundle:
            raise _invalid_argument("'bundleId' argument must be a non-empty string")
        return bundle

    def _launch(self, req: _Request) -> Any:
        assert req.session is not None
        bundle = self._bundle_arg(req)
        package = self._package(bundle)
        if package is None:
            raise _invalid_argument(_missing_app(bundle))
        self._start(package, req.args.get("arguments"), req.args.get("environment"))
        if package == req.session.package:
            req.session.expected = True
        return None

    def _activate(self, req: _Request) -> Any:
        bundle = self._bundle_arg(req)
        package = self._package(bundle)
        if package is None:
            raise _invalid_argument(_missing_app(bundle))
        self._start(package)
        return None

    def _launch_unattached(self, req: _Request) -> Any:
        package = self._package(req.args.get("bundleId"))
        if package is None:
            raise _unknown("LSApplicationWorkspace failed to launch app")
        self._start(package)
        return None

    def _terminate(self, req: _Request) -> Any:
        assert req.session is not None
        bundle = self._bundle_arg(req)
        package = self._package(bundle)
        if package is not None and package == req.session.package:
            req.session.expected = False
        if package is None or package == LAUNCHER or self._state(package) < 2:
            return False
        self.phone.stop_app(package)
        self._running()
        return True

    def _app_state(self, req: _Request) -> Any:
        return self._state(self._package(self._bundle_arg(req)))

    def _apps_list(self, req: _Request) -> Any:
        package = self._foreground()
        return [{"pid": self._pid(package), "bundleId": bundle_id(package)}]

    def _active_app_info(self, req: _Request) -> Any:
        package = self._active(req.session)
        arguments, environment = self._launch_args.get(package, ([], {}))
        self._running()
        return {"pid": self._pid(package), "bundleId": bundle_id(package), "name": "",
                "processArguments": {"args": arguments, "env": environment}}

    def _homescreen(self, req: _Request) -> Any:
        self.phone.home()
        return None

    def _deactivate(self, req: _Request) -> Any:
        """``fb_deactivateWithDuration``: home, then back to the app (without waiting ``duration`` here)."""
        package = self._active(req.session)
        self.phone.home()
        self._start(package)
        return None

    def _press_button(self, req: _Request) -> Any:
        name = req.args.get("name")
        if not isinstance(name, str) or name.lower() not in _BUTTONS:
            described = _ns_error(f"The button '{name}' is not supported. The device under test only supports "
                                  f"the following buttons: {_ns_array(_BUTTONS)}")
            raise _unknown(described)
        if name.lower() == "home":
            self.phone.home()
        return None

    def _lock_screen(self, req: _Request) -> Any:
        self._locked = True
        return None

    def _unlock_screen(self, req: _Request) -> Any:
        self._locked = False
        return None

    def _set_pasteboard(self, req: _Request) -> Any:
        content = req.args.get("content")
        try:
            self._pasteboard = base64.b64decode(content if isinstance(content, str) else "", validate=False)
        except ValueError as exc:
            raise _invalid_argument("Cannot decode the pasteboard content from base64") from exc
        return None

    def _get_pasteboard(self, req: _Request) -> Any:
        return base64.b64encode(self._pasteboard).decode("ascii")

    def _battery(self, req: _Request) -> Any:
        return {"level": self.phone.battery / 100, "state": 1}

    def _device_info(self, req: _Request) -> Any:
        dark = self.phone.snapshot().dark
        device_uuid = uuid.uuid5(uuid.NAMESPACE_URL, f"ufo-mobile-sim:{self.phone.serial}")
        return {"currentLocale": "en_US", "timeZone": self.phone.now().tzname() or "UTC", "name": "iPhone",
                "model": "iPhone", "uuid": str(device_uuid).upper(), "userInterfaceIdiom": 0,
                "userInterfaceStyle": "dark" if dark else "light", "isSimulator": False, "thermalState": 0}

    def _set_orientation(self, req: _Request) -> Any:
        orientation = req.args.get("orientation")
        if isinstance(orientation, str) and orientation.upper() == "PORTRAIT":
            return None
        raise _unknown("Unable To Rotate Device")

    def _shutdown(self, req: _Request) -> Any:
        self._shutdown_pending = True  # stopped once this answer is sent (``_Handler``)
        return _Raw("text/html", "Shutting down")

    def take_shutdown(self) -> bool:
        """Whether a ``GET /wda/shutdown`` asked to stop (once): the HTTP handler then stops the server."""
        with self._lock:
            pending, self._shutdown_pending = self._shutdown_pending, False
            return pending

    # -- screen -----------------------------------------------------------------------------------

    def _points(self, pixels: float) -> int | float:
        return _json_number(pixels / self.scale)

    def _screen(self, req: _Request) -> Any:
        width, height = self.phone.screen_size()
        status = self.phone.snapshot().status_height
        return {"screenSize": {"width": self._points(width), "height": self._points(height)},
                "statusBarSize": {"width": self._points(width), "height": self._points(status)},
                "scale": _json_number(float(self.scale))}

    def _window_size(self, req: _Request) -> Any:
        self._active(req.session)
        width, height = self.phone.screen_size()
        return {"width": self._points(width), "height": self._points(height)}

    def _window_rect(self, req: _Request) -> Any:
        return {"x": 0, "y": 0, **self._window_size(req)}

    def _source(self, req: _Request) -> Any:
        kind = req.params.get("format", "xml")
        if kind.lower() not in ("xml", "json", "description"):
            raise _invalid_argument(f"Unknown source format '{kind}'. Only {_ns_array(('xml', 'json', 'description'))}"
                                    " source formats are supported.")
        package = self._active(req.session)
        if self._alert is not None:
            self._changed.wait_for(lambda: self._alert is None or self._stopping, self.limits.source_alert_wait)
            if self._alert is not None or self._stopping:
                raise WdaError("stale element reference", 404,
                               f"The previously found element \"Application '{bundle_id(package)}'\" is not present "
                               "in the current view anymore. Make sure the application UI has the expected state. "
                               "Original error: Timed out while evaluating UI query.")
            package = self._active(req.session)
        snap = self.phone.snapshot()
        root = element_tree(snap, scale=self.scale, bundle=bundle_id(snap.package), pid=self._pid(snap.package),
                            label=self._label(snap.package))
        excluded = [name for name in req.params.get("excluded_attributes", "").split(",") if name]
        if kind.lower() == "json":
            return to_json(root, excluded=excluded)
        if kind.lower() == "description":
            return to_description(root)
        return to_xml(root, scope=req.params.get("scope"), excluded=excluded)

    def _screenshot(self, req: _Request) -> Any:
        png = self.phone.screenshot_png()
        if self._locked or self._alert is not None:
            png = self._draw_over(png)
        return base64.b64encode(png).decode("ascii")

    def _draw_over(self, png: bytes) -> bytes:
        """The screenshot under the lock screen or with the alert drawn over it."""
        from PIL import Image

        from ufo_mobile.sim.phone import paint

        if self._fonts is None:
            self._fonts = paint.Fonts()
        image = Image.open(io.BytesIO(png)).convert("RGB")
        width, height = image.size
        s = self.scale
        if self._locked:
            image = Image.new("RGB", image.size, "#101418")
            canvas = paint.Canvas(_draw(image), self._fonts)
            paint.draw_text(canvas, Rect(0, round(90 * s), width, round(190 * s)), f"{self.phone.now():%H:%M}",
                            round(80 * s), "#FFFFFF", align="center")
        else:
            assert self._alert is not None
            image = Image.blend(image, Image.new("RGB", image.size, "#000000"), 0.35)
            canvas = paint.Canvas(_draw(image), self._fonts)
            box, text_rect, buttons = _alert_layout(width, height, s, len(self._alert.buttons))
            canvas.rect(box, fill="#F2F2F7", radius=round(14 * s))
            paint.draw_text(canvas, text_rect, self._alert.text, round(15 * s), "#000000", align="center")
            for label, rect in zip(self._alert.buttons, buttons, strict=True):
                canvas.rect(Rect(rect.left, rect.top, rect.right, rect.top + max(1, round(s / 3))), fill="#C6C6C8")
                paint.draw_text(canvas, rect, label, round(17 * s), "#007AFF", align="center", max_lines=1)
        out = io.BytesIO()
        image.save(out, "PNG")
        return out.getvalue()

    # -- touches and keys -------------------------------------------------------------------------

    def _pixel(self, x: float, y: float) -> tuple[int, int] | None:
        px, py = round(x * self.scale), round(y * self.scale)
        width, height = self.phone.screen_size()
        return (px, py) if 0 <= px < width and 0 <= py < height else None

    def _point_args(self, req: _Request, xkey: str, ykey: str, *, required: bool) -> tuple[float, float]:
        xs, ys = req.args.get(xkey), req.args.get(ykey)
        if xs is None and ys is None and not required:
            width, height = self.phone.screen_size()  # no coordinates: the application element's centre
            return width / self.scale / 2, height / self.scale / 2
        if (xs is None) != (ys is None):
            raise _invalid_argument("Both x and y coordinates must be provided")
        x, y = _number(xs if xs is not None else 0), _number(ys if ys is not None else 0)
        if x is None or y is None:
            raise _invalid_argument(f"The coordinates ({xs!r}, {ys!r}) are not numbers")
        return x, y

    def _duration(self, req: _Request, key: str) -> float:
        value = _number(req.args.get(key, 0))
        if value is None or value < 0:
            raise _invalid_argument(f"'{key}' must be a non-negative number of seconds")
        return value

    def _touch(self, x: float, y: float, seconds: float) -> None:
        """A touch at point (x, y) held ``seconds``: an alert's button takes it, an alert or the lock
        screen swallow it, else the phone gets it at pixels."""
        pixel = self._pixel(x, y)
        if pixel is None or self._locked:
            return
        if self._alert is not None:
            width, height = self.phone.screen_size()
            _, _, rects = _alert_layout(width, height, self.scale, len(self._alert.buttons))
            for label, rect in zip(self._alert.buttons, rects, strict=True):
                if rect.contains(*pixel):
                    self._press_alert(label)
                    break
            return
        self.phone.swipe(*pixel, *pixel, round(seconds * 1000))

    def _tap(self, req: _Request) -> Any:
        self._active(req.session)
        self._touch(*self._point_args(req, "x", "y", required=False), 0.0)
        return None

    def _touch_and_hold(self, req: _Request) -> Any:
        self._active(req.session)
        x, y = self._point_args(req, "x", "y", required=False)
        self._touch(x, y, self._duration(req, "duration"))
        return None

    def _drag(self, req: _Request) -> Any:
        self._active(req.session)
        x1, y1 = self._point_args(req, "fromX", "fromY", required=True)
        x2, y2 = self._point_args(req, "toX", "toY", required=True)
        hold = self._duration(req, "duration")
        start, end = self._pixel(x1, y1), self._pixel(x2, y2)
        if start is None or self._locked or self._alert is not None:
            return None
        if end is None:
            width, height = self.phone.screen_size()
            end = (min(max(round(x2 * self.scale), 0), width - 1), min(max(round(y2 * self.scale), 0), height - 1))
        if start == end:
            self._touch(x1, y1, hold)
        else:  # pressForDuration:thenDragToCoordinate: a press, then a move of about a second
            self.phone.swipe(*start, *end, round(hold * 1000) + 300)
        return None

    def _keyboard_up(self) -> bool:
        if self.phone.soft_keyboard:
            return self.phone.keyboard_shown()
        return self.phone.focused_field() is not None

    def _keys(self, req: _Request) -> Any:
        value = req.args.get("value")
        if isinstance(value, str):
            text = value
        elif isinstance(value, list):
            text = "".join(str(item) for item in value)
        else:
            raise _invalid_argument("'value' must be an array of characters")
        if self._locked or self._alert is not None:
            return None  # the keys go to the lock screen or the alert, not to the app
        if not self._keyboard_up():
            raise _invalid_state(_ns_error(_KEYBOARD_ABSENT))
        run: list[str] = []
        for char in text:
            if char in "\n\r\b\x7f":
                self._type(run)
                if self.phone.focused_field() is not None:
                    self.phone.press_key("enter" if char in "\n\r" else "del")
            else:
                run.append(char)
        self._type(run)
        return None

    def _type(self, run: list[str]) -> None:
        if run and self.phone.focused_field() is not None:
            self.phone.input_text("".join(run))
        run.clear()

    def _dismiss_keyboard(self, req: _Request) -> Any:
        if not self._keyboard_up():
            return None
        names = req.args.get("keyNames")
        wanted = {str(name) for name in names} if isinstance(names, list) else set()
        if wanted & {"Return", "return"}:
            self.phone.press_key("enter")
        if self._keyboard_up():
            raise _invalid_state(_ns_error(_KEYBOARD_STAYS))
        return None

    # -- alerts -----------------------------------------------------------------------------------

    def _alert_get_text(self, req: _Request) -> Any:
        if self._alert is None:
            raise _no_alert()
        return self._alert.text

    def _alert_set_text(self, req: _Request) -> Any:
        if "value" not in req.args:
            raise _invalid_argument("Missing 'value' parameter")
        if self._alert is None:
            raise _no_alert("No alert is open")
        raise WdaError("unsupported operation", 500, "The alert contains no input fields")

    def _alert_answer(self, req: _Request, *, accept: bool) -> Any:
        if self._alert is None:
            raise _no_alert("No alert is open")
        name = req.args.get("name")
        if isinstance(name, str):
            if name not in self._alert.buttons:
                raise _invalid_state(f"Failed to find button with label '{name}' for alert: Alert, "
                                     f"label: '{self._alert.text.splitlines()[0] if self._alert.text else ''}'")
            self._press_alert(name)
        else:  # an Alert's accept button is its last, its dismiss button its first
            self._press_alert(self._alert.buttons[-1 if accept else 0])
        return None

    def _alert_buttons(self, req: _Request) -> Any:
        if self._alert is None:
            raise _no_alert()
        return list(self._alert.buttons)


def _draw(image: Any) -> Any:
    from PIL import ImageDraw

    return ImageDraw.Draw(image)


def _alert_layout(width: int, height: int, scale: float, count: int) -> tuple[Rect, Rect, list[Rect]]:
    """An iOS alert's geometry in pixels: its box (270 pt wide, centred), the text area and the buttons
    (44 pt tall; two side by side, else stacked)."""
    box_w = min(width - round(20 * scale), round(270 * scale))
    text_h, button_h = round(104 * scale), round(44 * scale)
    rows = 1 if count <= 2 else count
    box_h = text_h + rows * button_h
    left, top = (width - box_w) // 2, (height - box_h) // 2
    box = Rect(left, top, left + box_w, top + box_h)
    text = Rect(left + round(16 * scale), top + round(16 * scale), box.right - round(16 * scale),
                top + text_h - round(12 * scale))
    buttons: list[Rect] = []
    if count <= 2:
        step = box_w // count
        for index in range(count):
            right = box.right if index == count - 1 else left + (index + 1) * step
            buttons.append(Rect(left + index * step, top + text_h, right, box.bottom))
    else:
        for index in range(count):
            row_top = top + text_h + index * button_h
            buttons.append(Rect(left, row_top, box.right, row_top + button_h))
    return box, text, buttons


def _strip_prefixes(caps: Any) -> dict[str, Any]:
    if not isinstance(caps, dict):
        raise _not_created(f"Could not find matching capabilities from {caps}")
    stripped: dict[str, Any] = {}
    standard: list[str] = []
    for name, value in caps.items():
        key = str(name)
        if key.startswith("appium:"):
            key = key.removeprefix("appium:")
            if key in _STANDARD_CAPS:
                standard.append(key)
        stripped[key] = value
    if standard:
        raise _not_created(f"The capabilities {_ns_array(standard)} are standard and should not have the "
                           "'appium:' prefix")
    return stripped


def _parse_capabilities(caps: dict[str, Any]) -> dict[str, Any]:
    """``FBParseCapabilities``: ``alwaysMatch`` merged with the first ``firstMatch`` that does not repeat it."""
    required = _strip_prefixes(caps.get("alwaysMatch") or {})
    first = caps.get("firstMatch") or []
    for candidate in first if isinstance(first, list) and first else [{}]:
        stripped = _strip_prefixes(candidate)
        if set(stripped) & set(required):
            continue
        return {**required, **stripped}
    raise _not_created(f"Could not find matching capabilities from {caps}")


# -- HTTP -----------------------------------------------------------------------------------------------


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], wda: EmulatedWda) -> None:
        self.wda = wda
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind without ``HTTPServer``'s reverse DNS lookup of the host (``socket.getfqdn``)."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def track(self, conn: socket.socket, open_: bool) -> None:
        with self._open_lock:
            if open_:
                self._open.add(conn)
            else:
                self._open.discard(conn)

    def close_connections(self) -> None:
        with self._open_lock:
            connections, self._open = list(self._open), set()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    server: _HttpServer
    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        return "WebDriverAgent"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.wda.limits.read_timeout)  # a request that stalls times out
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's signature
        """Requests are not logged (the base class writes every one to stderr)."""

    def _serve(self) -> None:
        self.close_connection = True
        limits = self.server.wda.limits
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._error(411, "invalid argument", "Request bodies must have a Content-Length")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self._error(400, "invalid argument", "Content-Length is not a byte count")
            return
        if length > limits.max_body:
            self._error(413, "invalid argument",
                        f"The request body of {length} bytes is larger than {limits.max_body} bytes")
            return
        body = bytearray()
        try:
            while len(body) < length:
                chunk = self.rfile.read1(min(65536, length - len(body)))  # what has come
                if not chunk:
                    return  # the client went away
                body += chunk
        except TimeoutError:
            self._error(408, "timeout", f"The request body ended after {len(body)} of {length} bytes")
            return
        except OSError:
            return
        wda = self.server.wda
        status, content_type, data = wda.handle(self.command, self.path, bytes(body))
        self._send(status, content_type, data)
        if wda.take_shutdown():  # GET /wda/shutdown: stop once the answer is out
            threading.Thread(target=wda.stop, name="wda-shutdown", daemon=True).start()

    def _error(self, status: int, error: str, message: str) -> None:
        payload = {"value": {"error": error, "message": message, "traceback": ""}, "sessionId": None}
        self._send(status, "application/json;charset=UTF-8",
                   json.dumps(payload, indent=2, separators=(",", " : ")).encode("utf-8"))

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            pass

    do_GET = do_POST = do_DELETE = do_PUT = do_OPTIONS = do_PATCH = do_HEAD = _serve
