"""The uiautomator2 server of the emulated device, reached through the ``tcp:9008`` service.

It answers HTTP/1.1 (``GET /ping`` → ``pong``, ``POST /jsonrpc/0`` → JSON-RPC 2.0) only while an
``app_process … com.wetest.uia2.Main`` shell keeps it "running" (see ``devcmds_system``); before
that the adbd refuses the port, as a phone would, so uiautomator2 goes through its real start-up.
Requests on one stream are served one after another until the host closes it.

Realistic profiles: ``dumpWindowHierarchy`` has every window root in the server's own format
(``windows``); ``takeScreenshot`` of a FLAG_SECURE screen is black; ``setClipboard`` throws
"Package android does not belong to 2000" on Android 11-14 (openatx/uiautomator2 #1010, #1029)
and ``getClipboard`` gives null on Android 10+ (#853, #747); on MIUI without its security switch
every injected gesture or key throws INJECT_EVENTS (openatx/android-uiautomator-server#2).
Errors from Java exceptions carry the class name as ``message`` and the stack trace as ``data``.

Text, as the server's ``AutomatorServiceImpl`` does it: ``click`` is a bare touch down and up (false
for a negative coordinate), so a tap on a plain label leaves the focus where it was; ``pasteClipboard``
injects CTRL+V and ``clearInputText`` CTRL+A then DEL, key events that reach whichever field has the
focus, and neither says whether one had it. Typing "into" a control is the caller's business.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

from ufo_mobile.errors import DeviceError
from ufo_mobile.sim.android.commands.input import (
    INJECT_DENIED,
    KEYCODE_A,
    KEYCODE_DEL,
    KEYCODE_V,
    META_CTRL_ON,
    press_keycode,
    touch_down,
    touch_move,
    touch_up,
)
from ufo_mobile.sim.android.commands.system import capture_png
from ufo_mobile.sim.android.devstate import EMPTY_DUMP, DeviceState
from ufo_mobile.sim.servers.adb.stream import AdbStream, ByteReader, StreamClosed
from ufo_mobile.sim.servers.u2.windows import to_u2_xml, window_roots

MAX_HEADER = 64 * 1024
MAX_BODY = 16 * 1024 * 1024
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
PARSE_ERROR = -32700
SERVER_ERROR = -32001
INTERNAL_ERROR = -32603
_KEYS = {"home": 3, "back": 4, "left": 21, "right": 22, "up": 19, "down": 20, "center": 23, "menu": 82,
         "search": 84, "enter": 66, "delete": 67, "del": 67, "recent": 187, "volume_up": 24, "volume_down": 25,
         "volume_mute": 164, "camera": 27, "power": 26}

Handler = Callable[[DeviceState, list[Any]], Awaitable[Any]]


CLIPBOARD_DENIED = "java.lang.SecurityException: Package android does not belong to 2000"
_JSONRPC_FRAMES = (
    "\tat java.lang.reflect.Method.invoke(Native Method)\n"
    "\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.invoke(JsonRpcBasicServer.java:467)\n"
    "\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.handleObject(JsonRpcBasicServer.java:352)\n"
    "\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.handleJsonNodeRequest(JsonRpcBasicServer.java:283)\n"
    "\tat com.googlecode.jsonrpc4j.JsonRpcBasicServer.handleRequest(JsonRpcBasicServer.java:251)\n"
    "\tat com.wetest.uia2.stub.AutomatorHttpServer.serve(AutomatorHttpServer.java:101)\n"
    "\tat fi.iki.elonen.NanoHTTPD.serve(NanoHTTPD.java:2244)\n"
)
_INJECTING = frozenset({"click", "swipe", "swipePoints", "drag", "pressKey", "pressKeyCode", "injectInputEvent"})


def _inject_denied(method: str) -> str:
    """UiAutomation's injection refused by MIUI (frame line numbers are illustrative)."""
    return (f"{INJECT_DENIED}\n\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3011)\n"
            "\tat android.os.Parcel.readException(Parcel.java:2978)\n"
            "\tat android.app.IUiAutomationConnection$Stub$Proxy.injectInputEvent(IUiAutomationConnection.java:478)\n"
            "\tat android.app.UiAutomation.injectInputEvent(UiAutomation.java:1063)\n"
            "\tat androidx.test.uiautomator.InteractionController.injectEventSync(InteractionController.java:641)\n"
            f"\tat com.wetest.uia2.stub.AutomatorServiceImpl.{method}(AutomatorServiceImpl.java:412)\n"
            + _JSONRPC_FRAMES)


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: str | None = None) -> None:
        self.code = code
        self.data = data
        super().__init__(message)


def _java_error(trace: str) -> RpcError:
    """A Java exception as the server reports it: the class as message, the trace as data."""
    return RpcError(SERVER_ERROR, trace.partition(":")[0], trace)


def _num(params: list[Any], index: int) -> int:
    try:
        return round(float(params[index]))
    except (IndexError, TypeError, ValueError) as exc:
        raise RpcError(INVALID_PARAMS, f"invalid parameter #{index}: {params!r}") from exc


# -- methods ---------------------------------------------------------------------------------------


async def _device_info(device: DeviceState, params: list[Any]) -> Any:
    width, height = device.phone.screen_size()
    density = device.density()
    return {"currentPackageName": device.phone.current_app().package, "displayWidth": width,
            "displayHeight": height, "displayRotation": 0, "displaySizeDpX": round(width * 160 / density),
            "displaySizeDpY": round(height * 160 / density), "productName": device.props["ro.product.name"],
            "screenOn": True, "sdkInt": int(device.props["ro.build.version.sdk"]), "naturalOrientation": True}


def _threaded(fn: Callable[[DeviceState, list[Any]], Any]) -> Handler:
    """A method that lays the screen out (a dump, or input that hit-tests it) runs on a worker
    thread, so the server's loop keeps serving other streams (a ping, adb) while a big screen lays
    out; the phone and the device state are thread-safe."""
    async def handler(device: DeviceState, params: list[Any]) -> Any:
        return await asyncio.to_thread(fn, device, params)

    handler.__name__ = handler.__qualname__ = fn.__name__
    return handler


@_threaded
def _dump(device: DeviceState, params: list[Any]) -> Any:
    """``dumpWindowHierarchy(compressed, maxDepth[, rootInActive])``: the server waits for idle a
    little and then dumps anyway, so an animated screen dumps fine here."""
    if not device.profile.window_roots:
        return device.dump_xml()
    if device.faults.take_empty_dump():
        return EMPTY_DUMP
    snap = device.phone.snapshot()
    max_depth = _num(params, 1) if len(params) > 1 else 50
    if len(params) > 2 and params[2]:
        return to_u2_xml([snap.root], max_depth)
    seed = f"{device.profile.seed}:{device.next_window_dump()}"
    return to_u2_xml(window_roots(snap, device.profile.ime.partition("/")[0], seed), max_depth)


async def _screenshot(device: DeviceState, params: list[Any]) -> Any:
    png = await asyncio.to_thread(capture_png, device)
    return base64.b64encode(png).decode("ascii")


@_threaded
def _click(device: DeviceState, params: list[Any]) -> Any:
    """A touch down and up at (x, y), as the server's ``click`` is: what the touch lands on decides
    what happens (a plain label does not take the focus from a field); false off the top or left."""
    x, y = _num(params, 0), _num(params, 1)
    if x < 0 or y < 0:
        return False
    duration = _num(params, 2) if len(params) > 2 else 0
    device.phone.swipe(x, y, x, y, duration)
    return True


@_threaded
def _swipe(device: DeviceState, params: list[Any]) -> Any:
    steps = _num(params, 4) if len(params) > 4 else 10
    device.phone.swipe(_num(params, 0), _num(params, 1), _num(params, 2), _num(params, 3), max(1, steps) * 5)
    return True


@_threaded
def _swipe_points(device: DeviceState, params: list[Any]) -> Any:
    points = params[0] if params and isinstance(params[0], list) else []
    if len(points) < 4:
        raise RpcError(INVALID_PARAMS, "swipePoints needs at least two points")
    steps = _num(params, 1) if len(params) > 1 else 10
    device.phone.swipe(_num(points, 0), _num(points, 1), _num(points, -2), _num(points, -1),
                       max(1, steps) * 5 * (len(points) // 2 - 1))
    return True


@_threaded
def _drag(device: DeviceState, params: list[Any]) -> Any:
    steps = _num(params, 4) if len(params) > 4 else 100
    device.phone.drag(_num(params, 0), _num(params, 1), _num(params, 2), _num(params, 3), max(1, steps) * 5)
    return True


@_threaded
def _press_key(device: DeviceState, params: list[Any]) -> Any:
    code = _KEYS.get(str(params[0]).lower()) if params else None
    if code is None:
        return False
    press_keycode(device, code)
    return True


@_threaded
def _press_key_code(device: DeviceState, params: list[Any]) -> Any:
    meta = _num(params, 1) if len(params) > 1 else 0
    press_keycode(device, _num(params, 0), meta)
    return True


async def _set_clipboard(device: DeviceState, params: list[Any]) -> Any:
    if device.profile.clipboard_set_denied:  # the shell uid (2000) is not package "android"
        raise _java_error(
            f"{CLIPBOARD_DENIED}\n\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3011)\n"
            "\tat android.os.Parcel.createException(Parcel.java:2995)\n"
            "\tat android.os.Parcel.readException(Parcel.java:2978)\n"
            "\tat android.os.Parcel.readException(Parcel.java:2920)\n"
            "\tat android.content.IClipboard$Stub$Proxy.setPrimaryClip(IClipboard.java:379)\n"
            "\tat android.content.ClipboardManager.setPrimaryClip(ClipboardManager.java:133)\n"
            "\tat com.wetest.uia2.stub.AutomatorServiceImpl.setClipboard(AutomatorServiceImpl.java:1637)\n"
            + _JSONRPC_FRAMES)
    text = params[1] if len(params) > 1 else params[0] if params else None
    device.clipboard = None if text is None else str(text)
    return None


async def _get_clipboard(device: DeviceState, params: list[Any]) -> Any:
    return None if device.profile.clipboard_get_null else device.clipboard  # background apps can't read it


@_threaded
def _paste(device: DeviceState, params: list[Any]) -> Any:
    """``pasteClipboard``: the server injects CTRL+V, which pastes into whichever field has the focus
    (nothing without one); it returns nothing either way."""
    _ctrl_key(device, KEYCODE_V)
    return None


@_threaded
def _clear_text(device: DeviceState, params: list[Any]) -> Any:
    """``clearInputText``: CTRL+A, then DEL (with CTRL held), injected: the focused field's text goes,
    whichever control was tapped; nothing without a focused field, and no answer either way."""
    _ctrl_key(device, KEYCODE_A)
    _ctrl_key(device, KEYCODE_DEL)
    return None


def _ctrl_key(device: DeviceState, code: int) -> None:
    press_keycode(device, code, META_CTRL_ON)


@_threaded
def _inject(device: DeviceState, params: list[Any]) -> Any:
    action, x, y = _num(params, 0), _num(params, 1), _num(params, 2)
    {0: touch_down, 2: touch_move, 1: touch_up}.get(action, touch_move)(device, x, y)
    return True


METHODS: dict[str, Handler] = {
    "deviceInfo": _device_info, "dumpWindowHierarchy": _dump, "takeScreenshot": _screenshot, "click": _click,
    "swipe": _swipe, "swipePoints": _swipe_points, "drag": _drag, "pressKey": _press_key,
    "pressKeyCode": _press_key_code, "setClipboard": _set_clipboard, "getClipboard": _get_clipboard,
    "pasteClipboard": _paste, "clearInputText": _clear_text, "injectInputEvent": _inject,
}


# -- JSON-RPC and HTTP ---------------------------------------------------------------------------------


async def handle_jsonrpc(device: DeviceState, body: bytes) -> dict[str, Any]:
    """One JSON-RPC 2.0 request (already read) to its response object."""
    try:
        request = json.loads(body)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}}
    ident = request.get("id") if isinstance(request, dict) else None
    try:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise RpcError(-32600, "Invalid Request")
        method = request["method"]
        handler = METHODS.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, "method not found")
        params = request.get("params")
        args = params if isinstance(params, list) else [] if params is None else [params]
        if device.faults.hangs(method):
            await asyncio.sleep(device.limits.hang_timeout)
        if method in _INJECTING and not device.inject_allowed():
            raise _java_error(_inject_denied(method))
        return {"jsonrpc": "2.0", "id": ident, "result": await handler(device, args)}
    except RpcError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": str(exc)}
        if exc.data is not None:
            error["data"] = exc.data
        return {"jsonrpc": "2.0", "id": ident, "error": error}
    except DeviceError as exc:
        return {"jsonrpc": "2.0", "id": ident,
                "error": {"code": SERVER_ERROR, "message": f"java.lang.IllegalStateException: {exc}"}}
    except Exception as exc:  # the real server answers a crashed method with its exception
        return {"jsonrpc": "2.0", "id": ident,
                "error": {"code": INTERNAL_ERROR, "message": f"java.lang.RuntimeException: {exc!r}"}}


def _response(status: str, body: bytes, content_type: str) -> bytes:
    head = (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            "Connection: keep-alive\r\n\r\n")
    return head.encode() + body


async def _one_request(device: DeviceState, reader: ByteReader) -> bytes:
    head = (await reader.read_until(b"\r\n\r\n", MAX_HEADER)).decode("latin-1")
    request_line, *header_lines = head.split("\r\n")
    method, _, rest = request_line.partition(" ")
    path = rest.partition(" ")[0]
    headers = {name.strip().lower(): value.strip()
               for name, _, value in (line.partition(":") for line in header_lines if line)}
    length = int(headers.get("content-length", "0") or "0")
    if length < 0 or length > MAX_BODY:
        return _response("413 Payload Too Large", b"", "text/plain")
    body = await reader.read_exactly(length) if length else b""
    if method == "GET" and path == "/ping":
        return _response("200 OK", b"pong", "text/plain")
    if method == "POST" and path.startswith("/jsonrpc/0"):
        result = await handle_jsonrpc(device, body)
        return _response("200 OK", json.dumps(result, ensure_ascii=False).encode(), "application/json")
    return _response("404 Not Found", b"Not Found", "text/plain")


async def serve_http(device: DeviceState, stream: AdbStream, port: int) -> None:
    """Serve HTTP requests on one ``tcp:`` stream while the server on ``port`` runs."""
    reader = ByteReader(stream, device.limits.read_timeout)
    try:
        while device.u2_running(port) and not await reader.at_eof():
            await stream.write(await _one_request(device, reader))
    except (EOFError, TimeoutError, ValueError, StreamClosed):
        return
