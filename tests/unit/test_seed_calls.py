"""The seeds' own calls, written as the seeds write them: seed 002's driver and tools API
(``press_key(keycode: int)``, ``get_element(index) -> dict | None``, ``AndroidStateProvider(driver,
tree_filter, tree_formatter, stealth=...)``, ``RecordingDriver(driver, "x.jsonl")``) and seed 000's
shared-state fields (``device_date`` from the phone, ``fast_memory`` as the facts the model keeps)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.unit.agents.test_reasoning import WIFI_FLOW, run
from tests.unit.device.test_adb_driver import ScriptedAdb
from tests.unit.tools.conftest import Harness
from ufo_mobile.core.device.recording import RecordingDriver, load_recording, replay
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.device.stealth import StealthDriver
from ufo_mobile.core.memory.reducers import apply_update
from ufo_mobile.core.memory.state import SharedState
from ufo_mobile.core.ui.controls import Control
from ufo_mobile.core.ui.provider import AndroidStateProvider
from ufo_mobile.errors import DeviceCommandError

SETTINGS, LAUNCHER = "com.android.settings", "com.android.launcher3"
SIM_DATE = "Wed Jan 15 09:41:00 UTC 2025"


def front(sim: SimDriver) -> tuple[str, str]:
    return sim.phone.current_app().package, sim.phone.current_screen()


async def open_wifi(sim: SimDriver) -> None:
    """Settings, then its Wi-Fi page by a tap (so that back returns to Settings)."""
    sim.phone.start_app(SETTINGS)
    ui = await AndroidStateProvider(sim).get_state()
    await sim.tap(*next(c for c in ui.elements if c.label == "Wi-Fi").bounds.center)
    assert front(sim) == (SETTINGS, "wifi")


# --- press_key(keycode: int) -------------------------------------------------------------------


async def test_press_key_4_presses_back_and_3_home_on_the_simulated_phone() -> None:
    sim = SimDriver()
    await open_wifi(sim)
    await sim.press_key(4)
    assert front(sim) == (SETTINGS, "main")
    await sim.press_key(3)
    assert front(sim)[0] == LAUNCHER
    await sim.press_key("KEYCODE_BACK")  # our names still work
    with pytest.raises(DeviceCommandError, match="unknown key code 0"):
        await sim.press_key(0)
    await sim.press_key(285)  # a real key (KEYCODE_REFRESH) the simulated phone has nothing for: no effect
    assert front(sim)[0] == LAUNCHER


async def test_press_key_sends_the_android_key_code_to_a_real_phone() -> None:
    adb = ScriptedAdb({})
    for code in (4, 3, 66, 67, 187, 24, 25, 285):
        await adb.press_key(code)
    await adb.press_key("back")
    assert adb.commands == [f"input keyevent {c}" for c in (4, 3, 66, 67, 187, 24, 25, 285, 4)]
    for bad in (0, -4, 100000, True):
        with pytest.raises(ValueError, match="unknown key code|not True"):
            await adb.press_key(bad)
    assert len(adb.commands) == 9  # nothing was sent for them


async def test_press_key_with_a_code_goes_through_the_wrappers_and_replays(tmp_path: Path) -> None:
    sim = SimDriver()
    await open_wifi(sim)
    recorder = RecordingDriver(StealthDriver(sim, seed=3, sleep=_no_sleep), tmp_path / "r.jsonl")
    await recorder.press_key(4)
    assert front(sim) == (SETTINGS, "main")
    assert [(a.action, a.args) for a in load_recording(tmp_path / "r.jsonl")] == [("press_key", {"key": 4})]
    await open_wifi(sim)
    await replay(tmp_path / "r.jsonl", sim, keep_timing=False)
    assert front(sim) == (SETTINGS, "main")


async def _no_sleep(seconds: float) -> None:
    return None


# --- get_element(index) -> dict | None ---------------------------------------------------------


async def test_get_element_returns_a_dict_or_none() -> None:
    sim = SimDriver()
    sim.phone.start_app(SETTINGS, "wifi")
    ui = await AndroidStateProvider(sim).get_state()
    switch = next(c for c in ui.elements if c.label == "Use Wi-Fi")
    element = ui.get_element(switch.index)
    assert isinstance(element, dict)
    assert {"index", "class", "text", "resource_id", "bounds"} <= set(element)
    assert (element["index"], element["text"], element["bounds"]) == (switch.index, "Use Wi-Fi",
                                                                      switch.bounds.as_list())
    assert ui.get_element(10_000) is None and ui.get_element(0) is None


# --- AndroidStateProvider(driver, tree_filter, tree_formatter, stealth) --------------------------


class OnlyClickable:
    def filter(self, controls: list[Control], phone_state: Mapping[str, Any]) -> list[Control]:
        assert phone_state["screen_size"] == [1080, 2400]
        return [c for c in controls if c.node.clickable]


class Lines:
    def format(self, controls: list[Control], phone_state: Mapping[str, Any]) -> str:
        return "\n".join(f"{c.index}. {c.label}" for c in controls if c.label)


async def test_the_provider_takes_a_tree_filter_and_a_tree_formatter() -> None:
    sim = SimDriver()
    sim.phone.start_app(SETTINGS, "wifi")
    plain = await AndroidStateProvider(sim).get_state()
    ui = await AndroidStateProvider(sim, OnlyClickable(), Lines()).get_state()
    assert ui.elements and all(c.node.clickable for c in ui.elements)
    assert len(ui.elements) < len(plain.elements)
    assert {c.index for c in ui.elements} <= {c.index for c in plain.elements}  # the dump's ids stay
    assert ui.formatted_text == "\n".join(f"{c.index}. {c.label}" for c in ui.elements if c.label)
    kept = ui.elements[0].index
    assert ui.get_element(kept) is not None
    dropped = next(c.index for c in plain.elements if not c.node.clickable)
    assert ui.get_element(dropped) is None


async def stealth_click(seed: int, tmp_path: Path) -> tuple[list[Any], list[int], bool]:
    sim = SimDriver()
    sim.phone.start_app(SETTINGS, "wifi")
    taps: list[tuple[int, int]] = []
    phone_tap = sim.phone.tap

    def tap(x: int, y: int) -> None:
        taps.append((x, y))
        phone_tap(x, y)

    sim.phone.tap = tap  # type: ignore[method-assign]
    stack = RecordingDriver(StealthDriver(sim, seed=seed, sleep=_no_sleep), tmp_path / f"{seed}-{len(taps)}.jsonl",
                            overwrite=True)
    harness = Harness(stack)
    harness.provider = AndroidStateProvider(stack, stealth=True)
    await harness.observe()
    switch = harness.index("Use Wi-Fi")
    result = await harness.act("click", index=switch, text="Use Wi-Fi")
    assert result.success, result.summary
    box = harness.ui.get_element(switch)["bounds"] if harness.ui else []
    assert result.summary.endswith(f"inside {box}")
    recorded = [(a.action, a.args) for a in load_recording(stack.path)]
    assert recorded == [("tap_in", {"bounds": box})]
    return taps, box, sim.phone.state(SETTINGS)["wifi"]


async def test_stealth_taps_land_inside_the_element_through_tap_in(tmp_path: Path) -> None:
    taps, box, wifi = await stealth_click(7, tmp_path)
    assert wifi is True and len(taps) == 1
    (x, y), (left, top, right, bottom) = taps[0], box
    assert left <= x < right and top <= y < bottom
    again, _, _ = await stealth_click(7, tmp_path)
    assert again == taps  # the same seed, the same point


# --- RecordingDriver(driver, "x.jsonl") --------------------------------------------------------


async def test_recording_driver_takes_a_string_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    sim = SimDriver()
    recorder = RecordingDriver(sim, "x.jsonl")
    assert recorder.path == Path("x.jsonl")
    await recorder.tap(10, 20)
    assert [(a.action, a.args) for a in load_recording(tmp_path / "x.jsonl")] == [("tap", {"x": 10, "y": 20})]


# --- device_date ---------------------------------------------------------------------------------


async def test_the_phone_date_reaches_the_state_and_the_managers_prompt(tmp_path: Path) -> None:
    ui = await AndroidStateProvider(SimDriver()).get_state()
    assert ui.device_date == SIM_DATE
    result, _ = await run(tmp_path, WIFI_FLOW)
    assert result.status == "FINISH"
    states = sorted(result.run_dir.glob("steps/*/state.json"))
    assert states and all(json.loads(p.read_text())["device_date"] == SIM_DATE for p in states)
    prompts = [p.read_text() for p in result.run_dir.glob("steps/*/*") if p.is_file() and "prompt" in p.name]
    assert any(f"The phone's date and time: {SIM_DATE}" in text for text in prompts)


# --- fast_memory ----------------------------------------------------------------------------------


async def test_remembered_facts_are_the_fast_memory() -> None:
    sim = SimDriver()
    harness = Harness(sim)
    result = await harness.act("remember", information="the code is 4411")
    shared = apply_update(SharedState(), result.state_update)
    assert shared.fast_memory == ["the code is 4411"]  # the tool says "memory", its older name
    shared = apply_update(shared, {"fast_memory": "a second fact"})
    assert shared.fast_memory == ["the code is 4411", "a second fact"]
    saved = shared.model_dump(mode="json")
    assert "memory" not in saved and SharedState.model_validate(saved) == shared
    older = SharedState.model_validate({"memory": ["kept before"], "fast_memory": []})  # an older state.json
    assert older.fast_memory == ["kept before"]
