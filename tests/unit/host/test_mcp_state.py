"""``MobileServerState``: one observation shared by both tool groups, reused while fresh, dropped by
every action; control ids valid until the next observation; every device call bounded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client

from tests.mcp_calls import call
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.errors import DeviceTimeoutError, InvalidActionError
from ufo_mobile.host.mcp.device import parse_answers, shell_script
from ufo_mobile.host.mcp.server import build_server
from ufo_mobile.host.mcp.state import CONTROLS_TTL, MobileServerState
from ufo_mobile.host.mcp.tools import pressed_key
from ufo_mobile.sim.phone.simphone import SimPhone


class CountingDriver(SimDriver):
    """The simulated phone, counting its UI dumps; ``hang`` makes taps and screenshots never answer."""

    def __init__(self) -> None:
        super().__init__(SimPhone())
        self.dumps = 0
        self.hang = False

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        return await super().get_ui_tree()

    async def tap(self, x: int, y: int) -> None:
        if self.hang:
            await asyncio.Event().wait()
        await super().tap(x, y)

    async def screenshot(self) -> bytes:
        if self.hang:
            await asyncio.Event().wait()
        return await super().screenshot()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def connect(state: MobileServerState, groups: list[str]) -> AsyncIterator[Client]:
    async with Client(build_server(state, groups)) as client:
        yield client


def first_clickable(state: MobileServerState) -> str:
    assert state.observation is not None
    return str(next(c.index for c in state.observation.ui.elements if c.node.clickable))


async def test_both_groups_share_the_observation_and_its_ids() -> None:
    driver = CountingDriver()
    state = MobileServerState(driver, clock=Clock())
    async with connect(state, ["data"]) as data, connect(state, ["action"]) as action:
        controls = await call(data, "get_app_window_controls_target_info")
        settings = next(c for c in controls if c["name"] == "Settings")
        clicked = await call(action, "click_control", control_id=settings["id"], control_name="Settings")
        assert clicked["success"] is True
        assert driver.phone.current_app().package == "com.android.settings"


async def test_a_fresh_observation_is_reused_and_an_old_one_dumped_again() -> None:
    driver, clock = CountingDriver(), Clock()
    state = MobileServerState(driver, clock=clock)
    async with connect(state, ["data"]) as client:
        await call(client, "get_app_window_controls_target_info")
        tree = await call(client, "get_ui_tree")  # the same dump: its tree matches the ids
        assert tree["success"] is True and driver.dumps == 1
        await call(client, "get_app_window_controls_target_info", force_refresh=True)
        assert driver.dumps == 2
        clock.now += CONTROLS_TTL
        await call(client, "get_ui_tree")
        assert driver.dumps == 3


@pytest.mark.parametrize("tool, arguments", [
    ("tap", {"x": 5, "y": 5}),
    ("swipe", {"start_x": 500, "start_y": 1500, "end_x": 500, "end_y": 900}),
    ("press_key", {"key_code": "KEYCODE_HOME"}),
    ("launch_app", {"package_name": "com.android.settings"}),
    ("wait", {"seconds": 0}),
    ("invalidate_cache", {"cache_type": "controls"}),
    ("invalidate_cache", {"cache_type": "ui_tree"}),
    ("invalidate_cache", {}),
    ("click_control", {"control_id": "FIRST", "control_name": "x"}),
    ("type_text", {"text": "x", "control_id": "FIRST", "control_name": "x"}),  # fails: no field; still drops
    ("press_key", {"key_code": "KEYCODE_NOPE"}),  # fails before reaching the phone; still drops
])
async def test_every_action_drops_the_observation(tool: str, arguments: dict[str, Any]) -> None:
    driver = CountingDriver()
    state = MobileServerState(driver, clock=Clock())  # the clock stands still: only an action can expire it
    async with connect(state, ["data", "action"]) as client:
        await call(client, "get_app_window_controls_target_info")
        if arguments.get("control_id") == "FIRST":
            arguments = {**arguments, "control_id": first_clickable(state)}
        await call(client, tool, **arguments)
        await call(client, "get_app_window_controls_target_info")
        assert driver.dumps == 2


async def test_other_caches_leave_the_observation_alone() -> None:
    driver = CountingDriver()
    state = MobileServerState(driver, clock=Clock())
    async with connect(state, ["data", "action"]) as client:
        await call(client, "get_app_window_controls_target_info")
        for cache_type in ("apps", "device_info"):
            await call(client, "invalidate_cache", cache_type=cache_type)
        await call(client, "get_app_window_controls_target_info")
        assert driver.dumps == 1


async def test_ids_stay_valid_after_an_action_until_the_next_observation() -> None:
    driver = CountingDriver()
    state = MobileServerState(driver, clock=Clock())
    async with connect(state, ["data", "action"]) as client:
        controls = await call(client, "get_app_window_controls_target_info")
        first = next(c for c in controls if c["name"] == "Settings")
        assert (await call(client, "click_control", control_id=first["id"], control_name="Settings"))["success"]
        # a second click from the same reply still resolves (UFO's id map was empty by now)
        again = await call(client, "click_control", control_id=first["id"], control_name="Settings")
        assert again["success"] is True and again["control_info"]["rect"] == first["rect"]
        fresh = await call(client, "get_app_window_controls_target_info")
        assert fresh != controls  # the Settings screen: its ids now
        assert all(c["name"] != "Settings" or c["rect"] != first["rect"] for c in fresh)


async def test_apps_are_cached_per_kind_and_their_ids_launch() -> None:
    state = MobileServerState(CountingDriver(), clock=Clock())
    async with connect(state, ["data", "action"]) as client:
        launchable = await call(client, "get_mobile_app_target_info")
        everything = await call(client, "get_mobile_app_target_info", include_system_apps=True)
        assert {a["type"] for a in launchable} <= {a["type"] for a in everything}
        notes = next(a for a in launchable if a["name"] == "Notes")
        await call(client, "get_mobile_app_target_info", filter="Notes")  # numbered anew: Notes is now 1
        launched = await call(client, "launch_app", package_name="com.example.notes", id="1")
        assert launched["success"] is True and launched["app_info"]["id"] == "1" and "warning" not in launched
        assert notes["id"] != "1"


async def test_a_call_that_hangs_fails_within_the_timeout() -> None:
    driver = CountingDriver()
    state = MobileServerState(driver, timeout=60.0, clock=Clock())
    async with connect(state, ["data", "action"]) as client:
        await call(client, "get_app_window_controls_target_info")
        state.timeout = 0.05  # only the calls that hang are meant to reach it: a loaded machine may be slow
        driver.hang = True
        tapped = await call(client, "tap", x=10, y=10)
        assert tapped == {"success": False, "action": "tap(10, 10)", "output": "",
                          "error": "[sim] tap timed out after 0.05 s"}
        shot = await client.call_tool("capture_screenshot", {})
        assert shot.is_error and "screenshot timed out after 0.05 s" in shot.content[0].text  # type: ignore[union-attr]
        driver.hang = False
        state.timeout = 60.0
        assert (await call(client, "tap", x=10, y=10))["success"] is True  # the lock was let go


async def test_call_bounds_and_names_the_device_call() -> None:
    state = MobileServerState(CountingDriver(), timeout=0.01)
    with pytest.raises(DeviceTimeoutError, match=r"\[sim\] ui dump timed out after 0.01 s"):
        await state.call("ui dump", lambda: asyncio.Event().wait())


def test_device_info_answers_parse_as_ufo_reports_them() -> None:
    assert shell_script().count("@@ufo-mcp@@") == 6
    output = ("@@ufo-mcp@@model\nPixel 8\n@@ufo-mcp@@android_version\n14\n@@ufo-mcp@@sdk_version\n34\n"
              "@@ufo-mcp@@screen_size\nPhysical size: 1080x2400\n@@ufo-mcp@@screen_density\nPhysical density: 420\n"
              "@@ufo-mcp@@battery\nCurrent Battery Service state:\n  AC powered: false\n  status: 2\n  level: 87\n")
    assert parse_answers(output) == {"model": "Pixel 8", "android_version": "14", "sdk_version": "34",
                                     "screen_size": "Physical size: 1080x2400",
                                     "screen_density": "Physical density: 420", "battery_level": "87",
                                     "battery_status": "2"}


@pytest.mark.parametrize("given, name", [("KEYCODE_BACK", "back"), ("Back", "back"), ("4", "back"),
                                         ("KEYCODE_HOME", "home"), ("66", "enter"),
                                         ("keycode_app_switch", "app_switch")])
def test_key_names(given: str, name: str) -> None:
    assert pressed_key(given) == name


@pytest.mark.parametrize("given, code", [
    ("KEYCODE_DPAD_CENTER", 23), ("DPAD_CENTER", 23), ("dpad_center", 23), ("KEYCODE_A", 29), ("A", 29), ("a", 29),
    ("KEYCODE_NOTIFICATION", 83), ("PAGE_DOWN", 93), ("KEYCODE_ESCAPE", 111), ("WAKEUP", 224), ("23", 23),
    ("KEYCODE_F24", 337), ("KEYCODE_3D_MODE", 206), ("KEYCODE_11", 227), ("11", 11)])  # digits are a code
def test_every_android_key_is_pressed_by_its_code(given: str, code: int) -> None:
    assert pressed_key(given) == code


@pytest.mark.parametrize("given, nearest", [("KEYCODE_DPAD_CENTRE", "KEYCODE_DPAD_CENTER"),
                                            ("notifications", "KEYCODE_NOTIFICATION"),
                                            ("KEYCODE_VOLUME_UPP", "KEYCODE_VOLUME_UP")])
def test_an_unknown_key_is_refused_naming_the_nearest(given: str, nearest: str) -> None:
    with pytest.raises(InvalidActionError, match=f"unknown key '{given}'.*the nearest is {nearest} "):
        pressed_key(given)


@pytest.mark.parametrize("given", ["KEYCODE_UNKNOWN", "0", "338", "xyzzy", "KEYCODE_", ""])
def test_what_is_no_key_is_refused(given: str) -> None:
    with pytest.raises(InvalidActionError):
        pressed_key(given)
