"""A private adb server for tests and benchmarks: the real adb binary, nobody else's server.

The adbutils wheel ships an ``adb`` binary. ``PrivateAdbServer`` runs it as a foreground server
(``adb -P PORT nodaemon server``) on a free port of 127.0.0.1 with a temporary HOME (its adbkey
goes there) and ``ADB_EMU=0`` (no scan of the emulator ports), and stops it again, by its own pid
if ``kill-server`` does not do it. A user's own server on 5037 is never touched.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from ufo_mobile.errors import SimulatorError


def bundled_adb() -> str:
    """The adb binary inside the adbutils wheel, made executable if needed."""
    import adbutils

    path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not path.is_file():
        raise SimulatorError(f"the adbutils wheel has no adb binary at {path}")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_answers(port: int) -> bool:
    """True once an adb server answers ``host:version`` on ``port`` (a plain socket, so adbutils
    never gets the chance to start a server of its own)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"000chost:version")
            return sock.recv(4) == b"OKAY"
    except OSError:
        return False


class PrivateAdbServer:
    """``with PrivateAdbServer() as server: server.client().connect(...)``."""

    def __init__(self, *, port: int | None = None, home: Path | None = None, adb: str | None = None) -> None:
        self.port = port or free_port()
        self.adb = adb or bundled_adb()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if home is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="ufo-adb-home-")
            home = Path(self._tmp.name)
        self.home = home
        self.env = {**os.environ, "HOME": str(home), "ADB_EMU": "0", "ADB_MDNS": "0", "ADB_LIBUSB": "0",
                    "ANDROID_ADB_SERVER_PORT": str(self.port)}
        self.env.pop("ANDROID_SERIAL", None)
        self.log_path = home / "adb-server.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 15.0) -> PrivateAdbServer:
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen([self.adb, "-P", str(self.port), "nodaemon", "server"], env=self.env,
                                          stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not server_answers(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                code = self._proc.poll()
                self.stop()
                tail = self.log_path.read_text(errors="replace")[-500:]
                raise SimulatorError(f"the adb server did not start on port {self.port} (rc={code}): {tail}")
            time.sleep(0.05)
        return self

    def client(self, socket_timeout: float = 30.0) -> Any:
        import adbutils

        return adbutils.AdbClient(host="127.0.0.1", port=self.port, socket_timeout=socket_timeout)

    def run(self, *args: str, timeout: float = 30.0, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """``adb -P PORT ARGS…`` against this server."""
        return subprocess.run([self.adb, "-P", str(self.port), *args], env=self.env, capture_output=True,
                              timeout=timeout, input=stdin or b"", check=False)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                self.run("kill-server", timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()  # the server we started, by its own pid
                proc.wait(timeout=5)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> PrivateAdbServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
