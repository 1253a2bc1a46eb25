"""Fixtures shared by the integration tests and the fault matrix.

* ``adb_server`` (session): a ``PrivateAdbServer`` (ufo_mobile/sim/adb_server.py): the adb binary
  shipped in the adbutils wheel on a free port of 127.0.0.1 with a temporary HOME. Attributes:
  ``port``, ``adb`` (path), ``env``, ``client()`` (an ``adbutils.AdbClient``), ``run(*args)``.
  It is stopped at the end of the session, and checked to be gone.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ufo_mobile.errors import SimulatorError
from ufo_mobile.sim.adb_server import PrivateAdbServer, server_answers


@pytest.fixture(scope="session")
def adb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateAdbServer]:
    home = tmp_path_factory.mktemp("adb-home")
    try:
        server = PrivateAdbServer(home=home)
    except (SimulatorError, OSError) as exc:
        pytest.skip(f"the adb binary from the adbutils wheel cannot be used here: {exc}")
    try:
        server.start()
    except (SimulatorError, OSError) as exc:
        pytest.skip(f"the adb server did not start: {exc}")
    try:
        yield server
    finally:
        server.stop()
    assert not server.running, "the adb server outlived its fixture"
    assert not server_answers(server.port), f"something still answers on the adb server port {server.port}"
