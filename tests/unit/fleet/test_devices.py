"""``--devices``: the spec grammar, and resolving specs against (fake) adb servers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ufo_mobile.errors import ConfigError
from ufo_mobile.fleet.devices import AdbPool, Phone, Source, parse_devices, resolve_blocking, unresolved


def test_each_kind_of_item_parses() -> None:
    assert parse_devices("sim:4") == [Source("sim", count=4)]
    assert parse_devices("sim") == [Source("sim", count=1)]
    assert parse_devices("R58M41ABCDE, emulator-5554") == [Source("serial", serial="R58M41ABCDE"),
                                                           Source("serial", serial="emulator-5554")]
    assert parse_devices("192.168.1.7:5555") == [Source("tcp", serial="192.168.1.7:5555", host="192.168.1.7",
                                                        port=5555)]
    assert parse_devices("lab-host.example:5555") == [Source("tcp", serial="lab-host.example:5555",
                                                             host="lab-host.example", port=5555)]
    assert parse_devices("R58M41@10.0.0.2:5037") == [Source("remote", serial="R58M41", host="10.0.0.2", port=5037)]
    assert parse_devices("@10.0.0.2:5037") == [Source("server", host="10.0.0.2", port=5037)]
    assert parse_devices("@") == [Source("server")]
    assert parse_devices("[::1]:5555")[0].host == "[::1]"
    assert parse_devices("wda:http://127.0.0.1:8100/") == [Source("wda", serial="http://127.0.0.1:8100")]


def test_items_mix() -> None:
    kinds = [s.kind for s in parse_devices("sim:2,R58M41,127.0.0.1:5555,X@h:5037,@h2:5037")]
    assert kinds == ["sim", "serial", "tcp", "remote", "server"]


@pytest.mark.parametrize(("spec", "words"), [
    ("sim:0", "1-256"),
    ("sim:x", "1-256"),
    ("sim:999", "1-256"),
    ("", "empty item"),
    ("sim:2,,R58", "empty item"),
    ("host:99999", "not a port"),
    ("host:", "not a port"),
    ("R58 M41", "not a device serial"),
    ("bad\x1b[2Jserial", "not a device serial"),
    ("@host", "a host and a port"),
    ("x@:5037", "a host and a port"),
    ("-bad-:5555", "not a host name"),
    ("R58,R58", "named twice"),
    ("sim:2,sim:3", "once, as sim:N"),
    ("wda:127.0.0.1:8100", "wda:http://HOST:PORT"),
    ("wda:ftp://h:1", "wda:http://HOST:PORT"),
    ("wda:http://h", "a host and a port"),
    ("wda:http://h:8100,wda:http://h:8100", "named twice"),
])
def test_a_bad_spec_is_one_line_naming_devices(spec: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_devices(spec)
    message = str(info.value)
    assert message.startswith("--devices: ") and words in message, message
    assert "\n" not in message and "\x1b" not in message


def test_phone_names_resources_and_device_settings() -> None:
    sim = Phone("sim", "sim-2")
    assert (sim.name, sim.resource) == ("sim-2", "phone:sim-2")
    assert sim.device_overrides("adb", None) == {"kind": "sim"}
    local = Phone("adb", "R58M41", adb_port=5038)
    assert local.name == "R58M41"
    assert local.device_overrides("sim", None) == {"kind": "adb", "serial": "R58M41", "adb_host": "127.0.0.1",
                                                   "adb_port": 5038}
    assert local.device_overrides("u2", None)["kind"] == "u2"  # the task's driver, for a real phone
    assert local.device_overrides("u2", "adb")["kind"] == "adb"  # --driver wins
    iphone = Phone("wda", "http://127.0.0.1:8100")
    assert (iphone.name, iphone.resource) == ("wda:http://127.0.0.1:8100", "phone:wda:http://127.0.0.1:8100")
    assert iphone.device_overrides("adb", "u2") == {"kind": "wda", "serial": "http://127.0.0.1:8100"}
    remote = Phone("adb", "R58M41", "10.0.0.2", 5037, remote=True)
    assert (remote.name, remote.resource) == ("R58M41@10.0.0.2:5037", "phone:R58M41@10.0.0.2:5037")


@dataclass
class Info:
    serial: str
    state: str


@dataclass
class FakeClient:
    host: str
    port: int | None
    devices: dict[str, str] = field(default_factory=dict)
    connect_answer: str = "connected to {}"
    connected: list[str] = field(default_factory=list)

    def list(self) -> list[Info]:
        return [Info(s, st) for s, st in self.devices.items()]

    def connect(self, address: str, timeout: float) -> str:
        answer = self.connect_answer.format(address)
        if answer.startswith("connected"):
            self.devices[address] = "device"
            self.connected.append(address)
        return answer

    def wait_for(self, serial: str, state: str, timeout: float) -> None:
        assert self.devices.get(serial) == state


class FakeAdb(AdbPool):
    def __init__(self, servers: dict[tuple[str, int | None], FakeClient]) -> None:
        super().__init__(None, 5.0)
        self.servers = servers

    def client(self, host: str = "127.0.0.1", port: int | None = None) -> Any:
        return self.servers[(host, port)]


def test_resolve_checks_and_expands_each_source() -> None:
    local = FakeClient("127.0.0.1", 5037, {"R58M41": "device", "emu-1": "device", "gone-1": "offline"})
    remote = FakeClient("10.0.0.2", 5037, {"A1": "device", "A2": "device", "A3": "unauthorized"})
    adb = FakeAdb({("127.0.0.1", None): local, ("10.0.0.2", 5037): remote})
    phones = resolve_blocking(parse_devices("sim:2,R58M41,127.0.0.1:5555,@10.0.0.2:5037"), adb)
    assert [p.name for p in phones] == ["sim-1", "sim-2", "R58M41", "127.0.0.1:5555", "A1@10.0.0.2:5037",
                                        "A2@10.0.0.2:5037"]
    assert local.connected == ["127.0.0.1:5555"]  # adb connect, as the command does
    assert [p.name for p in resolve_blocking(parse_devices("@"), adb)] == ["127.0.0.1:5555", "R58M41", "emu-1"]


@pytest.mark.parametrize(("spec", "words"), [
    ("gone-1", "the phone is offline on the adb server at 127.0.0.1:5037"),
    ("nope", "the phone is not listed by the adb server"),
    ("A3@10.0.0.2:5037", "is unauthorized on the adb server at 10.0.0.2:5037"),
    ("@10.0.0.9:5037", "no phone is ready"),
])
def test_resolve_says_which_phone_is_not_there(spec: str, words: str) -> None:
    local = FakeClient("127.0.0.1", 5037, {"gone-1": "offline"})
    servers = {("127.0.0.1", None): local, ("10.0.0.2", 5037): FakeClient("10.0.0.2", 5037, {"A3": "unauthorized"}),
               ("10.0.0.9", 5037): FakeClient("10.0.0.9", 5037)}
    with pytest.raises(ConfigError) as info:
        resolve_blocking(parse_devices(spec), FakeAdb(servers))
    assert str(info.value).startswith("--devices: ") and words in str(info.value)


def test_a_refused_adb_connect_is_a_clear_error() -> None:
    local = FakeClient("127.0.0.1", 5037, connect_answer="failed to connect to '{}': Connection refused")
    with pytest.raises(ConfigError) as info:
        resolve_blocking(parse_devices("127.0.0.1:5999"), FakeAdb({("127.0.0.1", None): local}))
    assert str(info.value) == ("--devices: adb connect 127.0.0.1:5999: failed to connect to '127.0.0.1:5999': "
                               "Connection refused")


def test_the_same_phone_twice_after_expansion_is_an_error() -> None:
    local = FakeClient("127.0.0.1", 5037, {"R58M41": "device"})
    with pytest.raises(ConfigError, match="named twice"):
        resolve_blocking(parse_devices("R58M41,@"), FakeAdb({("127.0.0.1", None): local}))


def test_unresolved_names_phones_as_ray_nodes_advertise_them() -> None:
    phones = unresolved(parse_devices("sim:1,R58M41,127.0.0.1:5555"))
    assert [p.resource for p in phones] == ["phone:sim-1", "phone:R58M41", "phone:127.0.0.1:5555"]
    with pytest.raises(ConfigError, match="--address"):
        unresolved(parse_devices("@"))
