"""Ready-made flows on the simulated phone's apps, through any driver (tests and benchmarks)."""

from __future__ import annotations

import asyncio

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.ui.state import UIState, build_ui_state
from ufo_mobile.errors import DumpUnavailableError

DUMP_ATTEMPTS = 6  # a realistic phone refuses the first dump after a launch (null root)


async def read_screen(driver: DeviceDriver, observation_id: str) -> UIState:
    """The screen, the dump tried again (after a growing pause) while the phone refuses it."""
    for attempt in range(DUMP_ATTEMPTS):
        try:
            return build_ui_state(await driver.get_ui_tree(), observation_id=observation_id)
        except DumpUnavailableError:
            if attempt == DUMP_ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.05 * 2 ** attempt)
    raise AssertionError("unreachable")


async def focus_new_note_title(driver: DeviceDriver) -> None:
    """Open Notes, start a new note and focus its title field, found by reading the screen."""
    await driver.start_app("com.example.notes")
    ui = await read_screen(driver, "flow-1")
    new = next(c for c in ui.elements if "New note" in (c.label, c.description))
    await driver.tap(*new.center)
    ui = await read_screen(driver, "flow-2")
    title = next(c for c in ui.elements if c.node.resource_id.endswith("title_field"))
    await driver.tap(*title.center)


# The demo's replies (Settings -> Wi-Fi -> the switch -> done), for tests that script a model by hand.
OPEN = {"status": "CONTINUE", "thought": "open Settings", "action": {"name": "open_app", "args": {"text": "Settings"}}}
WIFI = {"status": "CONTINUE", "thought": "tap Wi-Fi",
        "action": {"name": "click", "args": {"index": 3, "text": "Wi-Fi"}}}
SWITCH = {"status": "CONTINUE", "thought": "switch it on",
          "action": {"name": "click", "args": {"index": 3, "text": "Use Wi-Fi"}}}
DONE = {"status": "FINISH", "result": "Wi-Fi is on."}
