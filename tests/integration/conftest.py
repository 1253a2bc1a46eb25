"""Fixtures for integration tests: a private real adb server and the simulated phone behind an
emulated adbd, connected to it like a phone over Wi-Fi.

* ``adb_server`` (session, from tests/conftest.py): the private adb server.
* ``sim_device`` (function): a fresh ``SimPhone`` and ``EmulatedAdbd`` connected to that server.
  Attributes: ``serial``, ``phone``, ``adbd``, ``client``, ``device`` (``adbutils.AdbDevice``).
  The device profile is the emulated adbd's default (``pixel-14``: a realistic phone) unless the
  test asks for another one, by name or as a ``RealismProfile``:
  ``@pytest.mark.parametrize("sim_device", ["kind"], indirect=True)``.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import adbutils
import pytest
import uiautomator2 as u2

from tests.adb_server import PrivateAdbServer
from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.android.profile import RealismProfile
from ufo_mobile.sim.servers.adb.daemon import AdbdThread, EmulatedAdbd

DEVICE_ONLINE_TIMEOUT = 60.0  # a hang guard: a loaded machine may take seconds


@dataclass
class SimDevice:
    serial: str
    phone: SimPhone
    adbd: EmulatedAdbd
    runner: AdbdThread
    client: adbutils.AdbClient
    device: adbutils.AdbDevice


@pytest.fixture
def sim_device(adb_server: PrivateAdbServer, request: pytest.FixtureRequest) -> Iterator[SimDevice]:
    profile: str | RealismProfile | None = getattr(request, "param", None)
    phone = SimPhone()
    adbd = EmulatedAdbd(phone, profile=profile)
    runner = adbd.run_in_thread()
    serial = adbd.address
    client = adb_server.client()
    try:
        answer = client.connect(serial, timeout=DEVICE_ONLINE_TIMEOUT)
        if "connected" not in answer:
            raise RuntimeError(f"adb connect {serial}: {answer}")
        client.wait_for(serial, state="device", timeout=DEVICE_ONLINE_TIMEOUT)
        yield SimDevice(serial, phone, adbd, runner, client, client.device(serial))
    finally:
        try:
            client.disconnect(serial)
        finally:
            runner.stop()
            _collect_library_leaks()


def _collect_library_leaks() -> None:
    """adbutils (on a refused or offline call) and uiautomator2 (its app_process stream) leave
    sockets for the garbage collector; collect them here, where their ResourceWarning says nothing
    about the test, instead of failing whichever later test the collector happens to run in."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture
def u2_device(sim_device: SimDevice) -> Iterator[Any]:
    """uiautomator2 connected to ``sim_device`` (its server stopped afterwards)."""
    device = u2.connect(sim_device.device)
    try:
        yield device
    finally:
        device.stop_uiautomator()
