"""What the MCP server's tools say when they refuse: the exact piece and why. Text that adb's
``input text`` cannot type on a phone with no input method for it names the piece (``'%s'``, or the
character and its code point) through MCP, while the driver's own message names only where it is
(the text may be a secret elsewhere); ``press_key`` names the nearest key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp import Client

from tests.mcp_calls import call
from ufo_mobile.core.device.adb_text import NO_INPUT_METHOD, UntypeableTextError, first_untypeable
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.host.mcp.server import build_server
from ufo_mobile.host.mcp.state import MobileServerState
from ufo_mobile.sim.phone.simphone import SimPhone


class PlainAdbTyping(SimDriver):
    """The simulated phone typing as a phone reached by plain adb with no input method for text does."""

    async def input_text(self, text: str, clear: bool = False) -> None:
        if first_untypeable(text) is not None:
            raise UntypeableTextError(text, serial=self.serial)
        await super().input_text(text, clear)


@asynccontextmanager
async def connect() -> AsyncIterator[Client]:
    state = MobileServerState(PlainAdbTyping(SimPhone()), timeout=5.0, clock=lambda: 0.0)
    async with Client(build_server(state, ["data", "action"])) as connected:
        yield connected


async def type_into_a_note(client: Client, text: str) -> dict[str, object]:
    assert (await call(client, "launch_app", package_name="com.example.notes"))["success"] is True
    controls = await call(client, "get_app_window_controls_target_info")
    new = next(c for c in controls if c["name"] == "New note")
    assert (await call(client, "click_control", control_id=new["id"], control_name="New note"))["success"]
    field = next(c for c in await call(client, "get_app_window_controls_target_info") if c["type"] == "EditText")
    result: dict[str, object] = await call(client, "type_text", text=text, control_id=field["id"],
                                           control_name=field["name"])
    return result


@pytest.mark.parametrize("text, error", [
    ("100%s sure", "'%s' cannot be typed: the text has '%s' at character 4: adb's `input text` types '%s' as a "
                   "space (its escape for one), so it cannot type those two characters; " + NO_INPUT_METHOD),
    ("café", "'é' (U+00E9) cannot be typed: character 4 of the text is a character outside ASCII: adb's "
             "`input text` types printable ASCII only (space to '~'), and it has no key for this one; "
             + NO_INPUT_METHOD),
    ("a\tb", "'\\t' (U+0009) cannot be typed: character 2 of the text is a tab: "),
    ("two\nlines", "'\\n' (U+000A) cannot be typed: character 4 of the text is a line break: "),
    ("bell\x07", "'\\x07' (U+0007) cannot be typed: character 5 of the text is a control character: "),
])
async def test_type_text_names_what_input_text_refused(text: str, error: str) -> None:
    async with connect() as client:
        result = await type_into_a_note(client, text)
    assert result["success"] is False
    assert str(result["error"]).startswith(f"[sim] {error}"), result["error"]


async def test_text_input_text_types_is_typed() -> None:
    async with connect() as client:
        assert (await type_into_a_note(client, "100% sure; $HOME it's"))["success"] is True


@pytest.mark.parametrize("text", ["pässword", "pass%sword", "🙂"])
def test_the_drivers_message_says_where_never_what(text: str) -> None:
    message = str(UntypeableTextError(text, serial="phone"))
    assert "character " in message and NO_INPUT_METHOD in message
    assert not any(char in message for char in text if not char.isascii())
    assert ("'%s'" in message) == ("%s" in text)


def test_first_untypeable_finds_the_first_piece() -> None:
    assert first_untypeable("plain ASCII ~!") is None
    assert first_untypeable("50%") is None and first_untypeable("%d %S") is None
    assert first_untypeable("a%sé") == (2, "%s")
    assert first_untypeable("é%s") == (1, "é")


async def test_press_key_names_the_nearest_key() -> None:
    async with connect() as client:
        result = await call(client, "press_key", key_code="KEYCODE_DPAD_CENTRE")
    assert result["success"] is False
    assert result["error"].startswith("unknown key 'KEYCODE_DPAD_CENTRE': not a KEYCODE_* name of Android's "
                                      "KeyEvent; the nearest is KEYCODE_DPAD_CENTER")
