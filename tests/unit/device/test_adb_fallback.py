"""``AdbDriver``'s fallback and its connections, with the phone's answers scripted (``ScriptedAdb``):
the fallback's dump started at an idle refusal, a kept uiautomator2 server stopped by the next dump's
own command, and connections to the adb server that send at once."""

from __future__ import annotations

import asyncio
import socket
from types import SimpleNamespace

import pytest

from tests.unit.device.test_adb_driver import DUMP, IDLE, ScriptedAdb, dumping
from ufo_mobile.core.device.adb_base import AdbServerClient
from ufo_mobile.core.device.adb_dump import STOP_U2
from ufo_mobile.errors import DumpUnavailableError


async def test_an_idle_refusal_starts_the_fallback_dump_before_the_caller_asks_for_it() -> None:
    driver = ScriptedAdb({})
    driver.answers["uiautomator dump"] = dumping(driver, [IDLE])
    with pytest.raises(DumpUnavailableError):
        await driver.get_ui_tree()
    await asyncio.sleep(0)  # the caller waits for its screenshot: the fallback's dump runs meanwhile
    assert driver.u2_dumps == [DUMP.format(text="u2 1")]
    assert await driver.fallback_ui_tree() == DUMP.format(text="u2 1") and len(driver.u2_dumps) == 1
    with pytest.raises(DumpUnavailableError):  # predicted: nothing run on the phone, the fallback started
        await driver.get_ui_tree()
    await driver.tap(540, 40)  # the screen was touched since: that dump is not this screen's
    assert await driver.fallback_ui_tree() == DUMP.format(text="u2 3") and len(driver.dumps()) == 1
    with pytest.raises(DumpUnavailableError):
        await driver.dump_ui_tree()  # for callers that never ask for the fallback: nothing started
    assert len(driver.u2_dumps) == 3


async def test_a_kept_fallback_server_is_stopped_in_the_next_dumps_own_command() -> None:
    released: list[bool] = []
    driver = ScriptedAdb({})
    driver.answers["uiautomator dump"] = driver.answers[STOP_U2] = dumping(driver, ["ok", "ok"])
    driver._warm_u2 = SimpleNamespace(stop_uiautomator=lambda wait: released.append(wait))
    assert await driver.get_ui_tree() == DUMP.format(text="x")
    assert driver.commands == driver.dumps() and driver.commands[0].startswith(f"{STOP_U2}; uiautomator dump ")
    assert released == [False] and driver._warm_u2 is None
    assert await driver.get_ui_tree() == DUMP.format(text="x")
    assert driver.commands[1].startswith("uiautomator dump ")  # stopped once


def test_connections_to_the_adb_server_send_at_once() -> None:
    """Nagle's algorithm off (``TCP_NODELAY``): uiautomator2 writes a request's headers and body
    separately, and the body waited for the server's delayed acknowledgement of the headers."""
    with socket.create_server(("127.0.0.1", 0)) as listener:  # stands in for the adb server
        connection = AdbServerClient(port=listener.getsockname()[1]).make_connection(timeout=5)
        try:
            assert connection.conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        finally:
            connection.close()
