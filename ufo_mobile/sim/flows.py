"""Ready-made flows on the simulated phone's apps, through any driver (tests and benchmarks)."""

from __future__ import annotations

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.ui.state import build_ui_state


async def focus_new_note_title(driver: DeviceDriver) -> None:
    """Open Notes, start a new note and focus its title field, found by reading the screen."""
    await driver.start_app("com.example.notes")
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="flow-1")
    new = next(c for c in ui.elements if "New note" in (c.label, c.description))
    await driver.tap(*new.center)
    ui = build_ui_state(await driver.get_ui_tree(), observation_id="flow-2")
    title = next(c for c in ui.elements if c.node.resource_id.endswith("title_field"))
    await driver.tap(*title.center)
