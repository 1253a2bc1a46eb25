"""Never a silent simulator (ufo_mobile/core/device/choice.py): with no device named by the user and
one phone on a running adb server, a terminal asks, elsewhere a note says how to choose, and
``device.choose: phone`` uses it. The probe is a fake here, or the private adb server of
tests/adb_server.py with the simulated phone behind an emulated adbd; never the machine's adb."""

from __future__ import annotations

import io
import json
import os
import pty
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adb_server import PrivateAdbServer
from ufo_mobile.cli import build_parser, main
from ufo_mobile.cli.run_cmd import run_settings
from ufo_mobile.core.device import choice
from ufo_mobile.core.device.choice import Phone, adb_phones, choose_device
from ufo_mobile.settings import Settings, load_goal
from ufo_mobile.shipped import TASKS_DIR

DEMO_SCRIPT = TASKS_DIR / "scripts" / "demo_wifi.yaml"
ONE = [Phone("R58M41", "Galaxy S21")]


def settings(**device: object) -> Settings:
    return Settings.model_validate({"task": {"text": "t"}, "model": {"kind": "openai"}, "device": device})


class FakeProbe:
    def __init__(self, phones: list[Phone] | None) -> None:
        self.phones = phones
        self.asked: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[Phone] | None:
        self.asked.append((host, port))
        return self.phones


def test_a_named_device_or_no_phone_changes_nothing() -> None:
    probe = FakeProbe(ONE)
    assert choose_device(settings(), named=True, probe=probe).settings == settings()
    assert choose_device(settings(kind="adb"), named=False, probe=probe).settings == settings(kind="adb")
    assert choose_device(settings(choose="sim"), named=False, probe=probe).note is None
    assert probe.asked == []  # not even looked at
    for nothing in (None, []):
        assert choose_device(settings(), named=False, probe=FakeProbe(nothing)) == choice.Choice(settings())


def test_one_phone_off_a_terminal_is_a_note() -> None:
    probe = FakeProbe(ONE)
    made = choose_device(settings(adb_port=5999), named=False, probe=probe, where="~/.config/ufo_mobile/config.yaml")
    assert made.settings.device.kind == "sim" and probe.asked == [("127.0.0.1", 5999)]
    assert made.note == ("phone R58M41 (Galaxy S21) is connected, but the simulated phone is used: choose with "
                         "--device R58M41 or --device sim, or 'device: {choose: phone}' in "
                         "~/.config/ufo_mobile/config.yaml")


@pytest.mark.parametrize(("answer", "kind", "serial"), [(True, "adb", "R58M41"), (False, "sim", None)])
def test_one_phone_at_a_terminal_is_a_question(answer: bool, kind: str, serial: str | None) -> None:
    questions: list[str] = []

    def ask(question: str) -> bool:
        questions.append(question)
        return answer

    made = choose_device(settings(), named=False, probe=FakeProbe(ONE), ask=ask)
    assert questions == ["use phone R58M41 (Galaxy S21) instead of the simulated phone? [y/N] "]
    assert (made.settings.device.kind, made.settings.device.serial, made.note) == (kind, serial, None)


def test_choose_phone_uses_it_and_several_are_never_picked() -> None:
    made = choose_device(settings(choose="phone"), named=False, probe=FakeProbe(ONE))
    assert (made.settings.device.kind, made.settings.device.serial) == ("adb", "R58M41")
    assert made.note == "using phone R58M41 (Galaxy S21), the only phone on the adb server (device.choose: phone)"
    two = [*ONE, Phone("emulator-5554")]
    for chosen in ("ask", "phone"):
        made = choose_device(settings(choose=chosen), named=False, probe=FakeProbe(two), ask=lambda q: True)
        assert made.settings.device.kind == "sim"
        assert made.note == ("2 phones are on the adb server (R58M41 (Galaxy S21), emulator-5554); the simulated "
                             "phone is used: choose one with --device SERIAL (or --device sim)")


def test_the_default_probe_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    looked: list[int] = []
    def fake(host: str, port: int) -> list[Phone]:
        looked.append(port)
        return ONE

    monkeypatch.setattr(choice, "adb_phones", fake)
    assert choose_device(settings(), named=False).note is None and looked == []  # the suite's fixture: off
    monkeypatch.delenv("UFO_MOBILE_PHONE_PROBE")
    monkeypatch.delenv("ANDROID_ADB_SERVER_PORT", raising=False)
    assert choose_device(settings(), named=False).note is not None and looked == [5037]  # the fake, not adb


def test_no_adb_server_is_none() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: nobody answers
        assert adb_phones("127.0.0.1", port, timeout=1.0) is None


@pytest.fixture
def phone_on_adb(adb_server: PrivateAdbServer) -> Iterator[str]:
    """The simulated phone behind an emulated adbd, connected to the private adb server."""
    from ufo_mobile.sim import SimPhone
    from ufo_mobile.sim.servers.adb.daemon import EmulatedAdbd

    adbd = EmulatedAdbd(SimPhone())
    runner = adbd.run_in_thread()
    client = adb_server.client()
    try:
        assert "connected" in client.connect(adbd.address, timeout=60)
        client.wait_for(adbd.address, state="device", timeout=60)
        yield adbd.address
    finally:
        client.disconnect(adbd.address)
        runner.stop()


def test_the_probe_asks_a_running_adb_server(adb_server: PrivateAdbServer, phone_on_adb: str) -> None:
    phones = adb_phones("127.0.0.1", adb_server.port)
    assert phones is not None and [p.serial for p in phones] == [phone_on_adb]
    assert phones[0].model  # from the connect banner, as adb lists it ("model:NAME")


def test_run_off_a_terminal_notes_the_phone_and_uses_the_simulator(
        adb_server: PrivateAdbServer, phone_on_adb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("UFO_MOBILE_PHONE_PROBE")
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    user = tmp_path / "config.yaml"
    user.write_text(f"model: {{kind: scripted, script: {DEMO_SCRIPT}}}\n")
    monkeypatch.setenv("UFO_MOBILE_CONFIG", str(user))
    code = main(["run", "Turn on Wi-Fi", "--log-dir", str(tmp_path / "logs"), "--quiet"], out=io.StringIO())
    assert code == 0
    assert f"note: phone {phone_on_adb}" in capsys.readouterr().err
    args = build_parser().parse_args(["run", "Turn on Wi-Fi"])
    asked: list[str] = []
    chosen = run_settings(args, ask=lambda question: asked.append(question) or True)
    assert asked and (chosen.device.kind, chosen.device.serial) == ("adb", phone_on_adb)
    assert run_settings(build_parser().parse_args(["run", "demo"]), ask=asked.append).device.kind == "sim"
    assert len(asked) == 1  # the demo names the simulated phone: never asks
    user.write_text(f"model: {{kind: scripted, script: {DEMO_SCRIPT}}}\ndevice: {{choose: phone}}\n")
    assert load_goal("g").settings.device.choose == "phone"
    assert run_settings(args).device.serial == phone_on_adb


def test_at_a_terminal_run_asks_on_its_stdin(adb_server: PrivateAdbServer, phone_on_adb: str,
                                             tmp_path: Path) -> None:
    user = tmp_path / "config.yaml"
    user.write_text(f"model: {{kind: scripted, script: {DEMO_SCRIPT}}}\n")
    env = {**os.environ, "UFO_MOBILE_CONFIG": str(user), "ANDROID_ADB_SERVER_PORT": str(adb_server.port),
           "HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("UFO_MOBILE_PHONE_PROBE")
    terminal, stdin = pty.openpty()
    try:
        os.write(terminal, b"y\n")  # the answer waits in the terminal until run reads it
        done = subprocess.run([sys.executable, "-m", "ufo_mobile", "run", "Turn on Wi-Fi", "--log-dir", "logs",
                               "--quiet"], stdin=stdin, capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=300, check=False)
    finally:
        os.close(terminal)
        os.close(stdin)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"use phone {phone_on_adb} (")
    (run_json,) = (tmp_path / "logs").glob("*/run.json")
    device = json.loads(run_json.read_text())["settings"]["device"]
    assert (device["kind"], device["serial"]) == ("adb", phone_on_adb)
