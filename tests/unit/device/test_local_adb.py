"""Starting the local adb server (ufo_mobile/core/device/local_adb.py): what is started, where, and
what the error says when it cannot be (the real bundled adb is started in
tests/integration/test_cli_devices.py)."""

from __future__ import annotations

import socket
import stat
import threading
from pathlib import Path

import pytest

from ufo_mobile.core.device.local_adb import AdbUnavailableError, ensure_server


def closed_port() -> int:
    """A port of 127.0.0.1 nobody listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fake_adb(tmp_path: Path, script: str) -> Path:
    """An ``adb`` that is a shell script writing its arguments to ``args`` and then running ``script``."""
    path = tmp_path / "adb"
    path.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "args"}\n{script}\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_server_that_answers_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb(tmp_path, "exit 1")))
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def answer() -> None:  # what an adb server says to host:version
            conn, _ = server.accept()
            with conn:
                conn.recv(16)
                conn.sendall(b"OKAY00040029")

        thread = threading.Thread(target=answer)
        thread.start()
        try:
            assert ensure_server("127.0.0.1", server.getsockname()[1]) is None
        finally:
            thread.join()
    assert not (tmp_path / "args").exists()


def test_a_port_where_something_else_listens_gets_a_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb(tmp_path, "echo 'cannot bind' >&2; exit 1")))
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def hang_up() -> None:  # takes the connection and closes it: no OKAY
            conn, _ = server.accept()
            conn.close()

        thread = threading.Thread(target=hang_up)
        thread.start()
        try:
            with pytest.raises(AdbUnavailableError, match=r"\(exit 1\): cannot bind$"):
                ensure_server("127.0.0.1", port, timeout=30)
        finally:
            thread.join()
    assert (tmp_path / "args").read_text().split() == ["-P", str(port), "start-server"]


def test_a_server_on_another_machine_is_never_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb(tmp_path, "exit 0")))
    port = closed_port()
    with pytest.raises(AdbUnavailableError, match=r"one on another machine is not started from here"):
        ensure_server("0.0.0.0", port)
    assert not (tmp_path / "args").exists()


def test_an_adb_that_cannot_be_run_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADBUTILS_ADB_PATH", "/nonexistent/adb")
    port = closed_port()
    with pytest.raises(AdbUnavailableError) as caught:
        ensure_server("127.0.0.1", port)
    assert str(caught.value).startswith(f"[-] no adb server answers at 127.0.0.1:{port}, and /nonexistent/adb "
                                        "(named by $ADBUTILS_ADB_PATH) cannot be run: ")
    assert "installed" not in str(caught.value)


def test_what_adb_said_when_it_did_not_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adb = fake_adb(tmp_path, "echo '* daemon not running' >&2\necho 'error: could not install smartsocket' >&2\n"
                             "exit 1")
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(adb))
    port = closed_port()
    with pytest.raises(AdbUnavailableError) as caught:
        ensure_server("127.0.0.1", port)
    assert str(caught.value) == (f"[-] no adb server answers at 127.0.0.1:{port}, and '{adb} -P {port} "
                                 "start-server' did not start one (exit 1): error: could not install smartsocket")


def test_an_adb_that_says_it_started_but_nothing_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adb = fake_adb(tmp_path, "exit 0")
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(adb))
    port = closed_port()
    with pytest.raises(AdbUnavailableError, match=r"did not start one \(exit 0\): it said nothing$"):
        ensure_server("127.0.0.1", port)


def test_the_start_is_bounded_in_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adb = fake_adb(tmp_path, "exec sleep 60")
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(adb))
    port = closed_port()
    with pytest.raises(AdbUnavailableError, match=r"did not finish within 0.2 s$"):
        ensure_server("127.0.0.1", port, timeout=0.2)
