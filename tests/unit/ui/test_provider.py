"""AndroidStateProvider: dumps from the driver, retried while invalid, redacted, parsed."""

from __future__ import annotations

import pytest
from lxml import etree

from tests.fakes import SCREEN_XML, FakeDriver
from ufo_mobile.core.device.base import KeyboardState
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.ui.provider import AndroidStateProvider, StateProvider
from ufo_mobile.errors import DeviceCommandError, DumpUnavailableError, UIParseError


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


# --- refused dumps, fallbacks, the keyboard ----------------------------------------------------

IDLE = "ERROR: could not get idle state."


class Refusing(FakeDriver):
    """Refuses ``refuse`` dumps (kind ``kind``), then serves the screen; optional fallback dumper."""

    def __init__(self, refuse: int, kind: str = "idle", *, fallback: str | Exception | None = None,
                 keyboard: KeyboardState | None = None) -> None:
        super().__init__()
        self.refuse, self.kind, self.fallback, self.keyboard = refuse, kind, fallback, keyboard
        extra = set()
        if fallback is not None:
            extra.add("fallback_ui_tree")
        if keyboard is not None:
            extra.add("keyboard_state")
        self.supported = FakeDriver.supported | extra  # type: ignore[misc]

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        if self.dumps <= self.refuse:
            raise DumpUnavailableError(IDLE, serial=self.serial, kind=self.kind)
        return self.xml

    async def fallback_ui_tree(self) -> str:
        if isinstance(self.fallback, Exception):
            raise self.fallback
        assert self.fallback is not None
        return self.fallback

    async def keyboard_state(self) -> KeyboardState:
        assert self.keyboard is not None
        return self.keyboard


class Pauses:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def test_a_refused_dump_is_tried_again_after_growing_pauses() -> None:
    pauses = Pauses()
    provider = AndroidStateProvider(Refusing(2, "null_root"), unavailable_retries=3, retry_delay=0.5, sleep=pauses)
    read = await provider.read(observation_id="o", screen_size=(1080, 2400))
    assert (read.attempts, read.refusals, read.fallback, pauses.waits) == (3, ["null_root"] * 2, None, [0.5, 1.0])
    assert read.ui.elements[0].label == "Wi-Fi"


async def test_a_screen_that_never_settles_falls_back_to_the_other_dumper_at_once() -> None:
    # each refusal cost the phone its 10 s wait for idle already: no second plain dump
    pauses = Pauses()
    driver = Refusing(100, fallback=SCREEN_XML)
    read = await AndroidStateProvider(driver, unavailable_retries=2, sleep=pauses).read(observation_id="o",
                                                                                      screen_size=(1080, 2400))
    assert (read.fallback, read.refusals, driver.dumps, pauses.waits) == ("fallback_dump", ["idle"], 1, [])
    assert read.ui.elements[0].label == "Wi-Fi"


async def test_other_refusals_are_tried_again_before_the_fallback_dumper() -> None:
    pauses = Pauses()
    driver = Refusing(100, "null_root", fallback=SCREEN_XML)
    read = await AndroidStateProvider(driver, unavailable_retries=2, sleep=pauses).read(observation_id="o",
                                                                                      screen_size=(1080, 2400))
    assert (read.fallback, read.refusals, driver.dumps, pauses.waits) == (
        "fallback_dump", ["null_root"] * 3, 3, [0.5, 1.0])


async def test_without_a_fallback_dumper_an_animated_screen_is_tried_again() -> None:
    pauses = Pauses()
    read = await AndroidStateProvider(Refusing(2), unavailable_retries=3, sleep=pauses).read(
        observation_id="o", screen_size=(1080, 2400))
    assert (read.fallback, read.refusals, pauses.waits) == (None, ["idle"] * 2, [0.5, 1.0])


@pytest.mark.parametrize("fallback", [None, DeviceCommandError("u2 would not start")])
async def test_without_a_fallback_the_screen_is_seen_in_its_screenshot_only(fallback: Exception | None) -> None:
    driver = Refusing(100, fallback=fallback)
    read = await AndroidStateProvider(driver, unavailable_retries=1, sleep=Pauses()).read(
        observation_id="o", screen_size=(1080, 2400))
    assert read.fallback == "screenshot_only" and read.ui.elements == []
    assert read.ui.phone_state["controls_unavailable"].startswith("the screen never stops moving")
    assert "No control list for this screen: the screen never stops moving" in read.ui.formatted_text
    assert "click_at" in read.ui.formatted_text


async def test_controls_under_the_keyboard_the_dump_does_not_show_are_left_out() -> None:
    root = etree.fromstring(SCREEN_XML.split("?>", 1)[1].encode())
    root.find(".//node[@class='android.widget.EditText']").set("focused", "true")
    focused_field = etree.tostring(root, encoding="unicode")
    driver = Refusing(0, keyboard=KeyboardState(True, (0, 1500, 1080, 2400)))
    driver.xml = focused_field
    ui = (await AndroidStateProvider(driver).read(observation_id="o", screen_size=(1080, 2400))).ui
    assert ui.phone_state["keyboard_shown"] is True and "keyboard shown" in ui.formatted_text
    scroll = [c for c in ui.elements if c.node.scrollable]
    assert [(c.bounds.top, c.bounds.bottom) for c in scroll] == [(600, 1500)]  # cut at the keyboard's top
    hidden = Refusing(0, keyboard=KeyboardState(False, None))
    hidden.xml = focused_field
    ui = (await AndroidStateProvider(hidden).read(observation_id="o", screen_size=(1080, 2400))).ui
    assert [(c.bounds.top, c.bounds.bottom) for c in ui.elements if c.node.scrollable] == [(600, 2400)]


# --- the phone's date, the pipeline stages, stealth -------------------------------------------------


class Dated(FakeDriver):
    supported = FakeDriver.supported | {"get_date"}

    def __init__(self, dates: list[str | Exception]) -> None:
        super().__init__()
        self.dates = dates
        self.date_reads = 0

    async def get_date(self) -> str:
        answer = self.dates[min(self.date_reads, len(self.dates) - 1)]
        self.date_reads += 1
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_the_phone_date_is_read_once_per_ttl_and_kept_when_the_phone_will_not_say() -> None:
    now = [0.0]
    driver = Dated(["Mon Mar  3 10:00:00 CET 2025\n", DeviceCommandError("date: gone"), "Tue Mar  4 08:00:00 CET 2025"])
    provider = AndroidStateProvider(driver, date_ttl=60.0, clock=lambda: now[0])
    first = await provider.get_state()
    now[0] = 59.0
    second = await provider.get_state()
    assert (first.device_date, second.device_date, driver.date_reads) == ("Mon Mar 3 10:00:00 CET 2025",) * 2 + (1,)
    now[0] = 60.0
    assert (await provider.get_state()).device_date == "Mon Mar 3 10:00:00 CET 2025"  # refused: the last one stays
    now[0] = 120.0
    assert (await provider.get_state()).device_date == "Tue Mar  4 08:00:00 CET 2025".replace("  ", " ")
    assert driver.date_reads == 3
    assert (await AndroidStateProvider(FakeDriver()).get_state()).device_date == ""  # no get_date: unknown


async def test_the_default_formatter_as_a_stage_writes_the_same_text() -> None:
    from ufo_mobile.core.ui.format import FormatOptions
    from ufo_mobile.core.ui.pipeline import IndexedFormatter, TreeFormatter

    driver = SimDriver()
    driver.phone.start_app("com.android.settings", "wifi")
    options = FormatOptions(legend=False)
    formatter = IndexedFormatter(options)
    assert isinstance(formatter, TreeFormatter)
    plain = await AndroidStateProvider(driver, format_options=options).get_state()
    staged = await AndroidStateProvider(driver, tree_formatter=formatter).get_state()
    assert staged.formatted_text == plain.formatted_text and not staged.stealth
    assert (await AndroidStateProvider(driver, stealth=True).get_state()).stealth
