"""The MCP device server's tools, called through the ``mcp`` SDK's client connected in-process (no
network, no device): UFO's names, arguments, defaults and result shapes, over the simulated phone."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client

from tests.mcp_calls import call
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.host.mcp.server import build_server
from ufo_mobile.host.mcp.state import MobileServerState
from ufo_mobile.sim.phone.simphone import SimPhone

# UFO's mobile_mcp_server.py: every tool's arguments, which are required, and the defaults
UFO_DATA = {
    "capture_screenshot": ({}, []),
    "get_ui_tree": ({}, []),
    "get_device_info": ({}, []),
    "get_mobile_app_target_info": ({"filter": "", "include_system_apps": False, "force_refresh": False}, []),
    "get_app_window_controls_target_info": ({"force_refresh": False}, []),
}
UFO_ACTION = {
    "tap": ({"x": None, "y": None}, ["x", "y"]),
    "swipe": ({"start_x": None, "start_y": None, "end_x": None, "end_y": None, "duration": 300},
              ["start_x", "start_y", "end_x", "end_y"]),
    "type_text": ({"text": None, "control_id": None, "control_name": None, "clear_current_text": False},
                  ["text", "control_id", "control_name"]),
    "launch_app": ({"package_name": None, "id": None}, ["package_name"]),
    "press_key": ({"key_code": None}, ["key_code"]),
    "click_control": ({"control_id": None, "control_name": None}, ["control_id", "control_name"]),
    "wait": ({"seconds": 1.0}, []),
    "invalidate_cache": ({"cache_type": "all"}, []),
}


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone()


@asynccontextmanager
async def connect(phone: SimPhone) -> AsyncIterator[Client]:
    """Both tool groups over ``phone``, through the SDK's client (in-process). Not a fixture: the SDK's
    task groups must be entered and left in the test's own task."""
    state = MobileServerState(SimDriver(phone), timeout=5.0, clock=lambda: 0.0)  # the cache never ages here
    async with Client(build_server(state, ["data", "action"])) as connected:
        yield connected


def id_of(controls: list[dict[str, Any]], name: str) -> str:
    found = [c["id"] for c in controls if c["name"] == name]
    assert found, (name, [c["name"] for c in controls])
    return str(found[0])


@pytest.mark.parametrize("group, expected", [("data", UFO_DATA), ("action", UFO_ACTION)])
async def test_tools_have_ufos_names_arguments_and_defaults(group: str, expected: dict[str, Any]) -> None:
    state = MobileServerState(SimDriver(SimPhone()))
    async with Client(build_server(state, [group])) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == list(expected)
    for name, (arguments, required) in expected.items():
        schema = tools[name].input_schema
        assert set(schema.get("properties", {})) == set(arguments), name
        assert sorted(schema.get("required", [])) == sorted(required), name
        for argument, default in arguments.items():
            if argument not in required:
                assert schema["properties"][argument].get("default") == default, (name, argument)
        assert tools[name].description, name


async def test_wrapped_results_are_marked_as_fastmcp_marks_them(phone: SimPhone) -> None:
    """UFO reads results through the FastMCP client, which unwraps ``result`` only when told to."""
    async with connect(phone) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        wrapped = {name for name, tool in tools.items() if (tool.output_schema or {}).get("x-fastmcp-wrap-result")}
        assert wrapped == {"capture_screenshot", "get_mobile_app_target_info", "get_app_window_controls_target_info"}
        for name in set(tools) - wrapped:
            assert tools[name].output_schema is not None and tools[name].output_schema["type"] == "object"


async def test_observation_results_have_ufos_shapes(phone: SimPhone) -> None:
    async with connect(phone) as client:
        shot = await call(client, "capture_screenshot")
        assert shot.startswith("data:image/png;base64,")
        assert base64.b64decode(shot.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
        tree = await call(client, "get_ui_tree")
        assert tree["success"] is True and tree["format"] == "xml" and tree["ui_tree"].startswith("<?xml")
        controls = await call(client, "get_app_window_controls_target_info")
        assert controls and all(set(c) == {"kind", "id", "name", "type", "rect"} for c in controls)
        assert all(c["kind"] == "control" and len(c["rect"]) == 4 for c in controls)
        assert [c["id"] for c in controls] == [str(n) for n in range(1, len(controls) + 1)]
        info = await call(client, "get_device_info")
        assert info["success"] is True and info["from_cache"] is False
        assert info["device_info"]["screen_size"] == "Physical size: 1080x2400"
        assert info["device_info"]["battery_level"] == str(phone.battery)
        assert (await call(client, "get_device_info"))["from_cache"] is True
        apps = await call(client, "get_mobile_app_target_info")
        settings = next(app for app in apps if app["type"] == "com.android.settings")
        assert settings == {"kind": "third_party_agent", "id": settings["id"], "name": "Settings",
                            "type": "com.android.settings", "rect": None}


async def test_a_flow_through_the_tools_changes_the_phone(phone: SimPhone) -> None:
    async with connect(phone) as client:
        apps = await call(client, "get_mobile_app_target_info", filter="settings")
        assert [app["type"] for app in apps] == ["com.android.settings"]
        launched = await call(client, "launch_app", package_name="ignored.package", id=apps[0]["id"])
        assert launched["success"] is True and launched["package_name"] == "com.android.settings"
        assert launched["app_info"]["package"] == "com.android.settings" and "warning" in launched
        controls = await call(client, "get_app_window_controls_target_info")
        clicked = await call(client, "click_control", control_id=id_of(controls, "Wi-Fi"), control_name="Wi-Fi")
        assert clicked["success"] is True and "warning" not in clicked
        assert set(clicked["control_info"]) == {"id", "name", "type", "rect"}
        controls = await call(client, "get_app_window_controls_target_info")
        switch = id_of(controls, "Use Wi-Fi")
        assert (await call(client, "click_control", control_id=switch, control_name="Use Wi-Fi"))["success"] is True
        assert phone.state("com.android.settings")["wifi"] is True

        assert (await call(client, "launch_app", package_name="notes"))["warning"] == \
            "Resolved 'notes' to package 'com.example.notes'"
        controls = await call(client, "get_app_window_controls_target_info")
        await call(client, "click_control", control_id=id_of(controls, "New note"), control_name="New note")
        controls = await call(client, "get_app_window_controls_target_info")
        field = next(c for c in controls if c["type"] == "EditText")
        text = "Milk & eggs; $(reboot) 'q' \"dq\" ünï"
        typed = await call(client, "type_text", text=text, control_id=field["id"], control_name=field["name"])
        assert typed["success"] is True, typed
        assert set(typed["control_info"]) == {"id", "name", "type"}
        assert phone.state("com.example.notes")["title"] == text
        replaced = await call(client, "type_text", text="Eggs", control_id=field["id"], control_name=field["name"],
                              clear_current_text=True)
        assert replaced["success"] is True and "Cleared existing text" in replaced["message"]
        assert phone.state("com.example.notes")["title"] == "Eggs"
        assert (await call(client, "press_key", key_code="KEYCODE_BACK"))["success"] is True


@pytest.mark.parametrize("tool, arguments, error", [
    ("click_control", {"control_id": "1", "control_name": "x"}, "no screen observed yet"),
    ("type_text", {"text": "a", "control_id": "7", "control_name": "x"}, "no screen observed yet"),
    ("press_key", {"key_code": "KEYCODE_NOPE"}, "unknown key"),
    ("launch_app", {"package_name": "Nonexistent"}, "No app found with name containing 'Nonexistent'"),
    ("launch_app", {"package_name": "com.x", "id": "3"}, "call get_mobile_app_target_info first"),
    ("launch_app", {"package_name": "com.not.installed"}, "com.not.installed"),
    ("wait", {"seconds": 61}, "between 0 and 60 seconds, not 61"),
    ("invalidate_cache", {"cache_type": "everything"}, "Invalid cache_type: everything"),
    ("swipe", {"start_x": 1, "start_y": 1, "end_x": 2, "end_y": 2, "duration": 0},
     "duration must be positive (milliseconds), not 0"),
])
async def test_expected_failures_are_failed_results(phone: SimPhone, tool: str, arguments: dict[str, Any],
                                                    error: str) -> None:
    async with connect(phone) as client:
        result = await call(client, tool, **arguments)
        assert result["success"] is False
        assert error in result["error"] and "\n" not in result["error"]


async def test_an_unknown_control_id_lists_the_valid_ones(phone: SimPhone) -> None:
    async with connect(phone) as client:
        controls = await call(client, "get_app_window_controls_target_info")
        result = await call(client, "click_control", control_id="999", control_name="x")
        assert result["success"] is False
        assert result["error"].startswith("Control with ID '999' not found")
        assert f"ids: 1-{len(controls)}" in result["error"]


async def test_a_name_that_does_not_match_the_id_warns_and_clicks_the_id(phone: SimPhone) -> None:
    async with connect(phone) as client:
        controls = await call(client, "get_app_window_controls_target_info")
        result = await call(client, "click_control", control_id=controls[0]["id"], control_name="Something else")
        assert result["success"] is True
        assert "has name" in result["warning"] and "Something else" in result["warning"]


async def test_bad_argument_types_are_tool_errors(phone: SimPhone) -> None:
    async with connect(phone) as client:
        result = await client.call_tool("tap", {"x": "left", "y": 3})
        assert result.is_error


async def test_press_key_takes_any_android_key_on_the_built_in_phone(phone: SimPhone) -> None:
    async with connect(phone) as client:
        await call(client, "launch_app", package_name="notes")
        controls = await call(client, "get_app_window_controls_target_info")
        await call(client, "click_control", control_id=id_of(controls, "New note"), control_name="New note")
        field = next(c for c in await call(client, "get_app_window_controls_target_info") if c["type"] == "EditText")
        await call(client, "click_control", control_id=field["id"], control_name=field["name"])
        for key in ("KEYCODE_A", "b", "KEYCODE_DPAD_CENTER", "KEYCODE_NOTIFICATION", "KEYCODE_WAKEUP", "31"):
            pressed = await call(client, "press_key", key_code=key)
            assert pressed == {"success": True, "action": f"press_key({key})", "output": "", "error": ""}
        assert phone.state("com.example.notes")["title"] == "abc"
        editing = phone.current_app()
        assert (await call(client, "press_key", key_code="KEYCODE_ESCAPE"))["success"] is True  # BACK
        assert phone.current_app() != editing and phone.current_app().package == "com.example.notes"
