"""Fixtures shared by the integration tests and the fault matrix.

* ``adb_server`` (session): a ``PrivateAdbServer`` (tests/adb_server.py): the adb binary
  shipped in the adbutils wheel on a free port of 127.0.0.1 with a temporary HOME. Attributes:
  ``port``, ``adb`` (path), ``env``, ``client()`` (an ``adbutils.AdbClient``), ``run(*args)``.
  It is stopped at the end of the session, and checked to be gone.

Signal dispositions: a process inherits an *ignored* signal across exec. A test run started in the
background by a script (SIGINT ignored) or under ``nohup`` (SIGHUP ignored) would hand that on to the
command lines the tests start, and the tests that send those signals would test nothing (or hang).
So the test process restores the default dispositions first; the tests that need a signal ignored
ignore it themselves, around the one process they start.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from tests.adb_server import PrivateAdbServer, server_answers
from ufo_mobile.errors import SimulatorError

for _signum, _default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL),
                          (signal.SIGHUP, signal.SIG_DFL)):
    if signal.getsignal(_signum) == signal.SIG_IGN:
        signal.signal(_signum, _default)


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


@pytest.fixture(autouse=True)
def _fresh_secret_environment() -> Iterator[None]:
    """A variable a test's run took out of the environment (``secret_env.take``) is not kept for the next
    test, which sets its own environment."""
    yield
    from ufo_mobile import secret_env

    secret_env.forget()


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own user config or ``UFO_MOBILE_*`` variables, nor asks their
    adb server about phones (ufo_mobile/settings/user.py, ufo_mobile/core/device/choice.py): the user
    config is a file that does not exist, and the lone-phone probe finds no adb server. Tests of
    those set their own (the commands they start inherit this environment)."""
    monkeypatch.setenv("UFO_MOBILE_CONFIG", str(tmp_path_factory.getbasetemp() / "no-user-config.yaml"))
    for name in ("UFO_MOBILE_PROVIDER", "UFO_MOBILE_MODEL", "UFO_MOBILE_BASE_URL", "UFO_MOBILE_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UFO_MOBILE_PHONE_PROBE", "off")
