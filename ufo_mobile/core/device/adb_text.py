"""Typing over adb, exactly, or failing with a message that says why.

Text typed by the model never reaches a shell command line as it is:

- printable ASCII without ``%s`` is typed with ``input text`` (spaces sent as ``%s``, the whole
  argument shell-quoted): exact, because that is the only rewrite Android's ``input`` applies;
- anything else goes through an input method that takes text from a broadcast, as base64 (an
  alphabet the shell cannot misread), with the user's input method restored afterwards:
  - uiautomator2's ``com.github.uiautomator/.AdbKeyboard`` (installed by the u2 driver, or already
    there): its receiver answers ``result=-1`` when the text reached a field, ``data="<action>"`` when
    no field had focus, and nothing (``result=0``) while it is not bound yet, so delivery is known;
  - the ADB Keyboard (senzhk, ``com.android.adbkeyboard/.AdbIME``): ``am broadcast`` prints
    ``result=0`` whether or not its receiver got the text, and the released APK registers the
    receiver only when its input view is created, so a broadcast right after ``ime set`` can go
    nowhere. So the IME's binding is awaited (``mCurMethodId``), and the text is confirmed by reading
    the focused field back from the next dump (as mobile-use does), sent again while the field is
    unchanged (bounded), and never sent again once the field changed.
  Without either, the call fails with a message saying what to install (or to use ``kind: u2``).

``clear=True`` never goes through an input method: select-all and DEL (``input keycombination``,
Android 11+), else MOVE_END and enough DELs. ``select_all`` falls back to the ADB Keyboard's
meta-key broadcast (``--es mcode 4096,29``: CTRL+A) before Android 11, else fails clearly.
Messages never contain the typed text (it may be a secret).
"""

from __future__ import annotations

import base64
import importlib.util
import re
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ufo_mobile.core.device.adb_base import AdbBase
from ufo_mobile.core.device.uixml import FieldText, focused_field
from ufo_mobile.errors import DeviceCommandError, DumpUnavailableError

ADB_KEYBOARD = "com.android.adbkeyboard/.AdbIME"
U2_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
KEYCOMBINATION_SDK = 30  # Android 11 added ``input keycombination``
CLEAR_KEYS = 64          # DELs after MOVE_END when the field's length is unknown
READ_BACK_ATTEMPTS = 3   # dumps tried to read a field back (each may be refused on a real phone)
_RESULT = re.compile(r"Broadcast completed: result=(-?\d+)(?:, data=\"([^\"]*)\")?")
_CUR_METHOD = re.compile(r"\bmCurMethodId=(\S+)")
NO_INPUT_METHOD = ("to type it exactly, install the ADB Keyboard (com.android.adbkeyboard) on the phone, "
                   "or use device.kind: u2, which brings uiautomator2's own input method")
_KINDS = {"\n": "a line break", "\t": "a tab"}


def first_untypeable(text: str) -> tuple[int, str] | None:
    """The first piece of ``text`` that ``input text`` cannot type as it is, with its position
    (1-based): the sequence ``%s`` (Android's escape for a space), or a character outside printable
    ASCII (its virtual keyboard has no key for it); None when it types all of ``text`` exactly."""
    for index, char in enumerate(text):
        if text.startswith("%s", index):
            return index + 1, "%s"
        if not " " <= char <= "~":
            return index + 1, char
    return None


def typeable_with_input_text(text: str) -> bool:
    """True when ``input text`` reproduces ``text`` exactly."""
    return first_untypeable(text) is None


def input_text_refusal(position: int, piece: str) -> str:
    """Why adb's ``input text`` cannot type ``piece``, found at character ``position``; the piece
    itself is named only when it is ``%s`` (the text may be a secret)."""
    if piece == "%s":
        return (f"the text has '%s' at character {position}: adb's `input text` types '%s' as a space "
                "(its escape for one), so it cannot type those two characters")
    kind = _KINDS.get(piece) or ("a control character" if piece.isascii() else "a character outside ASCII")
    return (f"character {position} of the text is {kind}: adb's `input text` types printable ASCII only "
            "(space to '~'), and it has no key for this one")


class UntypeableTextError(DeviceCommandError):
    """The text needs an input method that takes text over adb, and the phone has none. ``piece`` is
    what ``input text`` refused (``first_untypeable``) and ``position`` where; the message names the
    position and why, never the text (it may be a secret)."""

    def __init__(self, text: str, *, serial: str = "?") -> None:
        found = first_untypeable(text)
        self.position, self.piece = found if found is not None else (0, "")
        why = input_text_refusal(*found) if found is not None else "uiautomator2's input method is not installed"
        super().__init__(f"{why}; {NO_INPUT_METHOD}", serial=serial)


def parse_broadcast(output: str) -> tuple[int | None, str | None]:
    """The result code and data ``am broadcast`` printed (``None`` when it printed none)."""
    match = _RESULT.search(output)
    return (None, None) if match is None else (int(match.group(1)), match.group(2))


def bundled_u2_apk() -> Path:
    """uiautomator2's app-uiautomator.apk (its input method), found without importing uiautomator2."""
    spec = importlib.util.find_spec("uiautomator2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise DeviceCommandError("uiautomator2 is not installed: its input method cannot be installed")
    return Path(locations[0]) / "assets" / "app-uiautomator.apk"


class AdbTextMixin(AdbBase):
    """``AdbDriver``'s typing: exactly the text given, clearing a field, selecting all."""

    async def input_text(self, text: str, clear: bool = False) -> None:
        self.screen_touched()
        if clear:
            await self.clear_field()
        if not text:
            return
        if typeable_with_input_text(text):
            await self._shell("input text " + shlex.quote(text.replace(" ", "%s")), what="input_text")
            return
        imes = await self._installed_imes()
        if U2_KEYBOARD in imes:
            await self.type_with_u2_keyboard(text)
        elif ADB_KEYBOARD in imes:
            await self._type_with_adb_keyboard(text)
        else:
            raise UntypeableTextError(text, serial=self.serial)

    # --- input methods ---------------------------------------------------------------------

    async def _installed_imes(self, *, refresh: bool = False) -> list[str]:
        if self._imes is None or refresh:
            self._imes = (await self._shell("ime list -s -a", what="ime list", check=False)).split()
        return self._imes

    async def _ime_bound(self, ime: str) -> bool:
        """Whether ``ime`` is the input method the system uses now."""
        current = _CUR_METHOD.search(await self._shell("dumpsys input_method", what="dumpsys input_method",
                                                       check=False))
        if current is None:  # a build that does not print it: the setting is the next best
            current = re.match(r"(\S+)", await self._shell("settings get secure default_input_method",
                                                           what="ime", check=False))
        return current is not None and current.group(1) == ime

    @asynccontextmanager
    async def _ime_selected(self, ime: str) -> AsyncIterator[None]:
        """``ime`` selected and bound for the block; the user's input method back afterwards."""
        previous = (await self._shell("settings get secure default_input_method", what="ime", check=False)).strip()
        if previous != ime:
            await self._shell(f"ime enable {ime} && ime set {ime}", what="ime set")
        try:
            if not await self._poll(lambda: self._ime_bound(ime)):
                raise DeviceCommandError(f"the input method {ime} did not become the current one", serial=self.serial)
            yield
        finally:
            if previous and previous not in (ime, "null"):
                await self._shell(f"ime set {shlex.quote(previous)}", what="ime restore", check=False)

    async def install_u2_keyboard(self) -> None:
        """Install uiautomator2's app (its input method), as uiautomator2's ``send_keys`` does."""
        apk = bundled_u2_apk()
        self._log.warning("installing_u2_input_method", serial=self.serial, apk=str(apk),
                          message="installing uiautomator2's app (com.github.uiautomator) for its input method, "
                                  "to type text that `input text` cannot")
        await self.install_app(str(apk))

        async def registered() -> bool:
            return U2_KEYBOARD in await self._installed_imes(refresh=True)

        if not await self._poll(registered):
            raise DeviceCommandError(f"{U2_KEYBOARD} is not listed by `ime list` after installing it",
                                     serial=self.serial)

    async def type_with_u2_keyboard(self, text: str, *, install: bool = False) -> None:
        """Type ``text`` through uiautomator2's input method (installed first when ``install``)."""
        if U2_KEYBOARD not in await self._installed_imes():
            if not install:
                raise UntypeableTextError(text, serial=self.serial)
            await self.install_u2_keyboard()
        command = f"am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text {base64.b64encode(text.encode()).decode()}"

        async def delivered() -> bool:
            code, data = parse_broadcast(await self._shell(command, what="input_text"))
            if code == -1 and data in (None, "success"):
                return True
            if code == -1 and data == "ADB_KEYBOARD_INPUT_TEXT":
                raise DeviceCommandError("input_text: no text field has focus (tap one first)", serial=self.serial)
            if data is not None and data.startswith("error:"):
                raise DeviceCommandError(f"input_text: uiautomator2's input method failed: {data[:200]}",
                                         serial=self.serial)
            return False  # nobody received it: the input method is not bound yet

        async with self._ime_selected(U2_KEYBOARD):
            if not await self._poll(delivered):
                raise DeviceCommandError("input_text: uiautomator2's input method never received the text "
                                         "(its receiver did not register)", serial=self.serial)

    async def _type_with_adb_keyboard(self, text: str) -> None:
        before = await self._read_field()
        command = f"am broadcast -a ADB_INPUT_B64 --es msg {base64.b64encode(text.encode()).decode()}"

        async def delivered() -> bool:
            await self._shell(command, what="input_text")
            return self._typed(before, await self._read_field(), text)

        async with self._ime_selected(ADB_KEYBOARD):
            if not await self._poll(delivered):
                raise DeviceCommandError(
                    "input_text: the ADB Keyboard did not take the text: the field is unchanged after every try "
                    "(its receiver was never bound); nothing was typed", serial=self.serial)

    async def _read_field(self) -> FieldText:
        """The focused field, from a fresh dump (a refused dump is tried again, a few times)."""
        for attempt in range(READ_BACK_ATTEMPTS):
            try:
                xml = await self.dump_ui_tree()
            except DumpUnavailableError as exc:
                if attempt == READ_BACK_ATTEMPTS - 1:
                    raise DeviceCommandError("input_text: the field could not be read back (the phone refuses "
                                             "UI dumps now), so the typed text is unconfirmed",
                                             serial=self.serial) from exc
                await self._sleep(0.5 * 2 ** attempt)
                continue
            field = focused_field(xml)
            if field is None:
                raise DeviceCommandError("input_text: no text field has focus (tap one first)", serial=self.serial)
            return field
        raise AssertionError("unreachable")

    def _typed(self, before: FieldText, after: FieldText, text: str) -> bool:
        """True when ``after`` holds the text, False when the field is as it was (not delivered)."""
        if after.text == before.text:
            return False
        if after.password and len(after.text) == len(before.text) + len(text):
            return True
        if text in after.text:
            return True
        raise DeviceCommandError(f"input_text: the field changed but does not hold the {len(text)} characters sent "
                                 f"(it now has {len(after.text)})", serial=self.serial)

    # --- editing keys ----------------------------------------------------------------------

    async def _keycombination(self, keys: str, *, what: str) -> bool:
        """``input keycombination KEYS`` (plus what follows in ``keys``); False where it does not exist."""
        sdk = await self._sdk_level()
        if 0 < sdk < KEYCOMBINATION_SDK:
            return False
        try:
            await self._shell(f"input keycombination {keys}", what=what)
        except DeviceCommandError as exc:
            if "Unknown command" in str(exc):
                return False
            raise
        return True

    async def clear_field(self) -> None:
        """Empty the focused field: select-all and DEL, else MOVE_END and DELs (no input method)."""
        if await self._keycombination("113 29 && input keyevent 67", what="clear text"):
            return
        count = CLEAR_KEYS
        try:
            field = focused_field(await self.dump_ui_tree())
        except DumpUnavailableError:
            field = None
        if field is not None:
            count = max(count, len(field.text) + 8)
        await self._shell("input keyevent 123 && input keyevent " + " ".join(["67"] * count), what="clear text")

    async def select_all(self) -> None:
        """CTRL+A in the focused field."""
        if await self._keycombination("113 29", what="press_key select_all"):
            return
        if ADB_KEYBOARD in await self._installed_imes():
            async with self._ime_selected(ADB_KEYBOARD):
                await self._shell("am broadcast -a ADB_INPUT_TEXT --es mcode 4096,29", what="press_key select_all")
            return
        raise DeviceCommandError("press_key select_all: this Android has no `input keycombination` (added in "
                                 "Android 11) and no ADB Keyboard (com.android.adbkeyboard) to send CTRL+A; "
                                 "use device.kind: u2, or install the ADB Keyboard", serial=self.serial)
