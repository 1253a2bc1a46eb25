"""A real headless Chromium for tests, driven over the Chrome DevTools Protocol (CDP).

``Chromium`` starts Debian's ``chromium`` (or another Chrome found on PATH) headless, in its own
process group, with a temporary profile and ``--remote-debugging-port=0``: it picks a free port on
127.0.0.1 and writes it to ``<profile>/DevToolsActivePort``, which is read back (a condition waited
for; the bound is a hang guard). ``stop`` kills the whole group and reaps it.

``Cdp`` is a minimal CDP client over ``websockets``: ``call`` sends a command and waits for its
answer, ``event`` waits for an event; ``Page`` wraps one tab (a flat session) with the few things
the report tests need: open a URL and wait for its load event, evaluate JavaScript (awaiting
promises), and capture a PNG of the page or of a part of it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HANG_GUARD = 120.0  # seconds; reached only when something hangs
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """One headless browser process (and its children, in their own process group)."""

    def __init__(self, binary: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
                # a tab left in the background keeps drawing and running its timers (a loaded machine
                # must not leave a screenshot waiting for a frame that is never made)
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows",
                "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)

    def endpoint(self) -> str:
        """The browser's WebSocket URL, once Chromium has written it."""
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + HANG_GUARD
        while True:
            lines = port_file.read_text().split("\n") if port_file.is_file() else []
            if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].strip():
                return f"ws://127.0.0.1:{int(lines[0])}{lines[1].strip()}"
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"chromium exited with {self.proc.returncode}: {err[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError("chromium never wrote DevToolsActivePort")
            time.sleep(0.02)

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=HANG_GUARD)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class Cdp:
    """Commands and events over one browser WebSocket connection."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self._next = 0
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            message = json.loads(raw)
            if "id" in message and message["id"] in self._answers:
                self._answers.pop(message["id"]).set_result(message)
            elif "method" in message:
                self._events.append(message)
                self._arrived.set()

    async def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[self._next] = future
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.ws.send(json.dumps(message))
        async with asyncio.timeout(HANG_GUARD):
            answer = await future
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def seen(self, method: str, session: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self._events if e["method"] == method and (session is None or e.get("sessionId") == session)]

    async def event(self, method: str, session: str | None = None,
                    where: Callable[[dict[str, Any]], bool] = lambda e: True) -> dict[str, Any]:
        """Wait for an event (also one that came already); the bound is a hang guard."""
        async with asyncio.timeout(HANG_GUARD):
            while True:
                for event in self.seen(method, session):
                    if where(event):
                        return event
                self._arrived.clear()
                await self._arrived.wait()

    async def close(self) -> None:
        self._reader.cancel()
        await self.ws.close()


class Page:
    """One tab, attached as a flat session."""

    def __init__(self, cdp: Cdp, session: str) -> None:
        self.cdp = cdp
        self.session = session

    @classmethod
    async def open(cls, cdp: Cdp, width: int = 1280, height: int = 900) -> Page:
        target = await cdp.call("Target.createTarget", {"url": "about:blank"})
        attached = await cdp.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        page = cls(cdp, attached["sessionId"])
        for domain in ("Page", "Runtime", "Network"):
            await page.call(f"{domain}.enable")
        await page.call("Emulation.setDeviceMetricsOverride",
                        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        return page

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.cdp.call(method, params, self.session)

    async def goto(self, url: str) -> None:
        """Navigate and wait for the page's load event (images and fonts of the page included)."""
        answer = await self.call("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise RuntimeError(f"cannot open {url}: {answer['errorText']}")
        await self.cdp.event("Page.loadEventFired", self.session)

    async def js(self, expression: str) -> Any:
        """The value of ``expression`` (promises awaited), or a RuntimeError with the exception."""
        answer = await self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                      "returnByValue": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression[:200]}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    async def screenshot(self, clip: dict[str, float] | None = None) -> bytes:
        """A PNG of ``clip`` (page coordinates), or of the whole page."""
        if clip is None:
            metrics = await self.call("Page.getLayoutMetrics")
            size = metrics["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
        answer = await self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                           "clip": {**clip, "scale": 1}})
        return base64.b64decode(answer["data"])

    def requests(self) -> list[str]:
        """Every URL the page asked for (``Network.requestWillBeSent``)."""
        return [e["params"]["request"]["url"] for e in self.cdp.seen("Network.requestWillBeSent", self.session)]
