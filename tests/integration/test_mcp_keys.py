"""``press_key`` over MCP, with the ``mcp`` SDK's own client, on the emulated phone behind the real
adb server: any key of Android's ``KeyEvent`` reaches the phone as ``input keyevent`` and does there
what it does on a phone (``KEYCODE_A`` types "a", ``KEYCODE_DPAD_CENTER`` clicks the focused field);
an unknown name is refused before the phone sees it, naming the nearest key."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from tests.adb_server import PrivateAdbServer
from tests.faults.conftest import Cli
from tests.integration.test_mcp_server import click, stdio_session
from tests.mcp_calls import call
from ufo_mobile.core.device.adb_text import bundled_u2_apk
from ufo_mobile.sim.android.profile import U2_IME

pytestmark = pytest.mark.integration


@pytest.fixture
def adb_phone(adb_server: PrivateAdbServer, tmp_path: Path) -> Iterator[str]:
    """The serial of a ``sim --port 0`` phone (the pixel-14 profile: a soft keyboard) behind the adb server."""
    sim = Cli("sim", "--port", "0", cwd=tmp_path)
    try:
        line = sim.wait_line("simulated phone listening on 127.0.0.1:")
        serial = f"127.0.0.1:{int(line.split('127.0.0.1:')[1].split(';')[0])}"
        assert b"connected" in adb_server.run("connect", serial).stdout
        yield serial
    finally:
        sim.signal(signal.SIGKILL)
        sim.finish()
        adb_server.run("disconnect")


def shell(adb_server: PrivateAdbServer, serial: str, command: str) -> str:
    done = adb_server.run("-s", serial, "shell", command)
    assert done.returncode == 0, done
    return done.stdout.decode()


def keyboard_shown(adb_server: PrivateAdbServer, serial: str) -> bool:
    return "mInputShown=true" in shell(adb_server, serial, "dumpsys input_method")


async def focus_a_new_note(client: Client) -> dict[str, str]:
    assert (await call(client, "launch_app", package_name="com.example.notes"))["success"] is True
    await click(client, "New note")
    controls = await call(client, "get_app_window_controls_target_info")
    field = next(c for c in controls if c["type"] == "EditText")
    await click(client, field["name"])
    return field


async def test_press_key_types_a_letter_and_clicks_the_focused_field(
        tmp_path: Path, adb_server: PrivateAdbServer, adb_phone: str) -> None:
    serial = adb_phone
    u2 = adb_server.run("-s", serial, "install", "-r", "-t", str(bundled_u2_apk()))
    assert u2.returncode == 0, u2  # its input method can hide the keyboard, which DPAD_CENTER shows again
    shell(adb_server, serial, f"ime enable {U2_IME} && ime set {U2_IME}")
    async with stdio_session(tmp_path, "--device", serial, "--adb-port", str(adb_server.port),
                             env={"ANDROID_ADB_SERVER_PORT": str(adb_server.port)}) as client:
        field = await focus_a_new_note(client)
        for key in ("KEYCODE_A", "b", "KEYCODE_SPACE", "31"):
            pressed = await call(client, "press_key", key_code=key)
            assert pressed == {"success": True, "action": f"press_key({key})", "output": "", "error": ""}
        controls = await call(client, "get_app_window_controls_target_info")
        assert next(c for c in controls if c["id"] == field["id"])["name"] == "ab c"

        shell(adb_server, serial, "am broadcast -a ADB_KEYBOARD_HIDE")
        assert not keyboard_shown(adb_server, serial)
        assert (await call(client, "press_key", key_code="KEYCODE_DPAD_CENTER"))["success"] is True
        assert keyboard_shown(adb_server, serial)

        for key in ("KEYCODE_NOTIFICATION", "PAGE_DOWN", "KEYCODE_WAKEUP", "KEYCODE_F24"):
            assert (await call(client, "press_key", key_code=key))["success"] is True, key
        refused = await call(client, "press_key", key_code="KEYCODE_DPAD_CENTRE")
        assert refused["success"] is False and "the nearest is KEYCODE_DPAD_CENTER" in refused["error"]
