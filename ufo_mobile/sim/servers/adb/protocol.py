"""The ADB transport protocol as the device sees it: packets, the banner, the handshake values.

A packet is a 24-byte header of six little-endian u32 (command, arg0, arg1, payload length,
payload checksum, magic = command ^ 0xFFFFFFFF) followed by the payload. The checksum is the
byte sum of the payload; it is only meaningful when the negotiated version is the original
``A_VERSION_MIN`` (later versions send 0 and nobody checks it).
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Mapping
from dataclasses import dataclass

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453

A_VERSION_MIN = 0x01000000
A_VERSION = 0x01000001  # skips the payload checksum
MAX_PAYLOAD_V1 = 4096
MAX_PAYLOAD = 1024 * 1024

HEADER = struct.Struct("<6I")
_NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN", A_OKAY: "OKAY",
          A_CLSE: "CLSE", A_WRTE: "WRTE", A_STLS: "STLS"}

# Features this device implements; anything else would change what the host sends.
FEATURES = ("shell_v2", "cmd")


class ProtocolError(Exception):
    """The peer sent something that is not an ADB packet; the connection must be dropped."""


@dataclass(frozen=True, slots=True)
class Packet:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return command_name(self.command)


def command_name(command: int) -> str:
    return _NAMES.get(command, f"0x{command:08x}")


def checksum(data: bytes) -> int:
    """The "CRC" of the ADB header: the sum of the payload bytes."""
    return sum(data) & 0xFFFFFFFF


def encode(packet: Packet, *, with_checksum: bool) -> bytes:
    """Header and payload of ``packet`` as bytes."""
    crc = checksum(packet.data) if with_checksum else 0
    header = HEADER.pack(packet.command, packet.arg0 & 0xFFFFFFFF, packet.arg1 & 0xFFFFFFFF,
                         len(packet.data), crc, packet.command ^ 0xFFFFFFFF)
    return header + packet.data


async def read_packet(reader: asyncio.StreamReader, *, max_payload: int, verify_checksum: bool) -> Packet:
    """Read one packet; raises ``asyncio.IncompleteReadError`` at EOF, ``ProtocolError`` on garbage."""
    header = await reader.readexactly(HEADER.size)
    command, arg0, arg1, length, crc, magic = HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic 0x{magic:08x} for command 0x{command:08x}")
    if command not in _NAMES:
        raise ProtocolError(f"unknown command 0x{command:08x}")
    if length > max_payload:
        raise ProtocolError(f"{command_name(command)} payload of {length} bytes exceeds {max_payload}")
    data = await reader.readexactly(length) if length else b""
    if verify_checksum and checksum(data) != crc:
        raise ProtocolError(f"{command_name(command)} checksum mismatch")
    return Packet(command, arg0, arg1, data)


def device_banner(props: Mapping[str, str], features: tuple[str, ...] = FEATURES) -> bytes:
    """The CNXN payload of a device: ``device::ro.product.name=..;..;features=..``."""
    fields = [f"{key}={props.get(key, '')}" for key in ("ro.product.name", "ro.product.model",
                                                          "ro.product.device")]
    fields.append("features=" + ",".join(features))
    return ("device::" + ";".join(fields)).encode()


def host_features(banner: bytes) -> frozenset[str]:
    """The feature list of a host banner such as ``host::features=shell_v2,cmd``."""
    text = banner.rstrip(b"\0").decode("utf-8", "replace")
    _, _, props = text.partition("::")
    for item in props.split(";"):
        key, _, value = item.partition("=")
        if key == "features":
            return frozenset(filter(None, value.split(",")))
    return frozenset()


def service_name(data: bytes) -> str:
    """The service of an OPEN payload, with the trailing NULs stripped."""
    return data.rstrip(b"\0").decode("utf-8", "replace")
