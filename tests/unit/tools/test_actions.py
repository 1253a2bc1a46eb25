from __future__ import annotations

from typing import Any

import pytest

from tests.fakes import FakeDriver
from ufo_mobile.device.base import AppInfo
from ufo_mobile.llm.reply import ActionCall
from ufo_mobile.tools.actions import default_registry
from ufo_mobile.tools.registry import ActionContext, ActionResult
from ufo_mobile.ui.cache import ControlCache
from ufo_mobile.ui.state import build_ui_state


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_ctx(driver: FakeDriver, cache: ControlCache | None = None) -> ActionContext:
    ui = build_ui_state(driver.xml, observation_id="obs-1", screen_size=(1080, 2400))
    apps = [AppInfo("com.android.settings", "Settings"), AppInfo("com.google.android.apps.messaging", "Messages")]
    return ActionContext(device=driver, ui_state=ui, observation_id="obs-1", cache=cache, apps=apps,
                         max_wait_seconds=0.01)


def index_of(ctx: ActionContext, label_part: str) -> int:
    for c in ctx.ui_state.elements:
        if label_part in (c.label + c.node.resource_id):
            return c.index
    raise AssertionError(f"no control {label_part} in {ctx.ui_state.formatted_text}")


async def run(call: dict[str, Any], driver: FakeDriver | None = None) -> tuple[ActionResult, FakeDriver]:
    driver = driver or FakeDriver()
    result = await default_registry().execute(ActionCall(**call), make_ctx(driver))
    return result, driver


async def test_tap_by_id_hits_the_control() -> None:
    driver = FakeDriver()
    ctx = make_ctx(driver)
    wifi = index_of(ctx, "Wi-Fi")
    result = await default_registry().execute(ActionCall(name="tap", args={"id": wifi}), ctx)
    assert result.success, result.summary
    ((name, (x, y)),) = driver.calls
    assert name == "tap" and 0 <= x < 1080 and 200 <= y < 400


async def test_tap_by_text_and_mismatch_detection() -> None:
    result, driver = await run({"name": "tap", "args": {"text": "wi-fi"}})
    assert result.success and driver.calls[0][0] == "tap"
    driver = FakeDriver()
    ctx = make_ctx(driver)
    other = index_of(ctx, ":id/name")
    result = await default_registry().execute(ActionCall(name="tap", args={"id": other, "text": "Wi-Fi"}), ctx)
    assert not result.success and "not 'Wi-Fi'" in result.summary
    assert driver.calls == []


@pytest.mark.parametrize(("call", "fragment"), [
    ({"name": "tap", "args": {"id": 99}}, "no control 99"),
    ({"name": "tap", "args": {}}, "give 'id'"),
    ({"name": "tap", "args": {"text": "Bluetooth"}}, "no control labelled 'Bluetooth'"),
    ({"name": "fly", "args": {}}, "unknown action 'fly'"),
    ({"name": "tap", "args": {"id": 1, "force": True}}, "force: Extra inputs are not permitted"),
    ({"name": "press_key", "args": {"key": "warp"}}, "unknown key 'warp'"),
    ({"name": "launch_app", "args": {"app": "Calculator"}}, "no installed app 'Calculator'"),
    ({"name": "tap_point", "args": {"x": 5000, "y": 1}}, "outside the 1080x2400 screen"),
    ({"name": "scroll", "args": {"direction": "sideways"}}, "direction"),
])
async def test_expected_failures_are_results_not_exceptions(call: dict[str, Any], fragment: str) -> None:
    result, driver = await run(call)
    assert not result.success
    assert fragment in result.summary
    assert driver.calls == []


async def test_stale_observation_is_rejected() -> None:
    driver = FakeDriver()
    ctx = make_ctx(driver)
    ctx.observation_id = "obs-0"  # the model answered about an older screen
    result = await default_registry().execute(ActionCall(name="tap", args={"id": 1}), ctx)
    assert not result.success and "obs-0" in result.summary
    assert driver.calls == []


async def test_type_text_taps_the_field_then_types_verbatim() -> None:
    driver = FakeDriver()
    ctx = make_ctx(driver)
    field = index_of(ctx, ":id/name")
    text = "a'b\"c; rm -rf / $(x) `y` 你好 🙂\nz"
    result = await default_registry().execute(ActionCall(name="type_text", args={"id": field, "text": text}), ctx)
    assert result.success
    assert [c[0] for c in driver.calls] == ["tap", "input_text"]
    assert driver.calls[1][1] == (text, True)


async def test_scroll_moves_the_finger_against_the_direction() -> None:
    result, driver = await run({"name": "scroll", "args": {"direction": "down"}})
    assert result.success
    _, (x1, y1, x2, y2, _) = driver.calls[0]
    assert x1 == x2 and y1 > y2


async def test_launch_app_by_label_or_package() -> None:
    result, driver = await run({"name": "launch_app", "args": {"app": "messages"}})
    assert result.success and driver.calls == [("start_app", ("com.google.android.apps.messaging",))]
    result, driver = await run({"name": "launch_app", "args": {"app": "com.android.settings"}})
    assert result.success and driver.calls == [("start_app", ("com.android.settings",))]


async def test_press_key_normalises() -> None:
    result, driver = await run({"name": "press_key", "args": {"key": "KEYCODE_BACK"}})
    assert result.success and driver.calls == [("press_key", ("back",))]


def test_only_supported_actions_are_offered() -> None:
    class TapOnly(FakeDriver):
        supported = frozenset({"tap", "screenshot", "get_ui_tree"})

    names = [t.name for t in default_registry().available(TapOnly())]
    assert "tap" in names and "tap_point" in names and "wait" in names
    assert "type_text" not in names and "scroll" not in names and "launch_app" not in names
    described = default_registry().describe(FakeDriver())
    assert "type_text(text: str, id: int | null = null, clear: bool = true)" in described
    assert "scroll(direction: \"up\"|\"down\"|\"left\"|\"right\", id: int | null = null)" in described


@pytest.mark.parametrize("call", [
    {"name": "tap", "args": {"text": "Wi-Fi"}},
    {"name": "long_press", "args": {"text": "Wi-Fi"}},
    {"name": "tap_point", "args": {"x": 10, "y": 10}},
    {"name": "type_text", "args": {"text": "hi"}},
    {"name": "scroll", "args": {"direction": "up"}},
    {"name": "press_key", "args": {"key": "back"}},
    {"name": "launch_app", "args": {"app": "Settings"}},
    {"name": "wait", "args": {"seconds": 0.01}},
    {"name": "tap", "args": {"id": 999}},  # a failed action invalidates too
])
async def test_every_kind_of_action_invalidates_the_control_cache(call: dict[str, Any]) -> None:
    driver = FakeDriver()
    cache = ControlCache(ttl=5.0, clock=FakeClock())
    ctx = make_ctx(driver, cache)
    cache.put(driver.serial, ctx.ui_state)
    assert cache.get(driver.serial) is ctx.ui_state
    await default_registry().execute(ActionCall(**call), ctx)
    assert cache.get(driver.serial) is None
