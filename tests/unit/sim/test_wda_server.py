"""The emulated WebDriverAgent (``ufo_mobile.sim.servers.wda``) through wdapy's own client, as an iOS driver
talks to a real iPhone: sessions, the page source, points and pixels, apps, keys, alerts and the soft
keyboard, the errors WDA answers, and ``sim --wda`` on the command line.

Every server listens on 127.0.0.1 port 0 and is stopped in its fixture; every request has a timeout.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import wdapy
from lxml import etree
from PIL import Image
from wdapy.exceptions import RequestError

from ufo_mobile.sim.phone.loader import load_app_text
from ufo_mobile.sim.phone.simphone import SimPhone
from ufo_mobile.sim.servers.wda import BUNDLE_IDS, EmulatedWda, WdaLimits
from ufo_mobile.sim.servers.wda.source import bundle_id, package_for

ROOT = Path(__file__).resolve().parents[3]
WAIT = 60.0  # seconds; only ever reached when something hangs
PREFIX = "XCUIElementType"
SETTINGS = "com.apple.Preferences"
FORM = """
package: com.example.form
label: Form
start: main
state: {name: "", secret: "", sent: 0, alerts: false, volume: 30}
screens:
  main:
    title: Form
    body:
      - {class: android.widget.EditText, id: name, bind: name, hint: Your name}
      - {class: android.widget.EditText, id: secret, bind: secret, hint: Password, password: true}
      - {class: android.widget.Switch, id: alerts, bind: alerts, desc: Alerts}
      - {class: android.widget.SeekBar, id: volume, bind: volume, desc: Volume}
      - {class: android.view.View, grow: true}
      - {class: android.widget.Button, id: send, text: Send, on_tap: {set: {var: sent, value: 1}}}
"""


class RecordingPhone(SimPhone):
    """A simulated phone that remembers where (in pixels) it was tapped."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.taps: list[tuple[int, int]] = []

    def tap(self, x: int, y: int) -> None:
        self.taps.append((x, y))
        super().tap(x, y)


@pytest.fixture
def iphone() -> RecordingPhone:
    phone = RecordingPhone(width=1179, height=2556)  # an iPhone 15: 393x852 points at 3x
    phone.install(load_app_text(FORM, "form.yaml"))
    return phone


@pytest.fixture
def wda(iphone: RecordingPhone) -> Iterator[EmulatedWda]:
    server = EmulatedWda(iphone, limits=WdaLimits(source_alert_wait=0.05, read_timeout=5.0))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(wda: EmulatedWda) -> wdapy.AppiumClient:
    found = wdapy.AppiumClient(wda.url)
    found.request_timeout = WAIT
    return found


def call(wda: EmulatedWda, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    """One raw request: (HTTP status, the JSON answer)."""
    conn = http.client.HTTPConnection("127.0.0.1", wda.port, timeout=WAIT)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def source(client: wdapy.AppiumClient) -> etree._Element:
    return etree.fromstring(client.sourcetree().value.encode("utf-8"))


def element(root: etree._Element, kind: str, **attrs: str) -> etree._Element:
    for node in root.iter(PREFIX + kind):
        if all(node.get(key) == value for key, value in attrs.items()):
            return node
    raise AssertionError(f"no {kind} {attrs} in {etree.tostring(root)[:2000]!r}")


def centre(node: etree._Element) -> tuple[float, float]:
    x, y, w, h = (int(node.get(key)) for key in ("x", "y", "width", "height"))
    return x + w / 2, y + h / 2


# -- sessions and status ------------------------------------------------------------------------------


def test_status_and_sessions_have_wdas_shapes(wda: EmulatedWda, client: wdapy.AppiumClient) -> None:
    status = client.status()
    assert status.session_id is None and status.ip == "127.0.0.1"
    assert status.message == "WebDriverAgent is ready to accept commands"
    _, raw = call(wda, "GET", "/status")
    assert raw["value"]["ready"] is True and raw["value"]["os"]["name"] == "iOS"
    assert raw["value"]["device"] == "iphone"

    sid = client.session()
    assert client.status().session_id == sid == wda.session_id
    code, info = call(wda, "GET", f"/session/{sid}")
    assert code == 200 and info["sessionId"] == sid
    assert info["value"] == {"sessionId": sid, "capabilities": {"device": "iphone", "sdkVersion": "17.5"}}

    code, refused = call(wda, "POST", "/session", {"desiredCapabilities": {}})
    assert code == 500 and refused["value"]["error"] == "session not created"
    assert refused["value"]["message"] == "'capabilities' is mandatory to create a new session"
    assert refused["value"]["traceback"] == ""


def test_a_stale_session_is_not_found_and_wdapy_makes_a_new_one(wda: EmulatedWda,
                                                                  client: wdapy.AppiumClient) -> None:
    first = client.session()
    other = wdapy.AppiumClient(wda.url)
    other.request_timeout = WAIT
    second = other.session()  # replaces the first: WDA keeps one session
    assert second != first

    code, answer = call(wda, "GET", f"/session/{first}/window/size")
    assert code == 404
    assert answer["value"]["error"] == "invalid session id"
    assert answer["value"]["message"] == "Session does not exist"
    assert answer["sessionId"] == second

    assert client.window_size() == (393, 852)  # wdapy's session_request makes a new session and retries
    third = wda.session_id
    assert third not in (first, second, None)

    code, _ = call(wda, "DELETE", f"/session/{third}")
    assert code == 200 and wda.session_id is None
    assert client.status().session_id is None
    assert client.window_size() == (393, 852)  # deleted: the same recovery
    assert wda.session_id not in (third, None)


def test_a_session_with_a_bundle_id_launches_it_and_ending_it_terminates_it(wda: EmulatedWda,
                                                                            client: wdapy.AppiumClient) -> None:
    client.session(SETTINGS, arguments=["-debug"], environment={"MODE": "test"})
    info = client.app_current()
    assert info.bundle_id == SETTINGS and info.name == "" and info.pid > 0
    assert info.process_arguments == {"args": ["-debug"], "env": {"MODE": "test"}}
    assert client.app_list().bundle_id == SETTINGS

    code, _ = call(wda, "DELETE", f"/session/{wda.session_id}")
    assert code == 200
    assert client.app_current().bundle_id == "com.apple.springboard"  # shouldTerminateApp, on by default

    code, answer = call(wda, "POST", "/session", {"capabilities": {"alwaysMatch": {"bundleId": "com.example.none"}}})
    assert code == 500 and answer["value"]["error"] == "session not created"
    assert "FBSOpenApplicationServiceErrorDomain" in answer["value"]["message"]


# -- the page source ------------------------------------------------------------------------------------


def test_the_source_is_wdas_xml_in_points(wda: EmulatedWda, client: wdapy.AppiumClient,
                                          iphone: RecordingPhone) -> None:
    client.session(SETTINGS)
    text = client.sourcetree().value
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<XCUIElementTypeApplication ')
    root = etree.fromstring(text.encode("utf-8"))
    assert list(root.attrib) == ["type", "name", "label", "enabled", "visible", "accessible", "x", "y", "width",
                                 "height", "index", "traits", "processId", "bundleId"]
    assert root.get("name") == root.get("label") == "Settings"
    assert root.get("bundleId") == SETTINGS and int(root.get("processId")) == client.app_current().pid
    assert (root.get("width"), root.get("height")) == ("393", "852")

    window = root[0]
    assert window.tag == PREFIX + "Window" and window.get("accessible") == "false"
    assert element(root, "NavigationBar").get("name") == "Settings"
    cell = element(root, "Cell", label="Wi-Fi")  # a tappable row: one accessibility element ...
    assert cell.get("value") == "Off" and cell.get("name") == "Wi-Fi"  # ... its detail text the value
    assert cell.get("accessible") == "true" and cell.get("traits") == "Button"
    title = element(cell, "StaticText", label="Wi-Fi")
    assert title.get("value") == title.get("name") == "Wi-Fi" and title.get("accessible") == "false"
    airplane = element(root, "Switch", label="Airplane mode")
    assert airplane.get("value") == "0" and airplane.get("accessible") == "true"

    view = iphone.snapshot().find(lambda v: v.text == "Wi-Fi")
    assert view is not None
    left, top, right, bottom = view.frame.left, view.frame.top, view.frame.right, view.frame.bottom
    assert int(title.get("x")) == left // 3 and int(title.get("y")) == top // 3  # CGRectIntegral: floor ...
    assert int(title.get("x")) + int(title.get("width")) == -(-right // 3)  # ... and ceil
    assert int(title.get("y")) + int(title.get("height")) == -(-bottom // 3)

    assert client.sourcetree().value == call(wda, "GET", f"/session/{wda.session_id}/source")[1]["value"]


def test_text_inputs_switches_and_sliders_read_as_ios_writes_them(wda: EmulatedWda, client: wdapy.AppiumClient,
                                                                 iphone: RecordingPhone) -> None:
    client.session("com.example.form")
    root = source(client)
    name = element(root, "TextField")
    assert name.get("value") == name.get("placeholderValue") == "Your name"  # empty: the placeholder is the value
    assert name.get("label") == "" and name.get("name") is None
    assert list(name.attrib)[-2:] == ["placeholderValue", "traits"]
    assert element(root, "SecureTextField").get("value") == "Password"
    assert element(root, "Switch", label="Alerts").get("value") == "0"
    assert element(root, "Slider", label="Volume").get("value") == "30%"

    iphone.set_state("com.example.form", name="Ann", secret="hunter2", alerts=True, volume=75)
    root = source(client)
    assert element(root, "TextField").get("value") == "Ann"
    assert element(root, "SecureTextField").get("value") == "\u2022" * 7
    assert element(root, "Switch", label="Alerts").get("value") == "1"
    assert element(root, "Slider", label="Volume").get("value") == "75%"


def test_other_source_formats_scope_and_excluded_attributes(wda: EmulatedWda, client: wdapy.AppiumClient) -> None:
    sid = client.session(SETTINGS)
    code, answer = call(wda, "GET", f"/session/{sid}/source?format=json")
    assert code == 200
    tree = answer["value"]
    assert tree["type"] == "Application" and tree["label"] == "Settings" and tree["isAccessible"] == "0"
    assert tree["rect"] == {"x": 0, "y": 0, "width": 393, "height": 852}
    assert tree["frame"] == "{{0, 0}, {393, 852}}" and tree["children"][0]["type"] == "Window"

    code, answer = call(wda, "GET", "/source?scope=AppiumAUT&excluded_attributes=traits,index")
    root = etree.fromstring(answer["value"].encode("utf-8"))
    assert root.tag == "AppiumAUT" and root[0].tag == PREFIX + "Application"
    assert "traits" not in root[0].attrib and "index" not in root[0].attrib and "visible" in root[0].attrib

    code, answer = call(wda, "GET", "/source?format=description")
    assert code == 200 and answer["value"].startswith("Application, pid: ")

    code, answer = call(wda, "GET", "/source?format=yaml")
    assert code == 400 and answer["value"]["error"] == "invalid argument"


# -- points and pixels ------------------------------------------------------------------------------------


def test_taps_are_points_and_screenshots_are_pixels(wda: EmulatedWda, client: wdapy.AppiumClient,
                                                    iphone: RecordingPhone) -> None:
    client.session(SETTINGS)
    assert client.scale == 3
    assert client.window_size() == (393, 852)
    shot = client.screenshot()
    assert shot.size == (1179, 2556)
    _, screen = call(wda, "GET", "/wda/screen")
    assert screen["value"]["screenSize"] == {"width": 393, "height": 852} and screen["value"]["scale"] == 3
    assert 0 < client.status_barsize().height < 852

    client.tap(10.5, 20.25)  # status bar: nothing there
    assert iphone.taps[-1] == (32, 61)  # round(x * 3), round(y * 3)

    x, y = centre(element(source(client), "Cell", label="Wi-Fi"))
    client.tap(x, y)
    assert iphone.taps[-1] == (round(x * 3), round(y * 3))
    assert iphone.current_screen() == "wifi"  # the tap landed on the row the source put there


def test_touch_and_hold_and_drag_go_through_as_gestures(wda: EmulatedWda, client: wdapy.AppiumClient,
                                                        iphone: RecordingPhone) -> None:
    client.session("com.example.form")
    slider = element(source(client), "Slider", label="Volume")
    x, y = centre(slider)
    left = int(slider.get("x"))
    client.swipe(x, y, left + 1, y, duration=0.1)  # drag the slider's thumb to its start
    assert element(source(client), "Slider", label="Volume").get("value") == "0%"
    client.touch_and_hold(*centre(element(source(client), "Button", label="Send")), 1.0)
    assert iphone.state("com.example.form")["sent"] == 1  # a held button still clicks


# -- apps and buttons --------------------------------------------------------------------------------------


def test_app_states_launch_and_terminate(wda: EmulatedWda, client: wdapy.AppiumClient) -> None:
    sid = client.session()
    assert client.app_state(SETTINGS) == wdapy.AppState.STOPPED
    client.app_start(SETTINGS)
    assert client.app_state(SETTINGS) == wdapy.AppState.RUNNING
    first = client.app_current().pid
    client.press(wdapy.Keycode.HOME)
    assert client.app_state(SETTINGS) == wdapy.AppState.BACKGROUND  # 2: suspended behind the home screen
    assert client.app_state("com.apple.springboard") == wdapy.AppState.RUNNING
    assert client.app_current().bundle_id == "com.apple.springboard"
    client.app_start(SETTINGS)  # running: brought back, same process
    assert client.app_current().pid == first

    assert call(wda, "POST", f"/session/{sid}/wda/apps/terminate", {"bundleId": SETTINGS})[1]["value"] is True
    assert call(wda, "POST", f"/session/{sid}/wda/apps/terminate", {"bundleId": SETTINGS})[1]["value"] is False
    client.app_start(SETTINGS)
    assert client.app_current().pid != first  # a new process

    code, answer = call(wda, "POST", f"/session/{sid}/wda/apps/state", {"bundleId": "com.example.none"})
    assert (code, answer["value"]) == (200, 0)  # not installed ...
    with pytest.raises(ValueError):
        client.app_state("com.example.none")  # ... which wdapy's AppState has no member for
    assert call(wda, "POST", f"/session/{sid}/wda/apps/state", {"bundleId": "com.android.settings"})[1]["value"] == 0
    code, answer = call(wda, "POST", f"/session/{sid}/wda/apps/launch", {"bundleId": "com.example.none"})
    assert code == 400 and answer["value"]["error"] == "invalid argument"
    assert 'The request to open \\"com.example.none\\" failed.' in answer["value"]["message"]


def test_an_app_under_test_that_died_is_reported_crashed(wda: EmulatedWda, client: wdapy.AppiumClient,
                                                         iphone: RecordingPhone) -> None:
    sid = client.session("com.apple.mobilenotes")
    iphone.stop_app("com.example.notes")  # killed behind WDA's back
    code, answer = call(wda, "GET", f"/session/{sid}/window/size")
    assert code == 400 and answer["value"]["error"] == "invalid element state"
    assert "'com.apple.mobilenotes' is not running, possibly crashed" in answer["value"]["message"]
    client.app_terminate("com.apple.mobilenotes")  # terminated on purpose: no longer expected to run
    assert client.window_size() == (393, 852)


def test_buttons_home_screen_and_lock(wda: EmulatedWda, client: wdapy.AppiumClient,
                                      iphone: RecordingPhone) -> None:
    sid = client.session(SETTINGS)
    client.volume_up()
    client.homescreen()
    assert client.app_current().bundle_id == "com.apple.springboard"
    code, answer = call(wda, "POST", f"/session/{sid}/wda/pressButton", {"name": "back"})
    assert code == 500 and answer["value"]["error"] == "unknown error"
    assert "The button 'back' is not supported" in answer["value"]["message"]
    assert "volumeup" in answer["value"]["message"]

    client.lock()
    assert client.is_locked()
    shown = iphone.current_screen()
    client.tap(*centre(element(source(client), "Icon", label="Settings")))
    assert iphone.current_screen() == shown and not iphone.taps  # the lock screen takes every touch
    locked = client.screenshot()
    client.unlock()
    assert not client.is_locked()
    assert locked.tobytes() != client.screenshot().tobytes()


# -- the keyboard ---------------------------------------------------------------------------------------------


def test_the_keyboard_covers_the_controls_under_it(wda: EmulatedWda, client: wdapy.AppiumClient,
                                                   iphone: RecordingPhone) -> None:
    client.session("com.example.form")
    root = source(client)
    assert not list(root.iter(PREFIX + "Keyboard"))
    send = centre(element(root, "Button", label="Send"))
    with pytest.raises(RequestError) as refused:
        client.send_keys("no field")  # nothing focused: no keyboard
    assert "The on-screen keyboard must be present to send keys" in str(refused.value)
    assert "invalid element state" in str(refused.value)

    client.tap(*centre(element(root, "TextField")))
    root = source(client)
    board = element(root, "Keyboard")
    top = int(board.get("y"))
    assert top > 852 / 2 and int(board.get("y")) + int(board.get("height")) == 852
    assert element(board, "Key", name="q").get("accessible") == "true"
    assert element(root, "Button", label="Send").get("visible") == "true"  # still in the tree, under the keys
    assert send[1] > top

    client.tap(*send)
    assert iphone.state("com.example.form")["sent"] == 0  # the keyboard took the touch ...
    typed = element(source(client), "TextField").get("value")
    assert typed not in ("", "Your name")  # ... and typed its key

    client.send_keys("\b" * len(typed) + "Ann")
    assert element(source(client), "TextField").get("value") == "Ann"
    client.send_keys("\n")  # Return: the field has no submit action, so nothing leaves the screen
    assert iphone.current_screen() == "main"
    with pytest.raises(RequestError, match="Did not know how to dismiss the keyboard"):
        client.keyboard_dismiss()  # its Return key does not hide this keyboard either


# -- alerts -----------------------------------------------------------------------------------------------


def test_an_alert_blocks_the_source_until_it_is_answered(wda: EmulatedWda, client: wdapy.AppiumClient,
                                                         iphone: RecordingPhone) -> None:
    sid = client.session(SETTINGS)
    assert not client.alert.exists
    code, answer = call(wda, "POST", f"/session/{sid}/alert/accept")
    assert (code, answer["value"]["error"], answer["value"]["message"]) == (404, "no such alert", "No alert is open")

    text = "\u201cShop\u201d Would Like to Send You Notifications\nThey may include alerts and sounds."
    wda.show_alert(text, ["Don\u2019t Allow", "Allow"])
    code, blocked = call(wda, "GET", f"/session/{sid}/source")
    assert code == 404 and blocked["value"]["error"] == "stale element reference"
    assert "is not present in the current view anymore" in blocked["value"]["message"]
    with pytest.raises(RequestError):
        client.sourcetree()

    assert client.alert.exists and client.alert.get_text() == text
    assert client.alert.buttons() == ["Don\u2019t Allow", "Allow"]
    screen = iphone.current_screen()
    client.tap(*centre(element_of_settings_row(iphone)))  # outside the alert: swallowed
    assert iphone.current_screen() == screen and wda.alert_text == text
    shot = client.screenshot()
    assert shot.size == (1179, 2556)

    client.alert.accept()  # an alert's accept button is its last
    assert wda.alert_choices == ["Allow"] and not client.alert.exists
    assert source(client).get("bundleId") == SETTINGS

    wda.show_alert("Allow?", ["Don\u2019t Allow", "Allow"])
    client.alert.dismiss()  # ... and its dismiss button its first
    wda.show_alert("Allow?", ["Don\u2019t Allow", "Allow"])
    client.alert.click("Allow")
    assert wda.alert_choices == ["Allow", "Don\u2019t Allow", "Allow"]


def element_of_settings_row(phone: SimPhone) -> etree._Element:
    """The Wi-Fi row of Settings' main screen in points, read from the phone (the source is blocked)."""
    view = phone.snapshot().find(lambda v: v.text == "Wi-Fi")
    assert view is not None
    node = etree.Element(PREFIX + "StaticText")
    for key, value in (("x", view.frame.left), ("y", view.frame.top), ("width", view.frame.width),
                       ("height", view.frame.height)):
        node.set(key, str(value // 3))
    return node


def test_a_tap_on_an_alert_button_presses_it_and_default_alert_action_answers_it(
        wda: EmulatedWda, client: wdapy.AppiumClient) -> None:
    client.session(SETTINGS)
    wda.show_alert("Allow?", ["Don\u2019t Allow", "Allow"])
    shot = client.screenshot()
    # the right half of the alert's button row (two buttons side by side under the text)
    blue = [(x, y) for y in range(1100, 1500, 3) for x in range(620, 900, 3)
            if shot.getpixel((x, y)) == (0, 122, 255)]
    assert blue, "the alert's buttons are drawn in iOS blue"
    x, y = blue[len(blue) // 2]
    client.tap(x / 3, y / 3)
    assert wda.alert_choices == ["Allow"] and wda.alert_text is None

    code, _ = call(wda, "POST", "/session", {"capabilities": {"alwaysMatch": {"defaultAlertAction": "dismiss"}}})
    assert code == 200
    wda.show_alert("Allow?", ["Don\u2019t Allow", "Allow"])
    assert wda.alert_text is None and wda.alert_choices[-1] == "Don\u2019t Allow"


# -- errors and bounds ---------------------------------------------------------------------------------------


def test_unknown_routes_and_bad_arguments_answer_wdas_errors(wda: EmulatedWda, client: wdapy.AppiumClient) -> None:
    code, answer = call(wda, "GET", "/wda/nothing")
    assert code == 404 and answer["value"]["error"] == "unknown command"
    assert answer["value"]["message"].startswith("Unhandled endpoint: /wda/nothing")
    code, answer = call(wda, "POST", "/wda/tap", {"x": 1, "y": 2})  # a session route without its session
    assert code == 404 and answer["value"]["error"] == "unknown command"

    sid = client.session()
    code, answer = call(wda, "POST", f"/session/{sid}/wda/tap", {"x": 1})
    assert code == 400 and answer["value"] == {"error": "invalid argument", "traceback": "",
                                               "message": "Both x and y coordinates must be provided"}
    conn = http.client.HTTPConnection("127.0.0.1", wda.port, timeout=WAIT)
    try:
        conn.request("GET", "/health")
        response = conn.getresponse()
        assert response.status == 200 and b"I-AM-ALIVE" in response.read()
    finally:
        conn.close()


def test_the_json_is_nsjsonserializations_and_a_body_that_is_not_json_is_empty(wda: EmulatedWda) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", wda.port, timeout=WAIT)
    try:
        conn.request("POST", "/session", body=b"{not json", headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        body = response.read().decode()
        assert response.status == 500 and response.getheader("Content-Type") == "application/json;charset=UTF-8"
        assert response.getheader("Connection") == "close"
    finally:
        conn.close()
    assert '"error" : "session not created"' in body  # "key" : value, pretty-printed
    assert json.loads(body)["sessionId"] is None

    conn = http.client.HTTPConnection("127.0.0.1", wda.port, timeout=WAIT)
    try:
        conn.request("GET", "/screenshot")
        body = conn.getresponse().read().decode()
    finally:
        conn.close()
    encoded = json.loads(body)["value"]
    assert "\\/" in body or "/" not in encoded  # NSJSONSerialization escapes every slash
    with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
        assert image.format == "PNG" and image.size == (1179, 2556)


def test_request_bodies_are_bounded(iphone: RecordingPhone) -> None:
    with EmulatedWda(iphone, limits=WdaLimits(read_timeout=0.2)) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(b"POST /session HTTP/1.1\r\nHost: x\r\nContent-Length: 16777217\r\n\r\n")
            answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 413 ") and b"larger than 16777216 bytes" in answer

        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(b"POST /session HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"capab")
            answer = _read_all(sock)  # the body never comes: the server gives up, the client is not kept
        assert answer.startswith(b"HTTP/1.1 408 ") and b"after 7 of 100 bytes" in answer


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_it_listens_on_loopback_only_and_stops_cleanly(iphone: RecordingPhone) -> None:
    for host in ("0.0.0.0", "192.168.1.20", "example.com"):
        with pytest.raises(ValueError, match="loopback only"):
            EmulatedWda(iphone, host=host)

    # a request waiting for an alert to go (far longer than the test waits) is released by stop()
    server = EmulatedWda(iphone, limits=WdaLimits(source_alert_wait=3600.0))
    server.start()
    port = server.port
    server.show_alert("Allow?", ["OK"])
    answers: queue.Queue[object] = queue.Queue()

    def blocked_source() -> None:
        try:
            answers.put(call(server, "GET", "/source")[0])
        except (OSError, http.client.HTTPException) as exc:  # stopped before it was answered
            answers.put(exc)

    waiting = threading.Thread(target=blocked_source, daemon=True)
    waiting.start()
    server.stop()
    result = answers.get(timeout=WAIT)
    assert result == 404 or isinstance(result, OSError | http.client.HTTPException), result
    waiting.join(WAIT)
    assert not waiting.is_alive()
    server.stop()  # twice is fine
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()


def test_wda_shutdown_stops_the_server_after_answering(iphone: RecordingPhone) -> None:
    server = EmulatedWda(iphone)
    server.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
        try:
            conn.request("GET", "/wda/shutdown")
            assert conn.getresponse().read() == b"Shutting down"
        finally:
            conn.close()
        assert server.wait(WAIT)
    finally:
        server.stop()


def test_the_bundle_id_table_maps_apples_apps_both_ways() -> None:
    assert BUNDLE_IDS["com.android.settings"] == SETTINGS
    assert BUNDLE_IDS["com.android.launcher3"] == "com.apple.springboard"
    assert bundle_id("com.example.browser") == "com.apple.mobilesafari"
    assert bundle_id("com.example.shop") == "com.example.shop"
    installed = ["com.android.settings", "com.example.shop"]
    assert package_for(SETTINGS, installed) == "com.android.settings"
    assert package_for("com.example.shop", installed) == "com.example.shop"
    assert package_for("com.android.settings", installed) is None  # not a bundle id on an iPhone
    assert package_for("com.apple.mobilenotes", installed) is None  # not installed


# -- the command line -----------------------------------------------------------------------------------------


def test_sim_wda_serves_an_iphone_until_ctrl_c(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "sim", "--wda", "--port", "0"], cwd=tmp_path,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8", start_new_session=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        ready = lines.get(timeout=WAIT)
        assert ready is not None, proc.stderr.read() if proc.stderr else ""
        prefix = "simulated iPhone's WebDriverAgent listening on http://127.0.0.1:"
        assert ready.startswith(prefix), ready
        url = ready.strip().split(" on ", 1)[1]
        iphone = wdapy.AppiumClient(url)
        iphone.request_timeout = WAIT
        assert iphone.status().message == "WebDriverAgent is ready to accept commands"
        assert iphone.window_size() == (393, 852) and iphone.screenshot().size == (1179, 2556)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=WAIT) == 0
        assert lines.get(timeout=WAIT) == "simulated iPhone's WebDriverAgent stopped\n"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=WAIT)
        reader.join(WAIT)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
