"""Realism behind the shell: the soft keyboard, the uiautomator2 server's window dump and errors,
the installed packages and their APKs (``pm``, ``dd``, ``stat``), and the app-model flags."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.unit.sim.test_profile import device_with, run, run_bytes
from ufo_mobile.apk import app_label
from ufo_mobile.errors import SimulatorError
from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.android.catalog import catalog
from ufo_mobile.sim.android.devstate import DeviceState
from ufo_mobile.sim.android.packages import build_apk_bytes
from ufo_mobile.sim.android.profile import KIND, get_profile
from ufo_mobile.sim.phone import keyboard
from ufo_mobile.sim.phone.hierarchy import PROLOG
from ufo_mobile.sim.phone.loader import builtin_apps, load_app_file, packaged_app
from ufo_mobile.sim.servers.u2.server import handle_jsonrpc
from ufo_mobile.sim.servers.u2.windows import to_u2_xml, window_roots

NOTES = "com.example.notes"
TITLE = (540, 327)   # the notes editor's title field
BODY = (540, 1600)   # its body field; the keyboard's suggestion strip when the keyboard is up


def editor(phone: SimPhone) -> SimPhone:
    phone.start_app(NOTES, ".EditNoteActivity")
    phone.tap(*TITLE)
    return phone


def key_center(phone: SimPhone, label: str) -> tuple[int, int]:
    found = [key for key in keyboard.keys(*phone.screen_size()) if key.desc == label]
    return found[0].rect.center


# -- 8: the soft keyboard --------------------------------------------------------------------------------


def test_the_keyboard_is_drawn_and_takes_the_taps_under_it() -> None:
    phone = SimPhone()
    phone.soft_keyboard = True
    assert not phone.keyboard_shown()
    editor(phone)
    assert phone.keyboard_shown() and phone.focused_field() == "title"
    for letter in "hix":
        phone.tap(*key_center(phone, letter))
    phone.tap(*key_center(phone, "Delete"))
    phone.tap(*BODY)  # on the keyboard's suggestion strip / keys: the body field never sees it
    assert (phone.state(NOTES)["title"], phone.focused_field()) == ("hi", "title")
    phone.swipe(100, 1900, 900, 1900, 300)  # a swipe on the keyboard types nothing
    assert phone.state(NOTES)["title"] == "hi"
    top = keyboard.window_rect(*phone.screen_size()).top
    with Image.open(io.BytesIO(phone.screenshot_png())) as image:
        assert image.getpixel((540, top + 40)) == (0xE8, 0xEA, 0xED)  # the keyboard's background
    phone.tap(540, top - 100)  # above the keyboard: the body field
    assert phone.focused_field() == "body"


def test_no_keyboard_on_the_kind_phone() -> None:
    phone = editor(SimPhone())
    assert not phone.keyboard_shown()
    phone.tap(*BODY)
    assert phone.focused_field() == "body"


async def test_dumpsys_reports_the_keyboard_as_android_14_does() -> None:
    device = device_with(KIND.replace(soft_keyboard=True))
    device.phone.start_app(NOTES, ".EditNoteActivity")
    hidden = (await run(device, "dumpsys input_method"))[1]
    assert hidden.endswith(" mRequestedShowExplicitly=false mShowForced=false\n  mImeHiddenByDisplayPolicy=false\n"
                           "  mInputShown=false\n")
    window = (await run(device, "dumpsys window windows"))[1]
    assert "  Window #2 Window{" in window and " u0 InputMethod}:\n" in window
    assert "    mHasSurface=false isReadyForDisplay()=false\n" in window
    device.phone.tap(*TITLE)
    assert (await run(device, "dumpsys input_method"))[1].endswith("  mInputShown=true\n")
    window = (await run(device, "dumpsys window"))[1]
    assert "    mFrame=[0,1554][1080,2400] last=[0,1554][1080,2400]\n" in window
    assert "    mViewVisibility=0x0 mHaveFrame=true mObscured=false\n" in window
    assert re.search(r"^  mInputMethodWindow=Window\{\w+ u0 InputMethod\}$", window, re.M)
    older = device_with(KIND.replace(soft_keyboard=True, sdk=33))
    older.phone.start_app(NOTES, ".EditNoteActivity")
    assert (await run(older, "dumpsys input_method"))[1].endswith(
        "  mShowRequested=false mShowExplicitlyRequested=false mShowForced=false mInputShown=false\n")


# -- 8: the uiautomator2 server's window dump ------------------------------------------------------------


def roots_of(xml: str) -> list[str]:
    """Each root's package and bounds, in document order."""
    return re.findall(r'^  <node (?:NAF="true" )?index="0" .*?package="([^"]+)".*?bounds="([^"]+)"', xml, re.M)


def test_the_u2_format_is_kxmlserializers_with_every_window() -> None:
    phone = editor(SimPhone())
    phone.soft_keyboard = True
    xml = to_u2_xml(window_roots(phone.snapshot(), "com.google.android.inputmethod.latin", "seed"))
    assert xml.startswith(PROLOG + '\r\n<hierarchy rotation="0">\r\n  <node ')
    assert xml.endswith("\r\n</hierarchy>") and "\n" not in xml.replace("\r\n", "")
    assert sorted(roots_of(xml)) == sorted([("com.android.systemui", "[0,0][1080,84]"),
                                            ("com.example.notes", "[0,0][1080,2400]"),
                                            ("com.android.systemui", "[0,2334][1080,2400]"),
                                            ("com.google.android.inputmethod.latin", "[0,1554][1080,2400]")])
    title = next(line for line in xml.split("\r\n") if "id/title_field" in line)
    assert re.search(r'password="false" selected="false" visible-to-user="true" bounds="\[0,252\]\[1080,402\]" '
                     r'editable="true" drawing-order="2" hint="Title" display-id="0" />$', title)
    assert '<node NAF="true" index="0" text="" resource-id="com.android.systemui:id/home_handle"' not in xml
    assert 'content-desc="Delete" checkable="false" checked="false" clickable="true"' in xml
    shallow = to_u2_xml([phone.snapshot().root], max_depth=1)
    assert shallow.count("<node ") == 2


def test_window_order_is_a_seeded_shuffle() -> None:
    snap = editor(SimPhone()).snapshot()
    orders = {tuple(roots_of(to_u2_xml(window_roots(snap, "ime", f"14:{n}")))) for n in range(1, 9)}
    assert len(orders) > 1
    again = [roots_of(to_u2_xml(window_roots(snap, "ime", f"14:{n}"))) for n in range(1, 9)]
    assert again == [roots_of(to_u2_xml(window_roots(snap, "ime", f"14:{n}"))) for n in range(1, 9)]


async def rpc(device: DeviceState, method: str, *params: Any) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
    return await handle_jsonrpc(device, body)


async def test_u2_dumps_every_window_and_the_active_one_on_request() -> None:
    device = device_with("pixel-14")
    xml = (await rpc(device, "dumpWindowHierarchy", False, 50))["result"]
    assert len(roots_of(xml)) == 3  # no keyboard: nothing has focus
    only = (await rpc(device, "dumpWindowHierarchy", False, 50, True))["result"]
    assert roots_of(only) == [("com.android.launcher3", "[0,0][1080,2400]")]
    device.phone.install(packaged_app("com.example.video"))
    device.phone.start_app("com.example.video")  # animated: the server waits a little, then dumps anyway
    assert "Big Buck Bunny" in (await rpc(device, "dumpWindowHierarchy", False, 50))["result"]


async def test_u2_clipboard_on_android_11_to_14() -> None:
    device = device_with("pixel-14")
    error = (await rpc(device, "setClipboard", None, "secret"))["error"]
    assert (error["code"], error["message"]) == (-32001, "java.lang.SecurityException")
    assert error["data"].startswith("java.lang.SecurityException: Package android does not belong to 2000\n"
                                    "\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3011)\n")
    device.clipboard = "set by the user"
    assert (await rpc(device, "getClipboard"))["result"] is None
    android10 = device_with("android-10")
    assert (await rpc(android10, "setClipboard", None, "x"))["result"] is None
    assert (await rpc(android10, "getClipboard"))["result"] is None and android10.clipboard == "x"


async def test_u2_injection_refused_on_miui() -> None:
    device = device_with("xiaomi-13")
    error = (await rpc(device, "click", 540, 1200))["error"]
    assert (error["code"], error["message"]) == (-32001, "java.lang.SecurityException")
    assert error["data"].startswith("java.lang.SecurityException: Injecting to another application requires "
                                    "INJECT_EVENTS permission\n")
    assert (await rpc(device, "deviceInfo"))["result"]["sdkInt"] == 33


# -- 10: packages and their APKs ----------------------------------------------------------------------------


def test_the_catalog_is_a_real_phones() -> None:
    entries = {entry.package: entry for entry in catalog()}
    assert 280 <= len(entries) + len(builtin_apps()) + 2 <= 320
    assert 30 <= sum(entry.launchable for entry in entries.values()) + len(builtin_apps()) + 1 <= 60
    labels = {name: entries[name].label for name in ("com.facebook.katana", "com.ss.android.ugc.trill",
                                                     "com.tencent.mm", "com.google.android.apps.nbu.files")}
    assert labels == {"com.facebook.katana": "Facebook", "com.ss.android.ugc.trill": "TikTok",
                      "com.tencent.mm": "WeChat", "com.google.android.apps.nbu.files": "Files by Google"}


async def test_pm_lists_paths_and_resolves_launchers() -> None:
    device = device_with("pixel-14")
    listing = (await run(device, "pm list packages"))[1].splitlines()
    assert 280 <= len(listing) <= 320 and "package:com.tencent.mm" in listing
    assert (await run(device, "pm list packages -3 tencent --show-versioncode"))[1] == (
        "package:com.tencent.mm versionCode:"
        f"{device.packages.get('com.tencent.mm').version_code}\n")  # type: ignore[union-attr]
    path = (await run(device, "pm path com.tencent.mm"))[1]
    assert re.fullmatch(r"package:/data/app/~~[\w-]{22}==/com\.tencent\.mm-[\w-]{22}==/base\.apk\n", path)
    assert (await run(device, "pm path android"))[1] == "package:/system/framework/framework-res.apk\n"
    query = "cmd package query-activities -a android.intent.action.MAIN -c android.intent.category.LAUNCHER"
    components = (await run(device, f"{query} --components"))[1].splitlines()
    assert 30 <= len(components) <= 60 and "com.tencent.mm/.ui.LauncherUI" in components
    brief = (await run(device, f"{query} --brief"))[1]
    assert brief.startswith(f"{len(components)} activities found:\n  Activity #0:\n    priority=0 preferredOrder=0 "
                            "match=0x108000 specificIndex=-1 isDefault=false\n    com.android.chrome/"
                            "com.google.android.apps.chrome.Main\n  Activity #1:\n")
    full = (await run(device, query))[1]
    assert "    ActivityInfo:\n      name=com.tencent.mm.ui.LauncherUI\n      packageName=com.tencent.mm\n" in full
    assert (await run(device, "cmd package query-activities -a android.intent.action.VIEW"))[1] == (
        "No activities found\n")


async def test_catalog_apps_launch_to_a_placeholder_and_others_do_not() -> None:
    device = device_with("pixel-14")
    assert (await run(device, "monkey -p com.tencent.mm -c android.intent.category.LAUNCHER 1"))[0] == 0
    assert device.phone.current_app() == ("com.tencent.mm", "com.tencent.mm.ui.LauncherUI")
    assert 'text="WeChat" resource-id="com.tencent.mm:id/toolbar_title"' in device.phone.dump_hierarchy()
    status, _, err = await run(device, "monkey -p com.android.providers.media -c android.intent.category.LAUNCHER 1")
    assert (status, err) == (252, "** No activities found to run, monkey aborted.\n")
    assert (await run(device, "am start -n com.spotify.music/.MainActivity"))[0] == 0
    assert device.phone.current_app().package == "com.spotify.music"
    assert "versionName=" in (await run(device, "dumpsys package com.spotify.music"))[1]


async def test_apks_are_real_files_made_on_first_access() -> None:
    device = device_with("pixel-14")
    path = (await run(device, "pm path com.facebook.katana"))[1].removeprefix("package:").strip()
    folder = path.rsplit("/", 1)[0]
    assert not device.fs.exists(folder)  # nothing made yet
    package = device.packages.get("com.facebook.katana")
    assert package is not None
    data = build_apk_bytes(package)
    assert (await run(device, f"stat -c %s {path}"))[1] == f"{len(data)}\n"
    assert device.fs.read(path) == data
    status, out, err = await run_bytes(device, f"dd if={path} bs=1k skip=1 count=2")
    assert (status, out) == (0, data[1024:3072])
    assert err == b"2+0 records in\n2+0 records out\n2048 bytes (2.0 K) copied, 0.001 s, 1.9 M/s\n"
    tail = len(data) % 512 or 512
    _, out, err = await run_bytes(device, f"dd if={path} bs=512 skip={len(data) // 512 - (tail == 512)} 2>/dev/null")
    assert (out, err) == (data[-tail:], b"")

    def read_range(offset: int, length: int) -> bytes:
        return device.fs.read(path)[offset:offset + length]

    assert app_label(read_range, len(data)).label == "Facebook"


async def test_dd_copies_stdin_to_a_file_and_reports_like_toybox() -> None:
    device = device_with("kind")
    device.fs.write("/sdcard/in.bin", bytes(range(256)) * 20)
    assert await run(device, "dd if=/sdcard/in.bin of=/sdcard/out.bin bs=1000 count=3 status=noxfer") == (
        0, "", "3+0 records in\n3+0 records out\n")
    assert device.fs.read("/sdcard/out.bin") == (bytes(range(256)) * 20)[:3000]
    assert (await run(device, "dd if=/sdcard/in.bin bs=3000 status=none | wc -c"))[1] == "5120\n"
    assert await run(device, "dd if=/nope") == (1, "", "dd: /nope: No such file or directory\n")


# -- the app model ---------------------------------------------------------------------------------------


def test_screen_flags_and_optional_apps(tmp_path: Path) -> None:
    video, bank = packaged_app("com.example.video"), packaged_app("com.example.bank")
    assert video.screens["player"].animated and not video.screens["library"].animated
    assert bank.screens["login"].secure and not bank.screens["welcome"].secure
    assert not video.preinstalled and "com.example.video" not in {app.package for app in builtin_apps()}
    with pytest.raises(SimulatorError, match="no shipped app 'com.example.nope'"):
        packaged_app("com.example.nope")
    path = tmp_path / "flags.yaml"
    path.write_text("package: com.example.f\nlabel: F\nstart: m\nscreens:\n  m: {title: M, animated: sometimes}\n")
    with pytest.raises(SimulatorError, match=r"flags\.yaml: screens\.m\.animated: \S"):  # then pydantic's words
        load_app_file(path)


def test_tasks_are_listed_most_recent_first() -> None:
    phone = SimPhone()
    phone.start_app(NOTES)
    phone.start_app("com.android.settings")
    phone.home()
    assert [top.package for top in phone.task_tops()] == ["com.android.launcher3", "com.android.settings", NOTES]
    phone.stop_app("com.android.settings")
    assert [top.package for top in phone.task_tops()] == ["com.android.launcher3", NOTES]


def test_device_state_profile_defaults_to_the_realistic_phone() -> None:
    assert DeviceState(SimPhone(), "sim").profile is get_profile("pixel-14")


FORM_APP = """
package: com.example.form
label: Form
start: main
state: {name: "", email: ""}
screens:
  main:
    title: Sign up
    body:
      - {id: intro, text: Tell us about you}
      - {class: android.widget.EditText, id: name_field, bind: name, hint: Name}
      - {class: android.widget.EditText, id: email_field, bind: email, hint: Email}
"""


def middle(xml: str, wanted: str) -> tuple[int, int]:
    """The centre of the node whose text or resource id (after ``:id/``) is ``wanted``."""
    from ufo_mobile.core.ui.hierarchy import parse_hierarchy

    node = next(n for n in parse_hierarchy(xml).nodes if wanted in (n.text, n.resource_name))
    return node.bounds.center


async def test_u2_text_goes_to_the_focused_field_whatever_was_clicked(tmp_path: Path) -> None:
    """The real server's click is a bare touch, and its paste and clear are injected key events: after a
    click on a label, text still lands in the field that had the focus, and nothing tells the caller."""
    device = device_with("android-10")  # its clipboard can be set
    app = tmp_path / "form.yaml"
    app.write_text(FORM_APP, encoding="utf-8")
    device.phone.install_app(app)
    device.phone.start_app("com.example.form")
    tree = device.phone.dump_hierarchy()
    name, intro = middle(tree, "name_field"), middle(tree, "Tell us about you")
    assert (await rpc(device, "click", *name))["result"] is True
    assert (await rpc(device, "click", *intro))["result"] is True  # a label: the focus stays on Name
    assert device.phone.focused_field() == "name"
    await rpc(device, "setClipboard", None, "Ada")
    assert (await rpc(device, "pasteClipboard"))["result"] is None
    assert device.phone.state("com.example.form") == {"name": "Ada", "email": ""}
    assert (await rpc(device, "clearInputText"))["result"] is None
    assert device.phone.state("com.example.form") == {"name": "", "email": ""}
    assert (await rpc(device, "click", -1, name[1]))["result"] is False  # off the screen: no touch at all
    device.phone.back()  # no field has the focus now: paste and clear do nothing, and say nothing
    assert (await rpc(device, "pasteClipboard"))["result"] is None
    assert (await rpc(device, "clearInputText"))["result"] is None
