"""Realism profiles through the real adb server, adbutils and uiautomator2 (continued): windows and
the soft keyboard, one UiAutomation at a time, hundreds of packages with real APKs, and input."""

from __future__ import annotations

import re
from typing import Any

import adbutils
import pytest
import uiautomator2 as u2

from tests.integration.test_adbd_profiles import NOTES, PIXEL, QUIET_PIXEL, SETTINGS
from ufo_mobile.apk import app_label, dd_reader
from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.android.packages import build_apk_bytes
from ufo_mobile.sim.android.profile import MIUI_INPUT_SWITCH
from ufo_mobile.sim.phone import keyboard
from ufo_mobile.sim.servers.adb.daemon import EmulatedAdbd

pytestmark = pytest.mark.integration

ALREADY = ("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
           "IAccessibilityServiceClient$Stub$Proxy@")
U2_COMMAND = "app_process / com.wetest.uia2.Main -p 9008"


def roots(xml: str) -> list[tuple[str, str]]:
    """The window roots of a uiautomator2 dump: (package, bounds), in the order dumped."""
    return re.findall(r'^  <node (?:NAF="true" )?index="0" .*?package="([^"]+)".*?bounds="([^"]+)"', xml, re.M)


# -- 8. windows and the keyboard ---------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
def test_the_keyboard_is_up_in_dumpsys_screenshots_and_taps(sim_device: Any) -> None:
    d, phone = sim_device.device, sim_device.phone
    d.shell(f"am start -n {NOTES}/.EditNoteActivity")
    assert re.search(r"^  mInputShown=false$", d.shell("dumpsys input_method"), re.M)
    before = d.screenshot(error_ok=False)
    d.click(540, 327)  # the title field
    assert re.search(r"^  mInputShown=true$", d.shell("dumpsys input_method"), re.M)
    window = d.shell("dumpsys window windows")
    assert re.search(r"^  Window #2 Window\{\w+ u0 InputMethod\}:$", window, re.M)
    assert "    mFrame=[0,1554][1080,2400] last=[0,1554][1080,2400]\n    mHasSurface=true" in window
    after = d.screenshot(error_ok=False)
    assert before.getpixel((540, 1600)) != after.getpixel((540, 1600)) == (0xE8, 0xEA, 0xED)
    for letter in "hi":  # on the keyboard's keys
        d.click(*next(key.rect.center for key in keyboard.keys(1080, 2400) if key.desc == letter))
    d.click(540, 1600)  # the suggestion strip, over the body field: the app never sees it
    assert (phone.state(NOTES)["title"], phone.focused_field()) == ("hi", "title")
    dump = d.dump_hierarchy()  # ``uiautomator dump``: the active window only
    assert dump == phone.dump_hierarchy() and "inputmethod" not in dump and "systemui" not in dump


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
def test_u2_dumps_every_window_with_the_keyboard(sim_device: Any, u2_device: Any) -> None:
    sim_device.device.shell(f"am start -n {NOTES}/.EditNoteActivity && input tap 540 327")
    xml = u2_device.dump_hierarchy()
    assert sorted(roots(xml)) == [("com.android.systemui", "[0,0][1080,84]"),
                                  ("com.android.systemui", "[0,2334][1080,2400]"),
                                  ("com.example.notes", "[0,0][1080,2400]"),
                                  ("com.google.android.inputmethod.latin", "[0,1554][1080,2400]")]
    assert xml.startswith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\r\n<hierarchy rotation=\"0\">")
    key = u2_device.xpath('//*[@content-desc="h"]')  # the keys are in the dump, by content-desc
    assert key.exists and not u2_device.xpath('//*[@text="h"]').exists
    key.click()
    assert sim_device.phone.state(NOTES)["title"] == "h"


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
def test_window_roots_come_in_a_seeded_hashset_order(sim_device: Any, u2_device: Any, adb_server: Any) -> None:
    orders = [roots(u2_device.dump_hierarchy()) for _ in range(6)]
    assert len({tuple(order) for order in orders}) > 1 and all(sorted(o) == sorted(orders[0]) for o in orders)
    other = EmulatedAdbd(SimPhone(), profile=QUIET_PIXEL)  # the same profile on another phone
    with other.run_in_thread() as runner:
        client = adb_server.client()
        try:
            client.connect(runner.address, timeout=60)
            client.wait_for(runner.address, state="device", timeout=60)
            twin = u2.connect(client.device(runner.address))
            try:
                assert [roots(twin.dump_hierarchy()) for _ in range(6)] == orders
            finally:
                twin.stop_uiautomator()
        finally:
            client.disconnect(runner.address)


# -- 9. one UiAutomation at a time ---------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", [QUIET_PIXEL], indirect=True)
def test_a_running_u2_server_breaks_uiautomator_dump_until_pkill(sim_device: Any, u2_device: Any) -> None:
    d = sim_device.device
    assert u2_device.info["sdkInt"] == 34  # the server runs
    result = d.shell2("uiautomator dump /sdcard/x.xml", v2=True)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith(ALREADY) and result.stderr.splitlines()[0].endswith("already registered!")
    assert not d.sync.exists("/sdcard/x.xml")
    assert any(line.split()[-1] == "app_process" for line in d.shell("ps -A").splitlines())
    server = [line for line in d.shell("ps -ef").splitlines() if line.endswith(U2_COMMAND)]
    assert len(server) == 1 and server[0].split()[0] == "shell"
    assert d.shell2("pkill -f com.wetest.uia2.Main", v2=True).returncode == 0
    assert not sim_device.adbd.device.u2_running(9008)
    assert [line for line in d.shell("ps -ef").splitlines() if line.endswith(U2_COMMAND)] == []
    assert d.shell("uiautomator dump /sdcard/x.xml") == "UI hierchary dumped to: /sdcard/x.xml"


@pytest.mark.parametrize("sim_device", ["kind"], indirect=True)
def test_the_kind_phone_dumps_beside_the_u2_server(sim_device: Any, u2_device: Any) -> None:
    assert u2_device.info["sdkInt"] == 34
    assert sim_device.device.shell("uiautomator dump /sdcard/x.xml") == "UI hierchary dumped to: /sdcard/x.xml"


# -- 10. hundreds of packages ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
def test_hundreds_of_packages_with_labels_only_in_their_apks(sim_device: Any, adb_server: Any) -> None:
    d = sim_device.device
    packages = d.list_packages()
    assert 280 <= len(packages) <= 320 and {"com.facebook.katana", "com.ss.android.ugc.trill"} <= set(packages)
    assert 40 <= len(d.list_packages(["-3"])) <= 80
    launcher = d.shell("cmd package query-activities --components -a android.intent.action.MAIN "
                       "-c android.intent.category.LAUNCHER").splitlines()
    assert 30 <= len(launcher) <= 60 and "com.facebook.katana/.LoginActivity" in launcher
    path = d.shell("pm path com.facebook.katana").removeprefix("package:")
    assert re.fullmatch(r"/data/app/~~[\w-]{22}==/com\.facebook\.katana-[\w-]{22}==/base\.apk", path)
    info = d.app_info("com.facebook.katana")
    assert info is not None and info.path == path
    package = sim_device.adbd.device.packages.get("com.facebook.katana")
    assert (info.version_code, info.version_name) == (package.version_code, package.version_name)
    data = build_apk_bytes(package)
    assert d.sync.read_bytes(path) == data
    assert int(d.shell(f"stat -c %s {path}")) == len(data)
    exec_out = adb_server.run("-s", sim_device.serial, "exec-out", f"dd if={path} bs=512 skip=1 count=3 2>/dev/null")
    assert exec_out.stdout == data[512:2048]
    v2 = d.shell2(f"dd if={path} bs=512 skip=1 count=3", v2=True, encoding=None)
    assert (v2.stdout, v2.stderr) == (data[512:2048], b"3+0 records in\n3+0 records out\n"
                                                      b"1536 bytes (1.5 K) copied, 0.001 s, 1.4 M/s\n")

    def exec_dd(command: str) -> bytes:
        return bytes(adb_server.run("-s", sim_device.serial, "exec-out", command).stdout)

    assert app_label(dd_reader(exec_dd, path), len(data)).label == "Facebook"


@pytest.mark.parametrize("sim_device", ["pixel-14"], indirect=True)
def test_launching_a_catalog_app_shows_its_placeholder(sim_device: Any) -> None:
    d, phone = sim_device.device, sim_device.phone
    d.app_start("com.ss.android.ugc.trill")
    assert phone.current_app() == ("com.ss.android.ugc.trill", "com.ss.android.ugc.aweme.splash.SplashActivity")
    assert 'text="TikTok" resource-id="com.ss.android.ugc.trill:id/toolbar_title"' in phone.dump_hierarchy()
    assert "monkey aborted" in d.shell("monkey -p com.google.android.gsf -c android.intent.category.LAUNCHER 1")


# -- 11. keycombination ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["android-10", "pixel-14"], indirect=True)
def test_keycombination_exists_from_android_11(sim_device: Any) -> None:
    result = sim_device.device.shell2("input keycombination 113 29", v2=True)
    if sim_device.adbd.profile.sdk < 30:
        assert (result.returncode, result.stdout, result.stderr) == (1, "", "Error: Unknown command: keycombination\n")
    else:
        assert (result.returncode, result.stderr) == (0, "")


# -- 12. MIUI ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sim_device", ["xiaomi-13"], indirect=True)
def test_miui_needs_usb_debugging_security_settings(sim_device: Any, u2_device: Any) -> None:
    d, phone = sim_device.device, sim_device.phone
    x, y = _center_of(phone, "Settings")
    for command, name in ((f"input tap {x} {y}", "tap"), ("input swipe 540 1800 540 600", "swipe"),
                          ("input text hello", "text"), ("input keyevent 3", "keyevent")):
        result = d.shell2(command, v2=True)
        assert (result.returncode, result.stdout) == (255, "")
        assert result.stderr.startswith(f"\nException occurred while executing '{name}':\n"
                                        "java.lang.SecurityException: Injecting to another application requires "
                                        "INJECT_EVENTS permission\n\tat ")
    assert phone.current_app().package == "com.android.launcher3"
    with pytest.raises(u2.exceptions.RPCUnknownError, match="INJECT_EVENTS"):
        u2_device.click(x, y)
    assert d.getprop(MIUI_INPUT_SWITCH) == "0"
    d.shell(f"settings put global {MIUI_INPUT_SWITCH} 1")  # the stand-in for the developer-options switch
    assert d.getprop(MIUI_INPUT_SWITCH) == "1"
    d.click(x, y)
    assert phone.current_app().package == SETTINGS


def _center_of(phone: SimPhone, text: str) -> tuple[int, int]:
    match = re.search(rf'text="{text}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', phone.dump_hierarchy())
    assert match is not None
    left, top, right, bottom = map(int, match.groups())
    return (left + right) // 2, (top + bottom) // 2


@pytest.mark.parametrize("sim_device", ["kind"], indirect=True)
def test_pixel_defaults_stay_off_for_the_kind_phone(sim_device: Any) -> None:
    assert sim_device.adbd.profile.name == "kind" and PIXEL.name == "pixel-14"
    with pytest.raises(adbutils.AdbError):
        sim_device.device.create_connection(adbutils.Network.TCP, 9008)
