"""The emulated servers stay responsive while a screen takes long to lay out: the dump (and input,
which hit-tests the screen) runs off the server's event loop, so other streams are still served."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.conftest import SimDevice

pytestmark = pytest.mark.integration
KIND = pytest.mark.parametrize("sim_device", ["kind"], indirect=True)
HANG_GUARD = 60.0  # seconds; only reached when the server is stuck


def _slow_dumps(sim: SimDevice, monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Every dump of the phone waits (as a huge screen would) until ``release`` is set; ``started``
    is set once a dump is under way."""
    started, release = threading.Event(), threading.Event()
    dump = sim.phone.dump_hierarchy

    def slow() -> str:
        started.set()
        assert release.wait(HANG_GUARD)
        return dump()

    monkeypatch.setattr(sim.phone, "dump_hierarchy", slow)
    return started, release


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    return thread, result


@KIND
def test_adb_shell_answers_while_a_dump_is_busy(sim_device: SimDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = _slow_dumps(sim_device, monkeypatch)
    d = sim_device.device
    thread, result = _in_thread(lambda: d.shell("uiautomator dump /dev/tty", timeout=HANG_GUARD))
    assert started.wait(HANG_GUARD)
    assert d.shell("echo still here", timeout=HANG_GUARD) == "still here"  # the dump has not finished
    assert not result
    release.set()
    thread.join(HANG_GUARD)
    assert result and result[0].startswith("<?xml") and "UI hierchary dumped to: /dev/tty" in result[0]


@KIND
def test_uiautomator2_and_adb_answer_while_a_dump_is_busy(sim_device: SimDevice, u2_device: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert u2_device.info["currentPackageName"]  # the server is up before the dump starts
    started, release = _slow_dumps(sim_device, monkeypatch)
    thread, result = _in_thread(u2_device.dump_hierarchy)
    assert started.wait(HANG_GUARD)
    assert sim_device.device.shell("echo still here", timeout=HANG_GUARD) == "still here"
    assert u2_device.info["currentPackageName"] == sim_device.phone.current_app().package  # another request
    assert not result
    release.set()
    thread.join(HANG_GUARD)
    assert result and result[0].startswith("<?xml")
