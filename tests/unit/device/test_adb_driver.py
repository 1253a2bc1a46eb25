"""``AdbDriver``'s decisions, with the phone's answers scripted (no adb, no threads, no real time):
what a refused dump raises, which dumpsys line names the app, how a screenshot is cut out, which
key path clears a field, when typing is retried and when it stops."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from ufo_mobile.core.device.adb import AdbDriver
from ufo_mobile.core.device.adb_dump import STOP_U2, dump_failure_kind, pin_client
from ufo_mobile.core.device.adb_screen import display_ids, png_from
from ufo_mobile.core.device.adb_text import ADB_KEYBOARD, U2_KEYBOARD, parse_broadcast
from ufo_mobile.core.device.base import CurrentApp, KeyboardState
from ufo_mobile.errors import DeviceCommandError, DeviceDisconnectedError, DumpUnavailableError

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"x" * 17 + b"\x00\x00\x00\x00IEND\xaeB`\x82"
WARNING = (b"[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first "
           b"display found, however this default is not guaranteed to be consistent across captures.\n")
DUMP = ('<?xml version=\'1.0\' encoding=\'UTF-8\' standalone=\'yes\' ?><hierarchy rotation="0"><node index="0" '
        'text="{text}" class="android.widget.EditText" package="com.example.notes" focused="true" '
        'bounds="[0,0][1080,200]" /></hierarchy>')
Answer = str | Callable[[str], str]


class ScriptedAdb(AdbDriver):
    """An ``AdbDriver`` whose shell answers come from ``answers`` (first matching prefix wins; a
    callable gets the command). Every command is kept in ``commands``; sleeps are recorded."""

    def __init__(self, answers: dict[str, Answer], **kwargs: Any) -> None:
        self.slept: list[float] = []

        async def sleep(seconds: float) -> None:
            self.slept.append(seconds)

        super().__init__("phone", sleep=sleep, **kwargs)
        self.answers = answers
        self.commands: list[str] = []
        self.files: dict[str, bytes] = {}
        self.screencap = b""
        self.u2_dumps: list[str] = []  # dumps through uiautomator2 (the fallback), in order
        self._device = SimpleNamespace(sync=SimpleNamespace(read_bytes=lambda path: self.files.pop(path, b"")),
                                       serial="phone")

    def answer(self, command: str) -> str:
        self.commands.append(command)
        for prefix, answer in self.answers.items():
            if command.startswith(prefix):
                return answer(command) if callable(answer) else answer
        return ""

    async def _shell(self, command: str, *, what: str, check: bool = True, seconds: float | None = None) -> str:
        out = self.answer(command)
        if check and out.startswith("FAIL:"):
            raise DeviceCommandError(f"{what}: exit 1: {out[5:]}", serial=self.serial)
        return out

    async def _call(self, fn: Any, *args: Any, what: str, limit: float | None = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    async def _exec_bytes(self, command: str, *, what: str) -> bytes:
        self.commands.append(command)
        return self.screencap

    async def _probe(self) -> None:
        if self.answer("true") == "GONE":
            raise DeviceDisconnectedError("ping: device offline", serial=self.serial)

    def dumps(self) -> list[str]:
        return [c for c in self.commands if "uiautomator dump" in c]

    async def _dump_through_u2(self) -> str:
        self.u2_dumps.append(DUMP.format(text=f"u2 {len(self.u2_dumps) + 1}"))
        return self.u2_dumps[-1]


def dumping(driver: ScriptedAdb, outputs: list[str], xml: str = DUMP.format(text="x")) -> Callable[[str], str]:
    """``uiautomator dump PATH && cat PATH 2>/dev/null; rm -f PATH`` answering ``outputs`` in turn;
    "ok": the dump's line, then ``xml`` (what ``cat`` prints of the file the dump wrote)."""

    def run(command: str) -> str:
        command = command.removeprefix(f"{STOP_U2}; ")  # a kept uiautomator2 server stopped first
        path = command.split()[2]
        assert command == f"uiautomator dump {path} && cat {path} 2>/dev/null; rm -f {path}"
        out = outputs.pop(0)
        if out == "ok":
            return f"UI hierchary dumped to: {path}\n{xml}"
        return out

    return run


# --- 1. dumps: one attempt, a kind the caller can act on -----------------------------------------------


NULL_ROOT = "ERROR: null root node returned by UiTestAutomationBridge."


@pytest.mark.parametrize(("outputs", "kind"), [
    (["ERROR: could not get idle state."], "idle"),
    ([NULL_ROOT, NULL_ROOT], "null_root"),
    ([""], "other"),
])
async def test_a_refused_dump_says_why(outputs: list[str], kind: str) -> None:
    driver, count = ScriptedAdb({}), len(outputs)
    driver.answers["uiautomator dump"] = dumping(driver, outputs)
    with pytest.raises(DumpUnavailableError) as info:
        await driver.get_ui_tree()
    assert info.value.kind == kind and isinstance(info.value, DeviceCommandError)
    assert len(driver.dumps()) == count and not driver.slept
    assert driver.commands == driver.dumps()  # one round trip each: dump, read and delete in one shell command


async def test_a_null_root_is_dumped_again_at_once() -> None:
    driver = ScriptedAdb({})
    driver.answers["uiautomator dump"] = dumping(driver, [NULL_ROOT, "ok"])
    assert await driver.get_ui_tree() == DUMP.format(text="x")
    assert len(driver.dumps()) == 2 and driver.commands == driver.dumps() and not driver.slept


async def test_an_empty_dump_file_and_an_unknown_failure() -> None:
    driver = ScriptedAdb({})
    driver.answers["uiautomator dump"] = dumping(driver, ["ok", "Killed"], xml="  ")
    with pytest.raises(DumpUnavailableError) as info:
        await driver.get_ui_tree()
    assert info.value.kind == "other"
    with pytest.raises(DeviceCommandError) as error:
        await driver.get_ui_tree()
    assert not isinstance(error.value, DumpUnavailableError) and "Killed" in str(error.value)


IDLE = "ERROR: could not get idle state."


async def test_an_idle_refusal_is_predicted_until_the_driver_changes_the_screen() -> None:
    driver = ScriptedAdb({})
    driver.answers["uiautomator dump"] = dumping(driver, [IDLE, "ok", IDLE, "ok"])
    refusals = []
    for _ in range(3):
        with pytest.raises(DumpUnavailableError) as info:
            await driver.get_ui_tree()
        refusals.append((info.value.kind, len(driver.dumps())))
    assert refusals == [("idle", 1), ("idle", 1), ("idle", 1)]  # the two after the first: nothing run
    assert await driver.get_ui_tree() == DUMP.format(text="x") and len(driver.dumps()) == 2
    with pytest.raises(DumpUnavailableError):
        await driver.get_ui_tree()
    await driver.press_key("home")  # a key press or an app start: the next call dumps again
    assert await driver.get_ui_tree() == DUMP.format(text="x") and len(driver.dumps()) == 4
    assert not driver.slept


async def test_a_leftover_u2_server_is_stopped_and_the_dump_tried_again() -> None:
    conflict = ("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
                "IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!")
    driver = ScriptedAdb({})
    driver.answers["uiautomator dump"] = dumping(driver, [conflict, "ok"])
    assert await driver.get_ui_tree() == DUMP.format(text="x")
    stop = driver.commands.index("pkill -f com.wetest.uia2.Main; am force-stop com.github.uiautomator")
    assert driver.commands[stop - 1].startswith("uiautomator dump") and driver.commands[stop + 1].startswith(
        "uiautomator dump")
    driver.answers["uiautomator dump"] = dumping(driver, [conflict, conflict])
    with pytest.raises(DumpUnavailableError) as info:
        await driver.get_ui_tree()
    assert info.value.kind == "conflict" and len(driver.dumps()) == 4


def test_dump_failure_kinds() -> None:
    assert dump_failure_kind("ERROR: could not get idle state.\n") == "idle"
    assert dump_failure_kind("\n\n") == "other"
    assert dump_failure_kind("/system/bin/sh: uiautomator: inaccessible or not found") is None


def test_pin_client_answers_uiautomator2s_reconnect_from_our_server() -> None:
    asked: list[tuple[str, Any]] = []
    client = SimpleNamespace(wait_for=lambda serial, state, timeout: asked.append((serial, state)),
                             device=lambda serial: f"device {serial}")
    u2_device = SimpleNamespace(adb_device=SimpleNamespace(serial="127.0.0.1:5555"))
    pin_client(u2_device, client)  # type: ignore[arg-type]
    assert u2_device._wait_for_device() == "device 127.0.0.1:5555" and asked == [("127.0.0.1:5555", "device")]


# --- 9. the app in front --------------------------------------------------------------------------------


async def test_current_app_from_focus_then_resumed_activity_else_an_error() -> None:
    focus = "  mCurrentFocus=Window{2b u0 com.android.settings/com.android.settings.Settings}\n"
    resumed = "    topResumedActivity=ActivityRecord{d7 u0 com.example.notes/.EditNoteActivity t93}\n"
    assert await ScriptedAdb({"dumpsys window": focus}).current_app() == CurrentApp(
        "com.android.settings", "com.android.settings.Settings")
    driver = ScriptedAdb({"dumpsys window": "  mTopFocusedDisplayId=0\n", "dumpsys activity activities": resumed})
    assert await driver.current_app() == CurrentApp("com.example.notes", ".EditNoteActivity")
    assert await driver.current_app() == CurrentApp("com.example.notes", ".EditNoteActivity")
    # this phone's dumpsys window names no app: the next observations ask dumpsys activity alone
    assert driver.commands == ["dumpsys window", "dumpsys activity activities", "dumpsys activity activities"]
    driver.answers.update({"dumpsys window": focus, "dumpsys activity activities": ""})  # and when it stops saying
    assert await driver.current_app() == CurrentApp("com.android.settings", "com.android.settings.Settings")
    assert await driver.current_app() == CurrentApp("com.android.settings", "com.android.settings.Settings")
    assert driver.commands[3:] == ["dumpsys activity activities", "dumpsys window", "dumpsys window"]
    with pytest.raises(DeviceCommandError, match="neither dumpsys window nor dumpsys activity"):
        await ScriptedAdb({"dumpsys window": "", "dumpsys activity": ""}).current_app()


# --- 5. the keyboard ---------------------------------------------------------------------------------------


async def test_keyboard_state() -> None:
    windows = ("  Window #2 Window{ee u0 InputMethod}:\n    mViewVisibility=0x0 mHaveFrame=true mObscured=false\n"
               "    Frames: parent=[0,1517][1080,2400] display=[0,1517][1080,2400] frame=[0,1517][1080,2400]"
               " last=[0,1517][1080,2400]\n")
    shown = ScriptedAdb({"dumpsys input_method": "  mInputShown=true\n", "dumpsys window windows": windows})
    assert await shown.keyboard_state() == KeyboardState(True, (0, 1517, 1080, 2400))
    hidden = ScriptedAdb({"dumpsys input_method": "  mInputShown=false\n"})
    assert await hidden.keyboard_state() == KeyboardState(False, None)
    assert "dumpsys window windows" not in hidden.commands
    with pytest.raises(DeviceCommandError):
        await ScriptedAdb({"dumpsys input_method": "Can't find service: input_method"}).keyboard_state()


# --- 7. screenshots ------------------------------------------------------------------------------------------


async def test_screenshot_names_the_first_display_of_several_and_cuts_the_png_out() -> None:
    listing = ('Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName="Inner"\n'
               'Display 4619827551948147201 (HWC display 1): port=1 pnpId=GGL displayName="Outer"\n')
    driver = ScriptedAdb({"dumpsys SurfaceFlinger --display-id": listing})
    driver.screencap = WARNING + PNG + b"\n"
    assert await driver.screenshot() == PNG
    assert driver.commands[-1] == "screencap -p -d 4619827259835644672"
    await driver.screenshot()
    assert driver.commands.count("dumpsys SurfaceFlinger --display-id") == 1  # asked once per connection
    chosen = ScriptedAdb({"dumpsys SurfaceFlinger --display-id": listing}, display_id="4619827551948147201")
    chosen.screencap = PNG
    await chosen.screenshot()
    assert chosen.commands[-1] == "screencap -p -d 4619827551948147201"


async def test_screenshot_never_hands_over_anything_but_a_png() -> None:
    single = ScriptedAdb({"dumpsys SurfaceFlinger --display-id": "Display 0 (HWC display 0): port=0\n"})
    single.screencap = PNG
    assert await single.screenshot() == PNG and single.commands[-1] == "screencap -p"
    single.screencap = b"screencap: error"
    with pytest.raises(DeviceCommandError, match="no PNG"):
        await single.screenshot()
    assert single.commands[-1] == "true"  # the phone still answers: the command's own failure
    single.screencap = PNG[:-12]
    with pytest.raises(DeviceCommandError, match="a PNG cut off before its end"):
        await single.screenshot()
    wrong = ScriptedAdb({"dumpsys SurfaceFlinger --display-id": "Display 7 (HWC display 0):\n"}, display_id="9")
    with pytest.raises(DeviceCommandError, match="display_id 9 is not a display of this phone"):
        await wrong.screenshot()


@pytest.mark.parametrize("output", [b"", PNG[:40]])
async def test_a_screenshot_cut_short_by_a_phone_that_went_away_is_a_lost_phone(output: bytes) -> None:
    driver = ScriptedAdb({"dumpsys SurfaceFlinger --display-id": "Display 0 (HWC display 0): port=0\n",
                          "true": "GONE"})
    driver.screencap = output
    with pytest.raises(DeviceDisconnectedError, match="then the phone stopped answering"):
        await driver.screenshot()


def test_png_from_and_display_ids() -> None:
    assert png_from(WARNING + PNG + b"trailing") == PNG
    assert png_from(b"no png here") is None
    assert display_ids("Display 1 (HWC display 0): x\nnot a display line\nDisplay 2 (HWC display 1): y\n") == [
        "1", "2"]


# --- 3 and 11. clearing, select-all, typing through an input method -----------------------------------------


async def test_clear_uses_select_all_from_android_11_and_dels_before() -> None:
    modern = ScriptedAdb({"getprop ro.build.version.sdk": "34"})
    await modern.clear_field()
    assert modern.commands[-1] == "input keycombination 113 29 && input keyevent 67"
    old = ScriptedAdb({"getprop ro.build.version.sdk": "29"})
    old.answers["uiautomator dump"] = dumping(old, ["ok"], xml=DUMP.format(text="y" * 100))
    await old.clear_field()
    assert old.commands[-1] == "input keyevent 123 && input keyevent " + " ".join(["67"] * 108)
    assert not any("broadcast" in c or c.startswith("ime ") for c in old.commands)  # no input method


async def test_select_all_before_android_11() -> None:
    bare = ScriptedAdb({"getprop ro.build.version.sdk": "29", "ime list": "com.android.inputmethod.latin/.LatinIME"})
    with pytest.raises(DeviceCommandError, match="no `input keycombination`"):
        await bare.press_key("select_all")
    keyboard = ScriptedAdb({"getprop ro.build.version.sdk": "29", "ime list": ADB_KEYBOARD,
                            "settings get secure default_input_method": "com.android.inputmethod.latin/.LatinIME",
                            "dumpsys input_method": f"  mCurMethodId={ADB_KEYBOARD}\n"})
    await keyboard.press_key("select_all")
    sent = keyboard.commands.index("am broadcast -a ADB_INPUT_TEXT --es mcode 4096,29")
    assert keyboard.commands[sent - 2].startswith(f"ime enable {ADB_KEYBOARD} && ime set")
    assert keyboard.commands[sent + 1] == "ime set com.android.inputmethod.latin/.LatinIME"


def test_parse_broadcast() -> None:
    assert parse_broadcast("Broadcasting: Intent { act=X flg=0x400000 }\nBroadcast completed: result=-1") == (-1, None)
    assert parse_broadcast('Broadcast completed: result=-1, data="ADB_KEYBOARD_INPUT_TEXT"') == (
        -1, "ADB_KEYBOARD_INPUT_TEXT")
    assert parse_broadcast('Broadcast completed: result=0, data="error:bad base-64"') == (0, "error:bad base-64")
    assert parse_broadcast("Error: something") == (None, None)


def u2_keyboard_phone(results: list[str]) -> ScriptedAdb:
    return ScriptedAdb({"ime list": U2_KEYBOARD, "settings get secure default_input_method": "gboard/.Latin",
                        "dumpsys input_method": f"  mCurMethodId={U2_KEYBOARD}\n",
                        "am broadcast": lambda command: results.pop(0)})


async def test_u2_keyboard_waits_for_its_receiver_and_never_retypes() -> None:
    late = u2_keyboard_phone(["Broadcast completed: result=0", "Broadcast completed: result=-1"])
    await late.input_text("naïve")
    sent = [c for c in late.commands if c.startswith("am broadcast")]
    payload = base64.b64encode("naïve".encode()).decode()
    assert sent == [f"am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text {payload}"] * 2
    assert late.slept and late.commands[-1] == "ime set gboard/.Latin"
    unfocused = u2_keyboard_phone(['Broadcast completed: result=-1, data="ADB_KEYBOARD_INPUT_TEXT"'])
    with pytest.raises(DeviceCommandError, match="no text field has focus"):
        await unfocused.input_text("中文")
    assert unfocused.commands[-1] == "ime set gboard/.Latin"  # the user's keyboard is back
    never = u2_keyboard_phone(["Broadcast completed: result=0"] * 20)
    with pytest.raises(DeviceCommandError, match="never received the text"):
        await never.input_text("中文")


def adb_keyboard_phone(fields: list[str], deaf: int) -> ScriptedAdb:
    """A phone with the ADB Keyboard whose receiver misses ``deaf`` broadcasts; ``fields`` are the
    focused field's text in the dumps to come."""
    driver = ScriptedAdb({"ime list": ADB_KEYBOARD, "settings get secure default_input_method": "gboard/.Latin",
                          "dumpsys input_method": f"  mCurMethodId={ADB_KEYBOARD}\n"})
    state = {"deaf": deaf}

    def broadcast(command: str) -> str:
        text = base64.b64decode(command.split()[-1]).decode()
        if state["deaf"] > 0:
            state["deaf"] -= 1
        else:
            fields.append(fields[-1] + text)
        return "Broadcast completed: result=0"

    def dump(command: str) -> str:
        return f"UI hierchary dumped to: {command.split()[2]}\n{DUMP.format(text=fields[-1])}"

    driver.answers.update({"am broadcast": broadcast, "uiautomator dump": dump})
    return driver


async def test_adb_keyboard_text_is_read_back_and_sent_again_only_while_the_field_is_unchanged() -> None:
    fields = ["ab"]
    driver = adb_keyboard_phone(fields, deaf=2)
    await driver.input_text("中文")
    assert fields[-1] == "ab中文" and len([c for c in driver.commands if c.startswith("am broadcast")]) == 3
    assert driver.commands[-1] == "ime set gboard/.Latin"


async def test_adb_keyboard_that_never_listens_fails_clearly_without_the_text() -> None:
    driver = adb_keyboard_phone(["ab"], deaf=100)
    with pytest.raises(DeviceCommandError) as info:
        await driver.input_text("pässword")
    assert "did not take the text" in str(info.value) and "pässword" not in str(info.value)
    assert driver.commands[-1] == "ime set gboard/.Latin"


async def test_no_input_method_says_what_to_install() -> None:
    driver = ScriptedAdb({"ime list": "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"})
    with pytest.raises(DeviceCommandError, match=re.escape("install the ADB Keyboard (com.android.adbkeyboard)")):
        await driver.input_text("émoji 🙂")
    assert not any(c.startswith(("am ", "ime set")) for c in driver.commands)


def test_the_adb_servers_version_is_asked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """adbutils asks for it before every command to a device named by serial: one more connection each."""
    import adbutils

    from ufo_mobile.core.device.adb_base import AdbServerClient

    asked: list[int] = []

    def version(self: adbutils.AdbClient) -> int:
        asked.append(1)
        return 41

    monkeypatch.setattr(adbutils.AdbClient, "server_version", version)
    client = AdbServerClient(port=1)
    assert [client.server_version() for _ in range(3)] == [41, 41, 41] and len(asked) == 1
    assert AdbServerClient(port=1).server_version() == 41 and len(asked) == 2  # per client

