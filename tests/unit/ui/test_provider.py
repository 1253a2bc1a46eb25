"""AndroidStateProvider: dumps from the driver, retried while invalid, redacted, parsed."""

from __future__ import annotations

import pytest

from tests.fakes import SCREEN_XML, FakeDriver
from ufo_mobile.device.sim import SimDriver
from ufo_mobile.errors import UIParseError
from ufo_mobile.ui.provider import AndroidStateProvider, StateProvider


class Dumps(FakeDriver):
    def __init__(self, dumps: list[str]) -> None:
        super().__init__()
        self.sequence = dumps

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        return self.sequence[min(self.dumps, len(self.sequence)) - 1]


async def test_the_current_screen_of_the_simulated_phone() -> None:
    driver = SimDriver()
    driver.phone.start_app("com.android.settings", "wifi")
    provider = AndroidStateProvider(driver)
    assert isinstance(provider, StateProvider)
    assert provider.supported == {"element_index", "convert_point"}
    first, second = await provider.get_state(), await provider.get_state(observation_id="mine")
    assert (first.observation_id, second.observation_id) == ("state-1", "mine")
    assert any(c.label == "Use Wi-Fi" for c in first.elements)
    assert (first.screen_width, first.screen_height) == (1080, 2400)


async def test_invalid_dumps_are_read_again_up_to_the_retry_budget() -> None:
    driver = Dumps(["", "<hierarchy><node", SCREEN_XML])
    read = await AndroidStateProvider(driver, dump_retries=2).read(observation_id="o", screen_size=(1080, 2400))
    assert (read.attempts, driver.dumps, read.ui.elements[0].label) == (3, 3, "Wi-Fi")
    driver = Dumps(["", "", "", SCREEN_XML])
    with pytest.raises(UIParseError, match="UI dump still invalid after 2 attempts: "):
        await AndroidStateProvider(driver, dump_retries=1).read(observation_id="o")
    assert driver.dumps == 2


async def test_a_given_dump_is_used_and_every_dump_is_redacted_before_parsing() -> None:
    driver = Dumps([SCREEN_XML.replace('text="Wi-Fi"', 'text="hunter2 &amp; co"')])
    provider = AndroidStateProvider(driver, redact=lambda text: text.replace("hunter2", "[REDACTED]"))
    read = await provider.read(observation_id="o", dump="garbage")  # invalid: the provider reads a fresh one
    assert read.attempts == 2 and read.ui.elements[0].label == "[REDACTED] & co"
    assert "hunter2" not in read.ui.formatted_text
