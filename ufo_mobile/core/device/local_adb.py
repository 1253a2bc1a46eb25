"""The adb server on this machine: whether one answers on a port, and starting one there when none
does (``python -m ufo_mobile devices``).

The adb started is the one adbutils finds: ``$ADBUTILS_ADB_PATH``, else an ``adb`` on PATH, else the
one the adbutils wheel ships, so no separate install is needed. It is started as ``adb -P PORT
start-server``, bounded in time; without ``-a`` adb listens on the loopback only (127.0.0.1). A
server on another machine is never started from here.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from ufo_mobile.errors import DeviceError

#: How long ``adb start-server`` may take (it scans for phones before it answers).
START_TIMEOUT_SECONDS = 20.0
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class AdbUnavailableError(DeviceError):
    """The adb server cannot be reached or started."""


def server_answers(host: str, port: int, *, timeout: float = 2.0) -> bool:
    """Blocking: True when an adb server answers ``host:version`` at ``host:port`` (a plain socket, so
    nothing starts a server as a side effect)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"000chost:version")
            return sock.recv(4) == b"OKAY"
    except OSError:
        return False


def adb_binary() -> str:
    """The adb adbutils would run: ``$ADBUTILS_ADB_PATH``, an ``adb`` on PATH, or its own.

    Raises:
        AdbUnavailableError: there is none that runs (the wheel ships none for this platform).
    """
    import adbutils

    try:
        return str(adbutils.adb_path())
    except adbutils.AdbError:
        bundled = Path(adbutils.__file__).parent / "binaries" / ("adb.exe" if os.name == "nt" else "adb")
        if bundled.is_file():
            why = f"the adb in the adbutils wheel ({bundled}) does not run here (is it executable?)"
        else:
            why = ("no adb: none on PATH and the adbutils wheel ships none for this platform; "
                   "install Android platform-tools")
        raise AdbUnavailableError(why, serial="-") from None


def ensure_server(host: str, port: int, *, timeout: float = START_TIMEOUT_SECONDS) -> str | None:
    """Blocking: make sure an adb server answers at ``host:port``, starting one on this machine when
    none does. The adb this call started (it keeps running, as ``adb devices`` leaves it), or None
    when one was answering already.

    Raises:
        AdbUnavailableError: none answers and none could be started; the message says what failed.
    """
    if server_answers(host, port):
        return None
    where = f"{host}:{port}"
    if host not in LOOPBACK:
        raise AdbUnavailableError(f"no adb server answers at {where} (one on another machine is not started "
                                  "from here)", serial="-")
    adb = adb_binary()
    command = f"{adb} -P {port} start-server"
    named = " (named by $ADBUTILS_ADB_PATH)" if os.environ.get("ADBUTILS_ADB_PATH") == adb else ""
    try:
        proc = subprocess.run([adb, "-P", str(port), "start-server"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise AdbUnavailableError(f"no adb server answers at {where}, and '{command}' did not finish within "
                                  f"{timeout:g} s", serial="-") from None
    except OSError as exc:
        raise AdbUnavailableError(f"no adb server answers at {where}, and {adb}{named} cannot be run: "
                                  f"{exc.strerror or exc}", serial="-") from None
    if proc.returncode != 0 or not server_answers(host, port):
        said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
        raise AdbUnavailableError(f"no adb server answers at {where}, and '{command}' did not start one "
                                  f"(exit {proc.returncode}): {said[-1] if said else 'it said nothing'}",
                                  serial="-")
    return adb
