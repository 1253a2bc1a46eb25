"""The broadcast receivers of the input methods ``am broadcast`` can reach on the emulated device.

A receiver answers only while its input method is the selected one (``ime set``): the service
registers it when it is created. ``am broadcast`` prints the result code the receivers leave
(``Broadcast completed: result=N``, plus ``, data="..."`` when one set data), 0 when nobody set one,
which is also what it prints when nobody received the intent.

* ADB Keyboard (senzhk/ADBKeyBoard, ``com.android.adbkeyboard/.AdbIME``), where the profile installs
  it: ``ADB_INPUT_TEXT`` (``--es msg``, and ``--es mcode 'META,CODE,...'`` for key events with meta
  state: ``4096,29`` is CTRL+A), ``ADB_INPUT_B64``, ``ADB_INPUT_CHARS`` (``--eia chars``),
  ``ADB_INPUT_CODE`` / ``ADB_EDITOR_CODE`` (``--ei code``), ``ADB_CLEAR_TEXT``. It never sets a result
  code, so a delivered broadcast and a lost one both print ``result=0``. The released APK registers
  its receiver when the input view is created (before commit 01a2fde), so the first
  ``adb_keyboard_late`` broadcasts after ``ime set`` reach nobody.
* uiautomator2's ``AdbKeyboard`` (``com.github.uiautomator/.AdbKeyboard``, from app-uiautomator.apk
  once it is installed): ``ADB_KEYBOARD_INPUT_TEXT`` (``--es text BASE64``), ``ADB_KEYBOARD_SET_TEXT``,
  ``ADB_KEYBOARD_CLEAR_TEXT``, ``ADB_KEYBOARD_INPUT_KEYCODE`` / ``ADB_KEYBOARD_EDITOR_CODE``
  (``--ei code``), ``ADB_KEYBOARD_SMART_ENTER``, ``ADB_KEYBOARD_HIDE`` / ``ADB_KEYBOARD_SHOW``,
  ``ADB_KEYBOARD_GET_CLIPBOARD``. As its InputMessageReceiver.onReceive does: a handled action
  leaves ``result=-1`` (RESULT_OK) and the handler's data (none for typed text); with no input
  connection (no focused field) the data is the action's name and nothing is typed; an exception
  leaves ``result=0, data="error:<message>"``.
"""

from __future__ import annotations

import base64
import binascii
import re

from ufo_mobile.sim.android.commands.input import press_keycode, type_text
from ufo_mobile.sim.android.devstate import ADB_IME, DeviceState
from ufo_mobile.sim.android.intents import Intent
from ufo_mobile.sim.android.profile import U2_IME

RESULT_OK, RESULT_CANCELED = -1, 0
U2_ACTIONS = frozenset({
    "ADB_KEYBOARD_SMART_ENTER", "ADB_KEYBOARD_INPUT_TEXT", "ADB_KEYBOARD_CLEAR_TEXT", "ADB_KEYBOARD_SET_TEXT",
    "ADB_KEYBOARD_INPUT_KEYCODE", "ADB_KEYBOARD_EDITOR_CODE", "ADB_KEYBOARD_GET_CLIPBOARD", "ADB_KEYBOARD_HIDE",
    "ADB_KEYBOARD_SHOW",
})
_ADB_IME_ACTIONS = ("ADB_INPUT_", "ADB_CLEAR_TEXT", "ADB_EDITOR_")
_B64 = re.compile(r"[A-Za-z0-9+/=\s]*")
ENTER = 66


def deliver(device: DeviceState, intent: Intent) -> tuple[int, str | None]:
    """Hand the broadcast to the receivers listening now; the result code and data it ends with."""
    action = intent.action or ""
    ime = device.current_ime()
    if ime == ADB_IME and action.startswith(_ADB_IME_ACTIONS):
        _adb_keyboard(device, intent)
    elif ime == U2_IME and action in U2_ACTIONS:
        try:
            return RESULT_OK, _u2_keyboard(device, action, intent.extras)
        except ValueError as exc:
            return RESULT_CANCELED, f"error:{exc}"
    return RESULT_CANCELED, None


def _adb_keyboard(device: DeviceState, intent: Intent) -> None:
    action = intent.action or ""
    with device.lock:
        if device.adb_keyboard_deaf > 0:
            device.adb_keyboard_deaf -= 1
            return
    msg = intent.extras.get("msg")
    if action == "ADB_INPUT_TEXT":
        if msg is not None:
            type_text(device, msg)
        _meta_codes(device, intent.extras.get("mcode"))
    elif action == "ADB_INPUT_B64" and msg is not None:
        try:
            type_text(device, base64.b64decode(msg, validate=False).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):
            return
    elif action == "ADB_INPUT_CHARS" and "chars" in intent.extras:
        codes = [int(code) for code in intent.extras["chars"].split(",") if code.strip().isdigit()]
        type_text(device, "".join(chr(code) for code in codes if code < 0x110000))
    elif action in ("ADB_INPUT_CODE", "ADB_EDITOR_CODE") and intent.extras.get("code", "").isdigit():
        press_keycode(device, ENTER if action == "ADB_EDITOR_CODE" else int(intent.extras["code"]))
    elif action == "ADB_CLEAR_TEXT":
        type_text(device, "", clear=True)


def _meta_codes(device: DeviceState, mcode: str | None) -> None:
    """``mcode``: pairs of ``META,KEYCODE`` (META may be ``A+B``), each sent as a key down."""
    if not mcode:
        return
    parts = mcode.split(",")
    for meta_text, code_text in zip(parts[0::2], parts[1::2], strict=False):
        try:
            meta = 0
            for flag in meta_text.split("+"):
                meta |= int(flag)
            code = int(code_text)
        except ValueError:
            return  # the real receiver dies on NumberFormatException; nothing more is typed
        press_keycode(device, code, meta)


def _u2_keyboard(device: DeviceState, action: str, extras: dict[str, str]) -> str | None:
    """InputMessageReceiver.handleAction: the result data, or raises ``ValueError`` (its exceptions)."""
    phone = device.phone
    if phone.focused_field() is None:
        return action  # getCurrentInputConnection() is null
    if action in ("ADB_KEYBOARD_INPUT_TEXT", "ADB_KEYBOARD_SET_TEXT"):
        encoded = extras.get("text")
        if encoded is None and action == "ADB_KEYBOARD_INPUT_TEXT":
            return action
        text = _decode(encoded or "")
        type_text(device, text, clear=action == "ADB_KEYBOARD_SET_TEXT")
    elif action == "ADB_KEYBOARD_CLEAR_TEXT":
        type_text(device, "", clear=True)
    elif action == "ADB_KEYBOARD_INPUT_KEYCODE" and extras.get("code", "").lstrip("-").isdigit():
        press_keycode(device, int(extras["code"]))
    elif action == "ADB_KEYBOARD_EDITOR_CODE" and extras.get("code", "").isdigit():
        press_keycode(device, ENTER)
    elif action == "ADB_KEYBOARD_SMART_ENTER":
        press_keycode(device, ENTER)
        return "Enter"
    elif action == "ADB_KEYBOARD_HIDE":
        phone.hide_keyboard()
    elif action == "ADB_KEYBOARD_GET_CLIPBOARD":
        return base64.b64encode((device.clipboard or "").encode("utf-8")).decode("ascii")
    return None


def _decode(encoded: str) -> str:
    """android.util.Base64.decode(DEFAULT): whitespace is skipped, other bad input throws."""
    if not _B64.fullmatch(encoded):
        raise ValueError("bad base-64")
    try:
        data = base64.b64decode("".join(encoded.split()) + "==", validate=False)
    except binascii.Error as exc:
        raise ValueError("bad base-64") from exc
    return data.decode("utf-8", errors="replace")
