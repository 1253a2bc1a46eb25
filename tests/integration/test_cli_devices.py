"""``devices``, ``sim`` and ``run --device`` from the command line, against the real adb server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.adb_server import free_port, server_answers
from ufo_mobile.sim import SimPhone
from ufo_mobile.sim.android.profile import get_profile
from ufo_mobile.sim.servers.adb.daemon import EmulatedAdbd

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def cli(adb_server: Any, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ufo_mobile", *args], capture_output=True, text=True,
                          timeout=timeout, env={**adb_server.env, "PYTHONPATH": str(ROOT)}, cwd=ROOT)


def wait_state(adb_server: Any, serial: str, state: str, timeout: float = 60) -> None:
    """Poll until the adb server reports ``state`` (the bound is a hang guard only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (serial, state) in {(d.serial, d.state) for d in adb_server.client().list()}:
            return
        time.sleep(0.1)
    raise AssertionError(f"{serial} never became {state}: {adb_server.client().list()}")


def test_devices_lists_the_phone(sim_device: Any, adb_server: Any) -> None:
    proc = cli(adb_server, "devices", "--adb-port", str(adb_server.port))
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()[:2]
    assert header.split() == ["SERIAL", "STATE", "MODEL", "OS", "SCREEN"]
    assert row.split()[:2] == [sim_device.serial, "device"]
    assert "UFO Sim Phone" in row and row.split()[-3:] == ["Android", "14", "1080x2400"]


def test_devices_explains_unauthorized_and_offline_phones(adb_server: Any) -> None:
    pending = EmulatedAdbd(SimPhone())
    pending.unauthorized()
    gone = EmulatedAdbd(SimPhone())
    client = adb_server.client()
    with pending.run_in_thread() as p, gone.run_in_thread() as g:
        try:
            client.connect(p.address, timeout=60)
            client.connect(g.address, timeout=60)
            wait_state(adb_server, p.address, "unauthorized")
            wait_state(adb_server, g.address, "device")
            gone.stop_in_thread()
            wait_state(adb_server, g.address, "offline")
            proc = cli(adb_server, "devices", "--adb-port", str(adb_server.port))
        finally:
            client.disconnect(p.address)
            client.disconnect(g.address)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"{p.address}: accept the 'Allow USB debugging' prompt on the phone" in out
    assert f"{g.address}: the phone stopped answering" in out


def test_devices_says_what_failed_when_the_adb_named_does_not_run(adb_server: Any) -> None:
    closed = free_port()
    env = {**adb_server.env, "ADBUTILS_ADB_PATH": "/nonexistent/adb", "ANDROID_ADB_SERVER_PORT": str(closed),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "ufo_mobile", "devices", "--adb-port", str(closed)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: [-] no adb server answers at 127.0.0.1:{closed}, and /nonexistent/adb "
                                  "(named by $ADBUTILS_ADB_PATH) cannot be run: ")
    assert "is adb installed?" not in proc.stderr and "Traceback" not in proc.stderr
    assert not server_answers(closed)


def test_devices_starts_the_bundled_adb_on_the_port_given(adb_server: Any, tmp_path: Path) -> None:
    """No adb on PATH: ``devices --adb-port N`` starts the adbutils wheel's own adb on N, lists, and
    leaves that server running (stopped here with ``adb -P N kill-server``)."""
    port = free_port()
    env = {**adb_server.env, "ANDROID_ADB_SERVER_PORT": str(free_port()), "PATH": str(tmp_path),
           "PYTHONPATH": str(ROOT)}
    env.pop("ADBUTILS_ADB_PATH", None)
    try:
        proc = subprocess.run([sys.executable, "-m", "ufo_mobile", "devices", "--adb-port", str(port)],
                              capture_output=True, text=True, timeout=90, env=env, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("no devices: ")
        assert proc.stderr.splitlines() == [
            f"started the adb server on 127.0.0.1:{port} with {adb_server.adb} (it keeps running; "
            f"'adb -P {port} kill-server' stops it)"]
        assert server_answers(port)
        again = subprocess.run([sys.executable, "-m", "ufo_mobile", "devices", "--adb-port", str(port)],
                               capture_output=True, text=True, timeout=90, env=env, cwd=ROOT)
        assert again.returncode == 0 and again.stderr == "", again.stderr  # answering: nothing started
    finally:
        subprocess.run([adb_server.adb, "-P", str(port), "kill-server"], env=env, capture_output=True, timeout=30,
                       check=False)
    wait_gone(port)


def wait_gone(port: int, timeout: float = 30) -> None:
    """Poll until nothing answers on ``port`` (the bound is a hang guard only)."""
    deadline = time.monotonic() + timeout
    while server_answers(port):
        if time.monotonic() > deadline:
            raise AssertionError(f"the adb server on {port} outlived kill-server")
        time.sleep(0.1)


def test_sim_command_serves_a_phone_until_ctrl_c(adb_server: Any) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ufo_mobile", "sim", "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**adb_server.env, "PYTHONPATH": str(ROOT)})
    serial = f"127.0.0.1:{port}"
    client = adb_server.client()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == f"simulated phone listening on {serial}; connect with: adb connect {serial}"
        client.connect(serial, timeout=60)
        wait_state(adb_server, serial, "device")
        assert client.device(serial).shell("getprop ro.product.model") == "UFO Sim Phone"
        result = adb_server.run("-s", serial, "shell", "echo", "hi")
        assert result.returncode == 0 and result.stdout.strip() == b"hi"
    finally:
        client.disconnect(serial)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "simulated phone stopped" in out


# the scripted demo numbers the app's window alone (see test_drivers.ONE_WINDOW_PIXEL)
@pytest.mark.parametrize(("driver", "sim_device"), [("adb", "pixel-14"),
                                                    ("u2", get_profile("pixel-14").replace(window_roots=False))],
                         indirect=["sim_device"])
def test_run_with_device_serial(driver: str, sim_device: Any, adb_server: Any, tmp_path: Path) -> None:
    proc = cli(adb_server, "run", "demo", "--device", sim_device.serial, "--driver", driver,
               "--log-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FINISH after 4 steps" in proc.stdout
    assert proc.stdout.splitlines()[0].endswith(  # the first line names the phone, its driver and the model
        f"  [direct · {driver} {sim_device.serial} · scripted model demo_wifi.yaml]"), proc.stdout
    assert sim_device.phone.state("com.android.settings")["wifi"] is True
    (run_dir,) = tmp_path.iterdir()
    settings = json.loads((run_dir / "run.json").read_text())
    assert settings["status"] == "FINISH"
