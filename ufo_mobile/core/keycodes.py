"""Android's key codes: every ``KEYCODE_*`` constant of AOSP's ``android.view.KeyEvent``, from
``KEYCODE_UNKNOWN`` (0) to ``KEYCODE_F24`` (337, ``LAST_KEYCODE`` since Android 16), and how a key
is written: its name (``KEYCODE_DPAD_CENTER``), the name without ``KEYCODE_`` (``DPAD_CENTER``), or its
number (``23``).

Names are read the way ``KeyEvent.keyCodeFromString`` reads them (a number first, then the name with
or without the prefix), except that case does not matter here (``home`` is ``KEYCODE_HOME``). A
string of digits is always a number, as on Android: ``"4"`` is ``KEYCODE_BACK``, not ``KEYCODE_4``.

The device drivers send keys to a phone by number (``input keyevent 23``), the simulated Android's
``input`` command reads them with ``code_of``, and the MCP server's ``press_key`` accepts what
``code_of`` accepts.
"""

from __future__ import annotations

import difflib

_PREFIX = "KEYCODE_"


def _series(stem: str, first: int, last: int) -> str:
    return " ".join(f"{stem}{n}" for n in range(first, last + 1))


# The names in code order: the n-th word is the name of key code n (the codes have no gaps).
_IN_ORDER = " ".join((
    "UNKNOWN SOFT_LEFT SOFT_RIGHT HOME BACK CALL ENDCALL", _series("", 0, 9), "STAR POUND",
    "DPAD_UP DPAD_DOWN DPAD_LEFT DPAD_RIGHT DPAD_CENTER VOLUME_UP VOLUME_DOWN POWER CAMERA CLEAR",
    " ".join(chr(c) for c in range(ord("A"), ord("Z") + 1)),
    "COMMA PERIOD ALT_LEFT ALT_RIGHT SHIFT_LEFT SHIFT_RIGHT TAB SPACE SYM EXPLORER ENVELOPE ENTER DEL",
    "GRAVE MINUS EQUALS LEFT_BRACKET RIGHT_BRACKET BACKSLASH SEMICOLON APOSTROPHE SLASH AT NUM",
    "HEADSETHOOK FOCUS PLUS MENU NOTIFICATION SEARCH MEDIA_PLAY_PAUSE MEDIA_STOP MEDIA_NEXT",
    "MEDIA_PREVIOUS MEDIA_REWIND MEDIA_FAST_FORWARD MUTE PAGE_UP PAGE_DOWN PICTSYMBOLS SWITCH_CHARSET",
    "BUTTON_A BUTTON_B BUTTON_C BUTTON_X BUTTON_Y BUTTON_Z BUTTON_L1 BUTTON_R1 BUTTON_L2 BUTTON_R2",
    "BUTTON_THUMBL BUTTON_THUMBR BUTTON_START BUTTON_SELECT BUTTON_MODE ESCAPE FORWARD_DEL CTRL_LEFT",
    "CTRL_RIGHT CAPS_LOCK SCROLL_LOCK META_LEFT META_RIGHT FUNCTION SYSRQ BREAK MOVE_HOME MOVE_END",
    "INSERT FORWARD MEDIA_PLAY MEDIA_PAUSE MEDIA_CLOSE MEDIA_EJECT MEDIA_RECORD", _series("F", 1, 12),
    "NUM_LOCK", _series("NUMPAD_", 0, 9),
    "NUMPAD_DIVIDE NUMPAD_MULTIPLY NUMPAD_SUBTRACT NUMPAD_ADD NUMPAD_DOT NUMPAD_COMMA NUMPAD_ENTER",
    "NUMPAD_EQUALS NUMPAD_LEFT_PAREN NUMPAD_RIGHT_PAREN VOLUME_MUTE INFO CHANNEL_UP CHANNEL_DOWN",
    "ZOOM_IN ZOOM_OUT TV WINDOW GUIDE DVR BOOKMARK CAPTIONS SETTINGS TV_POWER TV_INPUT STB_POWER",
    "STB_INPUT AVR_POWER AVR_INPUT PROG_RED PROG_GREEN PROG_YELLOW PROG_BLUE APP_SWITCH",
    _series("BUTTON_", 1, 16),
    "LANGUAGE_SWITCH MANNER_MODE 3D_MODE CONTACTS CALENDAR MUSIC CALCULATOR ZENKAKU_HANKAKU EISU",
    "MUHENKAN HENKAN KATAKANA_HIRAGANA YEN RO KANA ASSIST BRIGHTNESS_DOWN BRIGHTNESS_UP",
    "MEDIA_AUDIO_TRACK SLEEP WAKEUP PAIRING MEDIA_TOP_MENU 11 12 LAST_CHANNEL TV_DATA_SERVICE",
    "VOICE_ASSIST TV_RADIO_SERVICE TV_TELETEXT TV_NUMBER_ENTRY TV_TERRESTRIAL_ANALOG",
    "TV_TERRESTRIAL_DIGITAL TV_SATELLITE TV_SATELLITE_BS TV_SATELLITE_CS TV_SATELLITE_SERVICE",
    "TV_NETWORK TV_ANTENNA_CABLE", _series("TV_INPUT_HDMI_", 1, 4), _series("TV_INPUT_COMPOSITE_", 1, 2),
    _series("TV_INPUT_COMPONENT_", 1, 2), "TV_INPUT_VGA_1 TV_AUDIO_DESCRIPTION",
    "TV_AUDIO_DESCRIPTION_MIX_UP TV_AUDIO_DESCRIPTION_MIX_DOWN TV_ZOOM_MODE TV_CONTENTS_MENU",
    "TV_MEDIA_CONTEXT_MENU TV_TIMER_PROGRAMMING HELP NAVIGATE_PREVIOUS NAVIGATE_NEXT NAVIGATE_IN",
    "NAVIGATE_OUT STEM_PRIMARY", _series("STEM_", 1, 3),
    "DPAD_UP_LEFT DPAD_DOWN_LEFT DPAD_UP_RIGHT DPAD_DOWN_RIGHT MEDIA_SKIP_FORWARD MEDIA_SKIP_BACKWARD",
    "MEDIA_STEP_FORWARD MEDIA_STEP_BACKWARD SOFT_SLEEP CUT COPY PASTE SYSTEM_NAVIGATION_UP",
    "SYSTEM_NAVIGATION_DOWN SYSTEM_NAVIGATION_LEFT SYSTEM_NAVIGATION_RIGHT ALL_APPS REFRESH THUMBS_UP",
    "THUMBS_DOWN PROFILE_SWITCH", _series("VIDEO_APP_", 1, 8), _series("FEATURED_APP_", 1, 4),
    _series("DEMO_APP_", 1, 4), "KEYBOARD_BACKLIGHT_DOWN KEYBOARD_BACKLIGHT_UP KEYBOARD_BACKLIGHT_TOGGLE",
    "STYLUS_BUTTON_PRIMARY STYLUS_BUTTON_SECONDARY STYLUS_BUTTON_TERTIARY STYLUS_BUTTON_TAIL RECENT_APPS",
    _series("MACRO_", 1, 4), "EMOJI_PICKER SCREENSHOT DICTATE NEW CLOSE DO_NOT_DISTURB PRINT LOCK",
    "FULLSCREEN", _series("F", 13, 24),
)).split()

NAMES: tuple[str, ...] = tuple(_PREFIX + name for name in _IN_ORDER)
"""Every key's full name, by code: ``NAMES[23]`` is ``KEYCODE_DPAD_CENTER``."""

LAST_KEYCODE = len(NAMES) - 1
"""The highest key code (``KEYCODE_F24``, 337)."""

_CODES: dict[str, int] = {name: code for code, name in enumerate(_IN_ORDER)}


def code_of(text: str) -> int | None:
    """The key code ``text`` names: ``KEYCODE_DPAD_CENTER``, ``DPAD_CENTER``, ``dpad_center`` or
    ``23``; None for anything else (an unknown name, a number above ``LAST_KEYCODE``)."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        code = int(text)
        return code if code <= LAST_KEYCODE else None
    name = text.upper()
    return _CODES.get(name.removeprefix(_PREFIX) if name.startswith(_PREFIX) else name)


def code(name: str) -> int:
    """The code of a key this program names itself (``code("KEYCODE_A")`` is 29).

    Raises:
        KeyError: no such key.
    """
    found = code_of(name)
    if found is None or not name.upper().startswith(_PREFIX):
        raise KeyError(name)
    return found


def name_of(code: int) -> str:
    """``KEYCODE_DPAD_CENTER`` for 23; ``KEYCODE_999`` for a code Android does not define."""
    return NAMES[code] if 0 <= code <= LAST_KEYCODE else f"{_PREFIX}{code}"


def nearest(text: str) -> str | None:
    """The key name closest to a name that is none (``KEYCODE_DPAD_CENTRE``: ``KEYCODE_DPAD_CENTER``)."""
    name = text.strip().upper()
    close = difflib.get_close_matches(name.removeprefix(_PREFIX), _IN_ORDER, n=1, cutoff=0.6)
    return _PREFIX + close[0] if close else None
