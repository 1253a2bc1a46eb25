"""Our first model call on a real screen, for the prompt bench: the demo's settings and a simulated
phone whose screen is a real uiautomator dump (its hierarchy, size and app), run until the model is
first asked; the call's messages and reply schema are kept, then the run is stopped.

The model is a text-only one (like a plain scripted model, it reads no images), so nothing is
encoded for pictures; the comparison it serves is with DroidRun's text-only step.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ufo_mobile.core.device.base import CurrentApp
from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.core.device.wrappers import DriverWrapper
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.core.memory.messages import ChatMessage
from ufo_mobile.core.session import Session
from ufo_mobile.core.ui import build_ui_state
from ufo_mobile.settings import load_settings


class ScreenDriver(DriverWrapper):
    """The simulated phone, showing a real dump instead of its own screen."""

    def __init__(self, xml: str) -> None:
        super().__init__(SimDriver())
        state = build_ui_state(xml.encode("utf-8"), observation_id="bench")
        self.xml, self.size = xml, (state.screen_width, state.screen_height)
        self.package = next((n.package for n in state.tree.nodes if n.package), "") if state.tree else ""

    async def get_ui_tree(self) -> str:
        return self.xml

    async def fallback_ui_tree(self) -> str:
        return self.xml

    async def screen_size(self) -> tuple[int, int]:
        return self.size

    async def current_app(self) -> CurrentApp:
        return CurrentApp(self.package) if self.package else await self.inner.current_app()


class Asked(Exception):
    """Raised by ``FirstCall`` once it has the call: the run has nothing more to give."""


class FirstCall(ScriptedModel):
    """Keeps the first call's messages and schema, then stops the run."""

    def __init__(self) -> None:
        super().__init__(Script(replies=["{}"]), name="first-call")  # never replayed
        self.messages: list[ChatMessage] | None = None
        self.schema: dict[str, Any] | None = None

    async def complete(self, messages: Sequence[ChatMessage], *, schema: dict[str, Any] | None = None) -> Any:
        self.messages, self.schema = list(messages), schema
        raise Asked


@dataclass
class FirstStep:
    dump: str
    xml: str
    messages: list[ChatMessage]
    schema: dict[str, Any] | None


def first_step(settings_file: Path, dump: Path) -> FirstStep:
    """Our first call on ``dump`` with the task of ``settings_file``; ``ValueError`` if there was none."""
    xml = dump.read_bytes().decode("utf-8", "replace")
    model = FirstCall()
    with tempfile.TemporaryDirectory(prefix="ufo-mobile-prompt-bench-") as logs:
        settings = load_settings(settings_file, overrides={"logs": {"dir": logs}})
        try:
            asyncio.run(Session(settings, device=ScreenDriver(xml), model=model).run())
        except Asked:
            pass
    if model.messages is None:
        raise ValueError(f"{dump.name}: the run never asked the model")
    return FirstStep(dump.name, xml, model.messages, model.schema)
