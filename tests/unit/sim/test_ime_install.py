"""The emulated device's ``pm install``/``uninstall`` and its input methods' broadcast receivers:
uiautomator2's AdbKeyboard once its APK is installed (the result codes its InputMessageReceiver
leaves), the ADB Keyboard's meta keys, CTRL+A from ``input keycombination`` and ``pressKeyCode``."""

from __future__ import annotations

import base64

from tests.unit.sim.test_profile import NOTES, device_with, run
from ufo_mobile.core.device.adb_text import bundled_u2_apk
from ufo_mobile.sim.android.apkgen import build_apk
from ufo_mobile.sim.android.commands.input import META_CTRL_ON, press_keycode
from ufo_mobile.sim.android.devstate import ADB_IME, DeviceState
from ufo_mobile.sim.android.profile import KIND, U2_IME

U2_APK = bundled_u2_apk().read_bytes()


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def focused_notes(device: DeviceState) -> DeviceState:
    device.phone.start_app(NOTES, ".EditNoteActivity")
    device.phone.tap(540, 327)  # the title field
    return device


async def installed_u2(profile: str = "pixel-14") -> DeviceState:
    device = device_with(profile)
    device.fs.write("/data/local/tmp/app.apk", U2_APK)
    assert await run(device, "pm install -r -t /data/local/tmp/app.apk") == (0, "Success\n", "")
    return device


async def test_installing_uiautomator2s_apk_registers_its_package_and_input_method() -> None:
    device = await installed_u2()
    status, listing, _ = await run(device, "ime list -s -a")
    assert U2_IME in listing.split()
    path = (await run(device, "pm path com.github.uiautomator"))[1].strip().removeprefix("package:")
    assert device.fs.read(path) == U2_APK
    assert (await run(device, f"stat -c %s {path}"))[1].strip() == str(len(U2_APK))
    assert "package:com.github.uiautomator versionCode:2004001" in (
        await run(device, "pm list packages -3 --show-versioncode"))[1]
    assert "com.github.uiautomator/.MainActivity" in (await run(
        device, "cmd package query-activities --components -a android.intent.action.MAIN "
                "-c android.intent.category.LAUNCHER"))[1]
    assert await run(device, "pm uninstall com.github.uiautomator") == (0, "Success\n", "")
    assert U2_IME not in (await run(device, "ime list -s -a"))[1]
    assert not device.fs.exists(path)
    assert await run(device, "pm uninstall com.github.uiautomator") == (
        1, "Failure [DELETE_FAILED_INTERNAL_ERROR]\n", "")


async def test_installing_any_apk_and_what_is_not_one() -> None:
    device = device_with("kind")
    device.fs.write("/data/local/tmp/hello.apk", build_apk("com.example.hello", "Hello", 7, "7.0"))
    assert await run(device, "pm install /data/local/tmp/hello.apk") == (0, "Success\n", "")
    assert "package:com.example.hello" in (await run(device, "pm list packages"))[1]
    assert device.packages.get("com.example.hello").label == "Hello"  # type: ignore[union-attr]
    device.fs.write("/data/local/tmp/junk.apk", b"not a zip")
    status, out, _ = await run(device, "pm install /data/local/tmp/junk.apk")
    assert status == 1 and out.startswith("Failure [INSTALL_PARSE_FAILED_NOT_APK: ")
    status, _, err = await run(device, "pm install /data/local/tmp/nothing.apk")
    assert status == 255 and "Can't open file: /data/local/tmp/nothing.apk" in err


async def test_u2_keyboard_result_codes() -> None:
    device = focused_notes(await installed_u2())
    typed = f"am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text {b64('héllo 中文')}"
    assert (await run(device, typed))[1].endswith("Broadcast completed: result=0\n")  # not selected: nobody hears
    assert device.phone.state(NOTES)["title"] == ""
    await run(device, f"ime enable {U2_IME} && ime set {U2_IME}")
    assert (await run(device, typed))[1].endswith("Broadcast completed: result=-1\n")
    assert device.phone.state(NOTES)["title"] == "héllo 中文"
    out = (await run(device, "am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text '!!'"))[1]
    assert out.endswith('Broadcast completed: result=0, data="error:bad base-64"\n')
    assert (await run(device, "am broadcast -a ADB_KEYBOARD_CLEAR_TEXT"))[1].endswith("result=-1\n")
    assert device.phone.state(NOTES)["title"] == ""
    assert device.phone.keyboard_shown()
    assert (await run(device, "am broadcast -a ADB_KEYBOARD_HIDE"))[1].endswith("result=-1\n")
    assert not device.phone.keyboard_shown() and device.phone.focused_field() == "title"
    device.phone.tap(540, 327)
    assert device.phone.keyboard_shown()  # a tap on the field brings it back
    device.phone.back()
    device.phone.home()
    out = (await run(device, typed))[1]
    assert out.endswith('Broadcast completed: result=-1, data="ADB_KEYBOARD_INPUT_TEXT"\n')  # no field focused


async def test_ctrl_a_selects_all_from_keycombination_pressed_keys_and_the_adb_keyboard() -> None:
    device = focused_notes(device_with("kind"))
    device.phone.input_text("some text")
    await run(device, "input keycombination 113 29 && input keyevent 67")
    assert device.phone.state(NOTES)["title"] == ""
    device.phone.input_text("more")
    press_keycode(device, 29, META_CTRL_ON)
    press_keycode(device, 67)
    assert device.phone.state(NOTES)["title"] == ""
    device.phone.input_text("again")
    await run(device, f"ime enable {ADB_IME} && ime set {ADB_IME}")
    await run(device, "am broadcast -a ADB_INPUT_TEXT --es mcode 4096,29 && input keyevent 67")
    assert device.phone.state(NOTES)["title"] == ""
    await run(device, "input keycombination 29 30")  # no modifier: the keys type
    assert device.phone.state(NOTES)["title"] == "ab"


async def test_the_adb_keyboards_meta_keys_are_lost_while_its_receiver_is_not_bound() -> None:
    device = focused_notes(device_with(KIND.replace(adb_keyboard_late=1)))
    device.phone.input_text("keep")
    await run(device, f"ime enable {ADB_IME} && ime set {ADB_IME}")
    await run(device, "am broadcast -a ADB_INPUT_TEXT --es mcode 4096,29 && input keyevent 67")
    assert device.phone.state(NOTES)["title"] == "kee"
