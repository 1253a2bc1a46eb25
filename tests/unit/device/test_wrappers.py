"""Driver wrappers: delegation, recording and replay, human-like input."""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from lxml import etree
from pydantic import ValidationError

from tests.fakes import FakeDriver
from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver
from ufo_mobile.core.device.recording import RecordedAction, RecordingDriver, load_recording, replay
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.device.stealth import StealthDriver, StealthSettings
from ufo_mobile.core.device.wrappers import DriverWrapper
from ufo_mobile.core.trace.writer import Redactor, RunWriter
from ufo_mobile.errors import DeviceCommandError, RecordingError

SETTINGS = "com.android.settings"
NOTES = "com.example.notes"
PASSWORD_XML = ('<hierarchy><node class="android.widget.EditText" password="true" focused="true" '
                'bounds="[0,0][10,10]"/></hierarchy>')
LOGIN_XML = ('<hierarchy><node class="android.widget.EditText" text="" focused="true" bounds="[0,0][10,10]"/>'
             '<node class="android.widget.EditText" password="true" bounds="[0,20][10,30]"/></hierarchy>')


class SpyDriver(DeviceDriver):
    """Implements every operation; records calls as ``(name, *args)``; ``fail`` makes actions raise it."""

    supported: ClassVar[frozenset[str]] = frozenset({
        "connect", "ensure_connected", "close", "tap", "long_press", "swipe", "drag", "input_text",
        "press_key", "start_app", "install_app", "list_packages", "get_apps", "screenshot",
        "get_ui_tree", "get_date", "current_app", "screen_size",
    })

    def __init__(self, xml: str = "<hierarchy/>") -> None:
        self.serial = "spy-7"
        self.xml = xml
        self.calls: list[tuple[Any, ...]] = []
        self.fail: Exception | None = None

    def _act(self, *call: Any) -> None:
        self.calls.append(call)
        if self.fail is not None:
            raise self.fail

    async def connect(self) -> None:
        self.calls.append(("connect",))

    async def ensure_connected(self) -> None:
        self.calls.append(("ensure_connected",))

    async def close(self) -> None:
        self.calls.append(("close",))

    async def tap(self, x: int, y: int) -> None:
        self._act("tap", x, y)

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._act("long_press", x, y, duration_ms)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._act("swipe", x1, y1, x2, y2, duration_ms)

    async def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        self._act("drag", x1, y1, x2, y2, duration_ms)

    async def input_text(self, text: str, clear: bool = False) -> None:
        self._act("input_text", text, clear)

    async def press_key(self, key: str) -> None:
        self._act("press_key", key)

    async def start_app(self, package: str, activity: str | None = None) -> None:
        self._act("start_app", package, activity)

    async def install_app(self, apk_path: str) -> None:
        self._act("install_app", apk_path)

    async def list_packages(self) -> list[str]:
        self.calls.append(("list_packages",))
        return ["a.b"]

    async def get_apps(self) -> list[AppInfo]:
        self.calls.append(("get_apps",))
        return [AppInfo("a.b", "AB")]

    async def screenshot(self) -> bytes:
        self.calls.append(("screenshot",))
        return b"png"

    async def get_ui_tree(self) -> str:
        self.calls.append(("get_ui_tree",))
        return self.xml

    async def get_date(self) -> str:
        self.calls.append(("get_date",))
        return "today"

    async def current_app(self) -> CurrentApp:
        self.calls.append(("current_app",))
        return CurrentApp("a.b", ".Main")

    async def screen_size(self) -> tuple[int, int]:
        self.calls.append(("screen_size",))
        return (720, 1280)


class Sleeps:
    """A fake ``asyncio.sleep`` that records what it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Clock:
    """A monotonic clock that advances by fixed steps on each read."""

    def __init__(self, steps: list[float]) -> None:
        self._now = 100.0
        self._steps: Iterator[float] = iter(steps)

    def __call__(self) -> float:
        self._now += next(self._steps, 0.0)
        return self._now


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def node_bounds(xml: str, *, text: str | None = None, desc: str | None = None) -> tuple[int, int, int, int]:
    for node in etree.fromstring(xml.encode("utf-8")).iter("node"):
        if (text is None or node.get("text") == text) and (desc is None or node.get("content-desc") == desc):
            left, top, right, bottom = (int(v) for v in re.findall(r"-?\d+", node.get("bounds", "")))
            return left, top, right, bottom
    raise AssertionError(f"no node text={text!r} desc={desc!r}")


def centre(bounds: tuple[int, int, int, int]) -> tuple[int, int]:
    return (bounds[0] + bounds[2]) // 2, (bounds[1] + bounds[3]) // 2


# -- DriverWrapper ----------------------------------------------------------------------------


async def test_wrapper_delegates_every_operation() -> None:
    spy = SpyDriver()
    wrapper = DriverWrapper(spy)
    assert wrapper.inner is spy and wrapper.innermost is spy and wrapper.serial == "spy-7"
    await wrapper.connect()
    await wrapper.ensure_connected()
    await wrapper.tap(1, 2)
    await wrapper.long_press(3, 4, 900)
    await wrapper.swipe(1, 2, 3, 4, 50)
    await wrapper.drag(5, 6, 7, 8, 1200)
    await wrapper.input_text("hi", clear=True)
    await wrapper.press_key("back")
    await wrapper.start_app("a.b", ".Main")
    await wrapper.install_app("/x.apk")
    assert await wrapper.list_packages() == ["a.b"]
    assert await wrapper.get_apps() == [AppInfo("a.b", "AB")]
    assert await wrapper.screenshot() == b"png"
    assert await wrapper.get_ui_tree() == "<hierarchy/>"
    assert await wrapper.get_date() == "today"
    assert await wrapper.current_app() == CurrentApp("a.b", ".Main")
    assert await wrapper.screen_size() == (720, 1280)
    await wrapper.close()
    assert [call[0] for call in spy.calls] == [
        "connect", "ensure_connected", "tap", "long_press", "swipe", "drag", "input_text", "press_key",
        "start_app", "install_app", "list_packages", "get_apps", "screenshot", "get_ui_tree", "get_date",
        "current_app", "screen_size", "close"]
    assert spy.calls[3] == ("long_press", 3, 4, 900) and spy.calls[6] == ("input_text", "hi", True)
    assert spy.calls[8] == ("start_app", "a.b", ".Main")


def test_supported_is_per_instance(tmp_path: Path) -> None:
    limited, full = DriverWrapper(FakeDriver()), DriverWrapper(SimDriver())
    assert limited.supported == FakeDriver.supported and full.supported == SimDriver.supported
    assert DriverWrapper.supported == frozenset()  # the class attribute is untouched
    assert not limited.supports("drag") and full.supports("drag") and limited.supports("tap")
    stacked = StealthDriver(RecordingDriver(FakeDriver(serial="fake-9"), tmp_path / "r.jsonl"), seed=1)
    assert stacked.supported == FakeDriver.supported and not stacked.supports("long_press")
    assert stacked.serial == "fake-9" and isinstance(stacked.innermost, FakeDriver)


# -- RecordingDriver --------------------------------------------------------------------------


async def test_recording_lines_fields_order_and_flush(tmp_path: Path) -> None:
    path = tmp_path / "rec" / "actions.jsonl"
    spy = SpyDriver()
    # Each action reads the clock twice (start, end): gaps of 1.0 s and durations of 0.5 s.
    recorder = RecordingDriver(spy, path, clock=Clock([0.0, 1.0, 0.5, 1.0, 0.5]))
    assert path.read_text() == ""
    await recorder.tap(10, 20)
    assert len(lines(path)) == 1  # on disk before the call returned
    await recorder.swipe(1, 2, 300, 400, 250)
    first, second = lines(path)
    assert first == {"seq": 0, "action": "tap", "args": {"x": 10, "y": 20}, "start_s": 1.0, "duration_s": 0.5,
                     "ok": True, "error_type": None, "error_message": None, "observation": None,
                     "redacted": False, "text_len": None}
    assert second["seq"] == 1 and second["action"] == "swipe" and second["start_s"] == pytest.approx(2.5)
    assert second["args"] == {"x1": 1, "y1": 2, "x2": 300, "y2": 400, "duration_ms": 250}
    for call in (recorder.long_press(5, 6), recorder.drag(1, 1, 9, 9), recorder.press_key("home"),
                 recorder.start_app("a.b"), recorder.install_app("/tmp/x.yaml"), recorder.input_text("ok")):
        await call
    assert [line["action"] for line in lines(path)] == [
        "tap", "swipe", "long_press", "drag", "press_key", "start_app", "install_app", "input_text"]
    assert lines(path)[-1]["args"] == {"text": "ok", "clear": False} and lines(path)[-1]["text_len"] == 2
    with pytest.raises(FileExistsError):
        RecordingDriver(spy, path)  # never mixes two timelines in one file
    RecordingDriver(spy, path, overwrite=True)
    assert path.read_text() == ""


async def test_failed_action_is_recorded_and_reraised(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = RecordingDriver(SimDriver(), path)
    with pytest.raises(DeviceCommandError, match="no text field has focus"):
        await recorder.input_text("hello")
    (line,) = lines(path)
    assert line["ok"] is False and line["error_type"] == "DeviceCommandError"
    assert "no text field has focus" in line["error_message"]
    await recorder.press_key("home")
    assert [entry["ok"] for entry in lines(path)] == [False, True]


async def test_typed_text_is_redacted(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    spy = SpyDriver()
    recorder = RecordingDriver(spy, path, redact=Redactor(["hunter2"]).text)
    await recorder.input_text("pw hunter2 ok", clear=True)
    with recorder.secret_text():
        await recorder.input_text("s3cr3t-token")
        spy.fail = DeviceCommandError("could not type 's3cr3t-token'")
        with pytest.raises(DeviceCommandError):
            await recorder.input_text("s3cr3t-token")
    spy.fail = None
    await recorder.input_text("plain")
    raw = path.read_text(encoding="utf-8")
    assert "hunter2" not in raw and "s3cr3t" not in raw
    redacted, secret, failed, plain = lines(path)
    assert redacted["args"] == {"text": "pw [REDACTED] ok", "clear": True}
    assert redacted["redacted"] is True and redacted["text_len"] == 13
    assert secret["args"]["text"] is None and secret["redacted"] is True and secret["text_len"] == 12
    assert failed["ok"] is False and "[WITHHELD]" in failed["error_message"]
    assert plain["args"]["text"] == "plain" and plain["redacted"] is False
    assert [call[1] for call in spy.calls] == ["pw hunter2 ok", "s3cr3t-token", "s3cr3t-token", "plain"]


async def test_text_typed_into_a_focused_password_field_is_withheld(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    spy = SpyDriver(PASSWORD_XML)
    recorder = RecordingDriver(spy, path)
    await recorder.get_ui_tree()
    await recorder.input_text("letmein")
    spy.xml = "<hierarchy/>"
    await recorder.get_ui_tree()
    await recorder.input_text("visible")
    spy.xml = LOGIN_XML  # a login screen: the user name field has focus, the password field does not
    await recorder.get_ui_tree()
    await recorder.input_text("alice")
    first, second, third = lines(path)
    assert first["args"]["text"] is None and first["redacted"] and "letmein" not in path.read_text()
    assert second["args"]["text"] == "visible" and not second["redacted"]
    assert third["args"]["text"] == "alice" and not third["redacted"]  # visible: not a password field


async def test_observation_ids(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = RecordingDriver(SpyDriver(), path)
    await recorder.tap(1, 1)  # nothing observed yet
    await asyncio.gather(recorder.screenshot(), recorder.get_ui_tree())  # one round
    await recorder.get_ui_tree()  # still the same round: no action in between
    await recorder.tap(2, 2)
    await recorder.tap(3, 3)
    await recorder.screenshot()
    await recorder.tap(4, 4)
    recorder.observe("step-7")
    await recorder.get_ui_tree()
    await recorder.tap(5, 5)
    recorder.observe(None)
    await recorder.tap(6, 6)
    assert [line["observation"] for line in lines(path)] == [None, "auto-1", "auto-1", "auto-2", "step-7", "auto-3"]


async def test_for_run_uses_the_run_directory_and_redactor(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path / "run", Redactor(["p@ss"]))
    try:
        recorder = RecordingDriver.for_run(SpyDriver(), writer)
        await recorder.input_text("p@ss")
        assert recorder.path == writer.run_dir / "actions.jsonl"
        assert "p@ss" not in recorder.path.read_text() and lines(recorder.path)[0]["redacted"]
    finally:
        writer.close()


# -- load + replay ----------------------------------------------------------------------------


async def record_wifi_flow(path: Path, clock: Clock | None = None) -> SimDriver:
    phone = SimDriver()
    recorder = RecordingDriver(phone, path, clock=clock or Clock([]))
    await recorder.start_app(SETTINGS)
    await recorder.tap(*centre(node_bounds(await recorder.get_ui_tree(), text="Wi-Fi")))
    await recorder.tap(*centre(node_bounds(await recorder.get_ui_tree(), text="Use Wi-Fi")))
    assert phone.phone.state(SETTINGS)["wifi"] is True
    return phone


async def test_replay_reproduces_the_flow_on_a_fresh_phone(tmp_path: Path) -> None:
    path = tmp_path / "wifi.jsonl"
    await record_wifi_flow(path, Clock([0.0, 0.25, 0.01, 0.02, 0.01, 0.02, 0.01]))
    actions = load_recording(path)
    assert [a.action for a in actions] == ["start_app", "tap", "tap"]
    assert [a.observation for a in actions] == [None, "auto-1", "auto-2"]
    fresh = SimDriver()
    assert fresh.phone.state(SETTINGS)["wifi"] is False
    sleeps = Sleeps()
    result = await replay(path, fresh, speed=2.0, sleep=sleeps)
    assert fresh.phone.state(SETTINGS)["wifi"] is True
    assert fresh.phone.current_screen() == "wifi"
    assert result.replayed == [0, 1, 2]
    assert sleeps.waits == pytest.approx([0.01, 0.01])  # gaps of 0.02 s at double speed
    faster = SimDriver()
    await replay(str(path), faster, speed=20.0)  # the real asyncio.sleep, tiny gaps
    assert faster.phone.state(SETTINGS)["wifi"] is True


def action(seq: int, start: float, duration: float = 0.0, **extra: Any) -> RecordedAction:
    fields: dict[str, Any] = {"action": "press_key", "args": {"key": "home"}, "ok": True, **extra}
    return RecordedAction(seq=seq, start_s=start, duration_s=duration, **fields)


async def test_replay_timing_speed_cap_and_order() -> None:
    recording = [action(2, 10.0), action(0, 0.0, 1.0), action(1, 3.0, 0.5)]
    sleeps = Sleeps()
    result = await replay(recording, SpyDriver(), speed=0.5, max_gap_s=5.0, sleep=sleeps)
    assert result.replayed == [0, 1, 2]  # start order, not list order
    assert sleeps.waits == [4.0, 5.0]  # 2 s gap at half speed; 6.5 s gap capped
    assert result.waited_s == [0.0, 4.0, 5.0]
    untimed = Sleeps()
    await replay(recording, SpyDriver(), keep_timing=False, sleep=untimed)
    assert untimed.waits == []
    with pytest.raises(ValueError):
        await replay(recording, SpyDriver(), speed=0)


async def test_replay_refuses_or_skips_redacted_and_failed_actions(tmp_path: Path) -> None:
    typed = action(1, 1.0, action="input_text", args={"text": None, "clear": False}, redacted=True, text_len=4)
    failed = action(2, 2.0, action="tap", args={"x": 1, "y": 1}, ok=False, error_type="DeviceCommandError")
    recording = [action(0, 0.0), typed, failed, action(3, 3.0)]
    spy = SpyDriver()
    with pytest.raises(RecordingError, match=r"\[1\].*on_redacted='skip'"):
        await replay(recording, spy)
    assert spy.calls == []  # nothing was issued
    result = await replay(recording, spy, on_redacted="skip", keep_timing=False)
    assert result.replayed == [0, 3] and result.skipped_redacted == [1] and result.skipped_failed == [2]
    assert spy.calls == [("press_key", "home"), ("press_key", "home")]
    await replay(recording, spy, on_redacted="skip", skip_failed=False, keep_timing=False)
    assert spy.calls[-2] == ("tap", 1, 1)


def test_load_recording_reports_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = action(0, 0.0).model_dump_json()
    path.write_text(f"{good}\n\n{good}\n{{\"seq\": 1, \"action\": \"explode\"}}\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"bad\.jsonl:4"):
        load_recording(path)


async def test_replay_rejects_bad_arguments() -> None:
    with pytest.raises(RecordingError, match="bad arguments"):
        await replay([action(0, 0.0, args={"button": "home"})], SpyDriver())


# -- StealthDriver ----------------------------------------------------------------------------


async def stealth_session(seed: int | None) -> tuple[list[tuple[Any, ...]], list[float]]:
    spy, sleeps = SpyDriver(), Sleeps()
    stealth = StealthDriver(spy, seed=seed, sleep=sleeps)
    await stealth.tap(500, 500)
    await stealth.tap_in((100, 200, 300, 260))
    await stealth.long_press(50, 60)
    await stealth.swipe(540, 1800, 540, 600, 400)
    await stealth.drag(100, 100, 900, 900)
    await stealth.input_text("two words", clear=True)
    await stealth.press_key("back")
    await stealth.start_app("a.b")
    return spy.calls, sleeps.waits


async def test_same_seed_same_inner_calls() -> None:
    first, second, other = await stealth_session(42), await stealth_session(42), await stealth_session(43)
    assert first == second
    assert first != other
    assert [c[0] for c in first[0]].count("swipe") > 1  # the swipe was split into segments


async def test_global_random_state_is_untouched() -> None:
    random.seed(2024)
    before = random.getstate()
    await stealth_session(7)
    await stealth_session(None)
    assert random.getstate() == before


async def test_taps_land_within_the_radius() -> None:
    spy = SpyDriver()
    stealth = StealthDriver(spy, StealthSettings(tap_radius_px=5.0, action_delay_s=(0, 0)), seed=3)
    for _ in range(300):
        await stealth.tap(400, 700)
    points = {(x, y) for _, x, y in spy.calls}
    assert all(math.hypot(x - 400, y - 700) <= 5.0 for x, y in points)
    assert len(points) > 10  # scattered, not a fixed offset
    exact = SpyDriver()
    await StealthDriver(exact, StealthSettings(tap_radius_px=0), seed=3, sleep=Sleeps()).tap(3, 4)
    assert exact.calls == [("tap", 3, 4)]


async def test_tap_in_stays_inside_the_element() -> None:
    spy = SpyDriver()
    settings = StealthSettings(element_margin=0.1, action_delay_s=(0, 0))
    stealth = StealthDriver(spy, settings, seed=9)
    for _ in range(300):
        await stealth.tap_in((100, 2000, 301, 2041))
    xs, ys = [c[1] for c in spy.calls], [c[2] for c in spy.calls]
    assert 120 <= min(xs) and max(xs) <= 280 and 2004 <= min(ys) and max(ys) <= 2036
    assert len(set(xs)) > 20
    await stealth.tap_in((7, 8, 8, 9))  # a one-pixel element
    assert spy.calls[-1] == ("tap", 7, 8)
    with pytest.raises(ValueError, match="empty bounds"):
        await stealth.tap_in((10, 10, 10, 20))


def cross(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> int:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


async def test_swipe_is_a_curve_of_short_segments() -> None:
    spy = SpyDriver()
    stealth = StealthDriver(spy, StealthSettings(swipe_endpoint_px=8), seed=11, sleep=Sleeps())
    await stealth.swipe(540, 1900, 560, 500, 600)
    segments = [call[1:] for call in spy.calls]
    assert 3 <= len(segments) <= StealthSettings().swipe_max_segments
    assert math.hypot(segments[0][0] - 540, segments[0][1] - 1900) <= 8
    assert math.hypot(segments[-1][2] - 560, segments[-1][3] - 500) <= 8
    for before, after in zip(segments, segments[1:], strict=False):
        assert before[2:4] == after[0:2]  # contiguous
    assert all(math.hypot(s[2] - s[0], s[3] - s[1]) >= 30 for s in segments)  # above the touch slop
    assert sum(s[4] for s in segments) == 600
    points = [(s[0], s[1]) for s in segments] + [(segments[-1][2], segments[-1][3])]
    assert any(abs(cross(points[0], points[-1], p)) > 1000 for p in points[1:-1])  # bowed, not a line


async def test_short_swipe_stays_a_press() -> None:
    spy = SpyDriver()
    await StealthDriver(spy, seed=5, sleep=Sleeps()).swipe(800, 2200, 800, 2200, 700)
    ((_, x1, y1, x2, y2, ms),) = spy.calls
    assert (x1, y1) == (x2, y2) and math.hypot(x1 - 800, y1 - 2200) <= 8 and ms == 700


async def test_long_press_and_drag_durations_vary_within_bounds() -> None:
    spy = SpyDriver()
    stealth = StealthDriver(spy, StealthSettings(long_press_extra=0.2, drag_duration_jitter=0.1), seed=1,
                            sleep=Sleeps())
    for _ in range(50):
        await stealth.long_press(100, 100, 1000)
        await stealth.drag(100, 100, 500, 500, 1000)
    presses = [c[3] for c in spy.calls if c[0] == "long_press"]
    drags = [c[5] for c in spy.calls if c[0] == "drag"]
    assert all(1000 <= d <= 1200 for d in presses) and len(set(presses)) > 5
    assert all(900 <= d <= 1100 for d in drags) and len(set(drags)) > 5
    assert len([c for c in spy.calls if c[0] == "drag"]) == 50  # a drag is never split


async def test_pauses_are_seeded_and_bounded() -> None:
    sleeps = Sleeps()
    settings = StealthSettings(action_delay_s=(5.0, 10.0), typing_pause_s=(0.1, 0.2), max_pause_s=0.5)
    stealth = StealthDriver(SpyDriver(), settings, seed=2, sleep=sleeps)
    await stealth.press_key("home")
    await stealth.input_text("a b c")
    assert len(sleeps.waits) == 4 and sleeps.waits[:2] == [0.5, 0.5]
    assert all(0.1 <= wait <= 0.2 for wait in sleeps.waits[2:])


async def test_typing_word_by_word() -> None:
    spy = SpyDriver()
    stealth = StealthDriver(spy, seed=4, sleep=Sleeps())
    await stealth.input_text("  hello  big\tworld ", clear=True)
    await stealth.input_text("", clear=True)
    assert spy.calls == [("input_text", "  ", True), ("input_text", "hello  ", False),
                         ("input_text", "big\t", False), ("input_text", "world ", False),
                         ("input_text", "", True)]


async def test_typing_leaves_the_exact_text_in_the_notes_app() -> None:
    sim = SimDriver()
    stealth = StealthDriver(sim, seed=8, sleep=Sleeps())
    await stealth.start_app(NOTES)
    await stealth.tap_in(node_bounds(await stealth.get_ui_tree(), desc="New note"))
    await stealth.tap_in(node_bounds(await stealth.get_ui_tree(), text="Title"))
    await stealth.input_text("old title")
    text = "Buy  milk,\teggs and  bread "
    await stealth.input_text(text, clear=True)
    assert sim.phone.state(NOTES)["title"] == text


def test_settings_are_frozen_strict_and_checked() -> None:
    settings = StealthSettings()
    with pytest.raises(ValidationError):
        settings.tap_radius_px = 1.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        StealthSettings(tap_radious_px=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="typing_pause_s"):
        StealthSettings(typing_pause_s=(0.5, 0.1))
    with pytest.raises(ValidationError):
        StealthSettings(max_pause_s=-1)


async def test_tap_in_is_a_port_call_the_centre_by_default_and_recorded_with_its_bounds(tmp_path: Path) -> None:
    spy = SpyDriver()
    await spy.tap_in((100, 200, 301, 261))
    await spy.tap_in([0, 0, 2, 2])
    assert spy.calls[-2:] == [("tap", 200, 230), ("tap", 1, 1)]
    with pytest.raises(ValueError, match="empty bounds"):
        await spy.tap_in((5, 5, 5, 9))
    recorder = RecordingDriver(SpyDriver(), str(tmp_path / "r.jsonl"))
    await recorder.tap_in((100, 200, 301, 261))
    (line,) = load_recording(tmp_path / "r.jsonl")
    assert (line.action, line.args) == ("tap_in", {"bounds": [100, 200, 301, 261]})
    again = SpyDriver()
    await replay(tmp_path / "r.jsonl", again, keep_timing=False)
    assert again.calls == [("tap", 200, 230)]
