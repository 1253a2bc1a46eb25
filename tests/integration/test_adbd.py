"""The emulated adbd through the real adb server: adbutils, the adb CLI and uiautomator2, unchanged."""

from __future__ import annotations

import base64
import gc
import hashlib
import io
import re
import shlex
import time
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import adbutils
import pytest
import uiautomator2 as u2
from PIL import Image

from ufo_mobile.sim.servers.adb.daemon import EmulatedAdbd

pytestmark = pytest.mark.integration

# The emulated adbd's basic services as adbutils and uiautomator2 use them, on the kind phone (its
# focus lines for app_current, the ADB Keyboard, one window per u2 dump, a clipboard that works); the
# realistic profiles' answers are tested in test_adbd_profiles*.py.
KIND = pytest.mark.parametrize("sim_device", ["kind"], indirect=True)

NOTES = "com.example.notes"
SETTINGS = "com.android.settings"
LAUNCHER = "com.android.launcher3"
ADB_IME = "com.android.adbkeyboard/.AdbIME"
HOSTILE = [
    "it's \"quoted\" and 'single'",
    "a; echo pwned && rm -rf / || true",
    "$(id) `id` ${HOME} $? $$",
    "back\\slash \\n %s 100% sure",
    "emoji 🙂🚀 and 中文输入，标点。",
    "pipes | > /sdcard/x < y & bg",
]


def center(xml: str, **attrs: str) -> tuple[int, int]:
    """Center of the first node whose attributes match (``resource_id`` means ``resource-id``)."""
    wanted = {key.replace("_", "-"): value for key, value in attrs.items()}
    for node in ET.fromstring(xml.encode()).iter("node"):
        if all(node.get(key) == value for key, value in wanted.items()):
            left, top, right, bottom = map(int, re.findall(r"\d+", node.get("bounds", "")))
            return (left + right) // 2, (top + bottom) // 2
    raise AssertionError(f"no node with {attrs} on screen")


def open_note_editor(sim: Any) -> None:
    """Notes' editor open with the title field focused (through adb, like a client would)."""
    sim.device.shell(f"am start -n {NOTES}/.EditNoteActivity")
    sim.device.click(*center(sim.phone.dump_hierarchy(), resource_id=f"{NOTES}:id/title_field"))
    assert sim.phone.focused_field() == "title"


def title_of(sim: Any) -> str:
    return str(sim.phone.state(NOTES)["title"])


# -- adbutils ------------------------------------------------------------------------------------------


def test_shell_v1_and_v2_report_output_and_exit_codes(sim_device: Any) -> None:
    d = sim_device.device
    assert d.shell("echo hi") == "hi"
    v1 = d.shell2("echo out; echo err >&2; ls /nowhere")
    assert (v1.returncode, v1.output) == (1, "out\nerr\nls: /nowhere: No such file or directory\n")
    v2 = d.shell2("echo out; echo err >&2; false || exit 7", v2=True)
    assert (v2.returncode, v2.stdout, v2.stderr) == (7, "out\n", "err\n")
    missing = d.shell2("nosuchcmd arg", v2=True)
    assert missing.returncode == 127
    assert missing.stderr == "/system/bin/sh: nosuchcmd: inaccessible or not found\n"
    assert d.shell("X=1 true && echo $? ; false ; echo $?") == "0\n1"


def test_getprop_window_size_and_adb_devices(sim_device: Any, adb_server: Any) -> None:
    d = sim_device.device
    assert d.getprop("ro.product.model") == "UFO Sim Phone"
    assert (d.prop.name, d.prop.device, d.getprop("ro.build.version.sdk")) == ("ufo_sim", "ufo_sim", "34")
    assert tuple(d.window_size()) == sim_device.phone.screen_size()
    listing = adb_server.run("devices", "-l").stdout.decode()
    assert re.search(rf"^{re.escape(sim_device.serial)}\s+device .*model:UFO_Sim_Phone", listing, re.M)


def test_screenshot_is_the_sims_png(sim_device: Any) -> None:
    d = sim_device.device
    image = d.screenshot(error_ok=False)
    assert image.size == sim_device.phone.screen_size()
    assert d.shell("screencap -p", encoding=None) == sim_device.phone.screenshot_png()


def test_dump_hierarchy_matches_the_sim(sim_device: Any) -> None:
    d = sim_device.device
    assert d.dump_hierarchy() == sim_device.phone.dump_hierarchy()
    assert d.shell("uiautomator dump /sdcard/fresh.xml") == "UI hierchary dumped to: /sdcard/fresh.xml"
    assert d.sync.read_text("/sdcard/fresh.xml") == sim_device.phone.dump_hierarchy()
    assert d.shell("uiautomator dump /dev/tty").startswith("<?xml")


@KIND
def test_click_settings_icon_opens_settings_then_keys_go_back(sim_device: Any) -> None:
    d, phone = sim_device.device, sim_device.phone
    d.click(*center(phone.dump_hierarchy(), text="Settings"))
    assert phone.current_app().package == SETTINGS
    assert d.app_current().package == SETTINGS
    d.keyevent("KEYCODE_BACK")
    assert phone.current_app().package == LAUNCHER
    d.app_start(SETTINGS)
    d.keyevent(3)
    assert phone.current_app().package == LAUNCHER


def test_swipe_scrolls_the_settings_list(sim_device: Any) -> None:
    d, phone = sim_device.device, sim_device.phone
    d.app_start(SETTINGS)
    before = phone.dump_hierarchy()
    d.swipe(540, 1900, 540, 700, 0.2)
    assert phone.current_app().package == SETTINGS
    assert phone.dump_hierarchy() != before


@KIND
def test_app_start_current_stop_and_list_packages(sim_device: Any) -> None:
    d, phone = sim_device.device, sim_device.phone
    d.app_start(NOTES)
    current = d.app_current()
    assert (current.package, current.activity) == (NOTES, f"{NOTES}.NotesActivity")
    d.app_start(NOTES, ".EditNoteActivity")
    assert phone.current_screen() == "edit"
    d.app_stop(NOTES)
    assert phone.current_app().package == LAUNCHER
    assert d.list_packages() == sorted(app.package for app in phone.installed_apps())
    assert d.list_packages(["-3"]) == [NOTES]


def test_sync_push_read_stat_list(sim_device: Any) -> None:
    d = sim_device.device
    payload = bytes(range(256)) * 700  # several DATA chunks
    assert d.sync.push(payload, "/data/local/tmp/blob.bin") == len(payload)
    assert d.sync.read_bytes("/data/local/tmp/blob.bin") == payload
    assert d.sync.stat("/data/local/tmp/blob.bin").size == len(payload)
    assert "blob.bin" in [entry.path for entry in d.sync.list("/data/local/tmp")]
    assert not d.sync.exists("/data/local/tmp/missing")
    assert d.shell("md5sum /data/local/tmp/blob.bin").split()[0] == hashlib.md5(payload).hexdigest()
    with pytest.raises(adbutils.AdbError):
        d.sync.read_bytes("/data/local/tmp/missing")


def test_adb_cli_shell_exec_out_push_pull(sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    serial = sim_device.serial
    shell = adb_server.run("-s", serial, "shell", "echo", "hi")
    assert (shell.returncode, shell.stdout) == (0, b"hi\n")
    failing = adb_server.run("-s", serial, "shell", "exit 5")
    assert failing.returncode == 5
    png = adb_server.run("-s", serial, "exec-out", "screencap -p")
    assert png.stdout == sim_device.phone.screenshot_png()
    local = tmp_path / "up.txt"
    local.write_bytes(b"pushed through the adb CLI\n")
    pushed = adb_server.run("-s", serial, "push", str(local), "/sdcard/Download/up.txt")
    assert pushed.returncode == 0, pushed.stderr
    pulled = adb_server.run("-s", serial, "pull", "/sdcard/Download/up.txt", str(tmp_path / "down.txt"))
    assert pulled.returncode == 0, pulled.stderr
    assert (tmp_path / "down.txt").read_bytes() == local.read_bytes()


# -- text input ---------------------------------------------------------------------------------------


@KIND
def test_adb_keyboard_broadcasts_type_hostile_strings_exactly(sim_device: Any) -> None:
    d = sim_device.device
    open_note_editor(sim_device)
    out = d.shell(f"am broadcast -a ADB_INPUT_TEXT --es msg {shlex.quote('ignored')}")
    assert "Broadcast completed: result=0" in out and title_of(sim_device) == ""  # not the current IME yet
    assert ADB_IME in d.shell("ime list -s -a").split()
    d.shell(f"ime enable {ADB_IME}")
    d.shell(f"ime set {ADB_IME}")
    assert d.shell("settings get secure default_input_method") == ADB_IME
    for text in HOSTILE:
        d.shell("am broadcast -a ADB_CLEAR_TEXT")
        d.shell(f"am broadcast -a ADB_INPUT_TEXT --es msg {shlex.quote(text)}")
        assert title_of(sim_device) == text
    d.shell("am broadcast -a ADB_CLEAR_TEXT")
    multi = "line one\nline two 🙂"
    encoded = base64.b64encode(multi.encode()).decode()
    d.shell(f"am broadcast -a ADB_INPUT_B64 --es msg {encoded}")
    assert title_of(sim_device) == multi


def test_input_text_follows_androids_rules(sim_device: Any) -> None:
    d = sim_device.device
    open_note_editor(sim_device)
    d.shell(["input", "text", "hello%sworld's"])
    assert title_of(sim_device) == "hello world's"
    refused = d.shell2(["input", "text", "emoji🙂"])
    assert refused.returncode != 0 and title_of(sim_device) == "hello world's"


def test_shell_runs_nothing_beyond_its_parser(sim_device: Any, tmp_path: Path) -> None:
    d = sim_device.device
    assert d.shell("echo $(id) `whoami`") == "$(id) `whoami`"
    host_file = tmp_path / "keep.txt"
    host_file.write_text("host data")
    assert "No such file" in d.shell(f"cat {host_file}; rm {host_file}")
    assert host_file.read_text() == "host data"
    refused = d.shell2("python3 -c 'open(\"/tmp/x\",\"w\")'", v2=True)
    assert refused.returncode == 127
    assert d.shell2("echo (", v2=True).returncode != 0


# -- uiautomator2 -----------------------------------------------------------------------------------


@pytest.fixture
def u2_device(sim_device: Any) -> Iterator[Any]:
    with pytest.raises(adbutils.AdbError):  # no server before uiautomator2 starts one
        sim_device.device.create_connection(adbutils.Network.TCP, 9008)
    device = u2.connect(sim_device.device)
    try:
        yield device
    finally:
        device.stop_uiautomator()
    assert not sim_device.adbd.device.u2_running(9008)


@KIND
def test_uiautomator2_observes_the_sim(sim_device: Any, u2_device: Any) -> None:
    phone = sim_device.phone
    assert sim_device.device.sync.exists("/data/local/tmp/u2.jar")
    info = u2_device.info
    assert (info["currentPackageName"], info["displayWidth"], info["sdkInt"]) == (LAUNCHER, 1080, 34)
    assert u2_device.window_size() == phone.screen_size()
    assert u2_device.dump_hierarchy() == phone.dump_hierarchy()
    assert u2_device.screenshot().size == phone.screen_size()
    with pytest.raises(u2.exceptions.RPCUnknownError, match="-32601"):
        u2_device.jsonrpc.noSuchMethod()


@KIND
def test_uiautomator2_acts_on_the_sim(sim_device: Any, u2_device: Any) -> None:
    phone = sim_device.phone
    u2_device.click(*center(phone.dump_hierarchy(), text="Settings"))
    assert phone.current_app().package == SETTINGS
    before = phone.dump_hierarchy()
    u2_device.swipe(540, 1900, 540, 700, 0.1)
    assert phone.dump_hierarchy() != before
    u2_device.press("back")
    assert phone.current_app().package == LAUNCHER
    x, y = center(phone.dump_hierarchy(), text="Notes")
    u2_device.touch.down(x, y).move(x + 2, y).up(x + 2, y)  # injectInputEvent: a tap
    assert phone.current_app().package == NOTES
    open_note_editor(sim_device)
    u2_device.set_clipboard("pasted 🙂 $(id)")
    u2_device.jsonrpc.pasteClipboard()
    assert title_of(sim_device) == "pasted 🙂 $(id)"
    assert u2_device.clipboard == "pasted 🙂 $(id)"
    u2_device.jsonrpc.clearInputText()
    assert title_of(sim_device) == ""
    u2_device.send_keys("héllo 🙂 'x'", clear=True)  # uiautomator2's own clipboard path
    assert title_of(sim_device) == "héllo 🙂 'x'"


# -- faults ---------------------------------------------------------------------------------------------


def adb_failure(call: Callable[[], object]) -> str | None:
    """Run an adbutils call that may fail: the error text, or None when it worked.

    adbutils leaves its socket open when the adb server refuses a command (device offline), so
    the leaked socket is collected here, with its ResourceWarning ignored."""
    message = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            call()
        except adbutils.AdbError as exc:
            message = f"{type(exc).__name__}: {exc}"
        gc.collect()
    return message


def test_disconnect_fails_the_next_call_then_the_server_reconnects(sim_device: Any) -> None:
    adbd: EmulatedAdbd = sim_device.adbd
    assert adbd.connections == 1
    adbd.disconnect()
    error = adb_failure(lambda: sim_device.device.shell("echo hi", timeout=30))  # refused at once; 30 s: a guard
    assert error is not None, "the call right after disconnect() worked"  # why, in the adb server's words
    deadline = time.monotonic() + 60  # the adb server reconnects by itself; a hang guard, not a requirement
    while adb_failure(lambda: sim_device.device.shell("echo back", timeout=5)) is not None:
        assert time.monotonic() < deadline, "the device did not come back after disconnect()"
        time.sleep(0.1)
    assert sim_device.device.shell("echo back") == "back"


def test_hung_command_times_out_on_the_clients_timeout(sim_device: Any) -> None:
    d = sim_device.device
    # the device holds a hung command for ``hang_timeout`` (600 s): nothing on its side ends the call, so an
    # AdbTimeout here can only be adbutils' own socket timeout firing (raised however slow the machine is)
    assert sim_device.adbd.device.limits.hang_timeout >= 600
    sim_device.adbd.hang("uiautomator dump")
    with pytest.raises(adbutils.AdbTimeout):
        d.shell("rm -f /sdcard/a.xml; uiautomator dump /sdcard/a.xml", timeout=0.5)
    assert d.shell("echo other commands still run") == "other commands still run"
    assert not d.sync.exists("/sdcard/a.xml")  # the hung dump wrote nothing
    sim_device.adbd.unhang("uiautomator dump")
    assert d.shell("uiautomator dump /sdcard/a.xml") == "UI hierchary dumped to: /sdcard/a.xml"
    assert d.sync.read_text("/sdcard/a.xml") == sim_device.phone.dump_hierarchy()
    assert d.dump_hierarchy() == sim_device.phone.dump_hierarchy()


def test_empty_dumps_come_back_empty_once(sim_device: Any) -> None:
    d = sim_device.device
    sim_device.adbd.empty_dumps(1)
    assert '<hierarchy rotation="0" />' in d.dump_hierarchy()
    assert d.dump_hierarchy() == sim_device.phone.dump_hierarchy()


def test_tcp_ports_other_than_the_u2_server_are_refused(sim_device: Any) -> None:
    with pytest.raises(adbutils.AdbError):
        sim_device.device.create_connection(adbutils.Network.TCP, 8080)
    with pytest.raises(adbutils.AdbError):
        sim_device.device.create_connection(adbutils.Network.LOCAL_ABSTRACT, "scrcpy")


def test_many_streams_at_once(sim_device: Any) -> None:
    d = sim_device.device
    held = [d.open_shell("sleep 30") for _ in range(3)]
    try:
        results = [d.shell(f"echo {i}") for i in range(10)]
        assert results == [str(i) for i in range(10)]
        image = Image.open(io.BytesIO(d.shell("screencap -p", encoding=None)))
        assert image.size == sim_device.phone.screen_size()
    finally:
        for connection in held:
            connection.close()
