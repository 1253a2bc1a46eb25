"""Test doubles written for this project: a driver that serves a fixed screen and records calls, a step
timer the test fires itself, and a model that says when it starts waiting."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import Any, ClassVar

from PIL import Image

from ufo_mobile.core.device.base import AppInfo, CurrentApp, DeviceDriver
from ufo_mobile.core.llm.scripted import Script, ScriptedModel
from ufo_mobile.errors import DeviceCommandError

SCREEN_XML = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.app"
 content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false"
 focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">
<node index="0" text="Wi-Fi" resource-id="com.example.app:id/wifi" class="android.widget.Button"
 package="com.example.app" content-desc="" checkable="false" checked="false" clickable="true" enabled="true"
 focusable="true" focused="false" scrollable="false" long-clickable="true" password="false" selected="false"
 bounds="[0,200][1080,400]" />
<node index="1" text="" resource-id="com.example.app:id/name" class="android.widget.EditText"
 package="com.example.app" content-desc="" checkable="false" checked="false" clickable="true" enabled="true"
 focusable="true" focused="false" scrollable="false" long-clickable="true" password="false" selected="false"
 bounds="[0,400][1080,600]" />
<node index="2" text="" resource-id="com.example.app:id/list" class="androidx.recyclerview.widget.RecyclerView"
 package="com.example.app" content-desc="" checkable="false" checked="false" clickable="false" enabled="true"
 focusable="true" focused="false" scrollable="true" long-clickable="false" password="false" selected="false"
 bounds="[0,600][1080,2400]" />
</node>
</hierarchy>"""


def blank_png(width: int = 1080, height: int = 2400) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buf, format="PNG")
    return buf.getvalue()


class FakeDriver(DeviceDriver):
    """Serves ``xml`` and a blank screenshot; records every action call as ``(name, args)``."""

    supported: ClassVar[frozenset[str]] = frozenset({
        "connect", "ensure_connected", "tap", "swipe", "input_text", "press_key", "start_app",
        "get_apps", "screenshot", "get_ui_tree", "current_app", "screen_size",
    })

    def __init__(self, xml: str = SCREEN_XML, *, serial: str = "fake-1") -> None:
        self.serial = serial
        self.xml = xml
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.dumps = 0
        self._png = blank_png()

    async def connect(self) -> None:
        return None

    async def tap(self, x: int, y: int) -> None:
        self.calls.append(("tap", (x, y)))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.calls.append(("swipe", (x1, y1, x2, y2, duration_ms)))

    async def input_text(self, text: str, clear: bool = False) -> None:
        self.calls.append(("input_text", (text, clear)))

    async def press_key(self, key: str) -> None:
        self.calls.append(("press_key", (key,)))

    async def start_app(self, package: str, activity: str | None = None) -> None:
        if package == "com.missing":
            raise DeviceCommandError("no such package", serial=self.serial)
        self.calls.append(("start_app", (package,)))

    async def get_apps(self) -> list[AppInfo]:
        return [AppInfo("com.android.settings", "Settings"), AppInfo("com.missing", "Ghost")]

    async def screenshot(self) -> bytes:
        return self._png

    async def get_ui_tree(self) -> str:
        self.dumps += 1
        return self.xml

    async def current_app(self) -> CurrentApp:
        return CurrentApp("com.example.app")

    async def screen_size(self) -> tuple[int, int]:
        return (1080, 2400)


class ManualTimer:
    """A step timer the test fires itself: ``fire()`` runs every callback still armed."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Callable[[], object], list[bool]]] = []

    def __call__(self, seconds: float, callback: Callable[[], object]) -> Any:
        cancelled = [False]
        self.armed.append((seconds, callback, cancelled))

        class Handle:
            def cancel(self) -> None:
                cancelled[0] = True

        return Handle()

    def fire(self) -> None:
        for _, callback, cancelled in self.armed:
            if not cancelled[0]:
                callback()


class WaitsForever(ScriptedModel):
    """Answers from the script until it runs out, then waits until cancelled; says when it waits."""

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(Script(replies=replies))
        self.waiting = asyncio.Event()

    async def complete(self, messages: Any, *, schema: Any = None) -> Any:
        if self._next < len(self.script.replies):
            return await super().complete(messages, schema=schema)
        self.waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")
