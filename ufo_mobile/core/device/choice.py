"""Never a silent simulator: the phone a run uses when nothing the user wrote names one.

With no ``device.kind`` or ``device.serial`` in the user config, the environment, the defaults
file, the task file or on the command line, a run would use the simulated phone. When an adb
server already answers (it is never started here) and has exactly one phone ready, ``choose_device``
asks a person at a terminal whether to use it; without one it says, in a note, that the simulator is
used and how to choose; ``device.choose: phone`` uses the phone without asking. Several phones are
listed, never picked. The command line (``cli/run_cmd.py``) and the Python API (``api.py``) both
decide here.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass

from ufo_mobile.settings import Settings

PROBE_ENV = "UFO_MOBILE_PHONE_PROBE"  # "off": never look for phones (CI, the test suite)
PROBE_TIMEOUT = 1.5  # seconds for the whole look at the adb server


@dataclass(frozen=True)
class Phone:
    """A phone the adb server has ready (state ``device``)."""

    serial: str
    model: str = ""

    def __str__(self) -> str:
        return f"{self.serial} ({self.model})" if self.model else self.serial


Probe = Callable[[str, int], "list[Phone] | None"]  # host, port -> the ready phones, None: no server


@dataclass(frozen=True)
class Choice:
    """The settings to run with, and the line to tell the user (None: nothing to say)."""

    settings: Settings
    note: str | None = None


def adb_port(settings: Settings) -> int:
    """The adb server's port: ``device.adb_port``, else ``$ANDROID_ADB_SERVER_PORT``, else 5037."""
    if settings.device.adb_port is not None:
        return settings.device.adb_port
    try:
        return int(os.environ.get("ANDROID_ADB_SERVER_PORT", "") or 5037)
    except ValueError:
        return 5037


def adb_phones(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> list[Phone] | None:
    """The phones an adb server that already runs at ``host:port`` has ready; None when no server
    answers within ``timeout`` seconds. A bare connection looks first, since adbutils starts a
    server where none answers; adbutils then asks for the list (``host:devices-l``)."""
    import adbutils

    try:
        socket.create_connection((host, port), timeout=timeout).close()
        infos = adbutils.AdbClient(host=host, port=port, socket_timeout=timeout).list(extended=True)
    except (OSError, adbutils.AdbError):
        return None
    return [Phone(i.serial, i.tags.get("model", "").replace("_", " ")) for i in infos if i.state == "device"]


def _on(settings: Settings, phone: Phone) -> Settings:
    device = settings.device.model_copy(update={"kind": "adb", "serial": phone.serial})
    return settings.model_copy(update={"device": device})


def choose_device(settings: Settings, *, named: bool, ask: Callable[[str], bool] | None = None,
                  probe: Probe | None = None, where: str = "the user config") -> Choice:
    """The settings to run with when ``named`` is False (nothing the user wrote names the device).

    ``ask`` puts a yes/no question to a person (None: nobody to ask); ``probe`` lists the ready
    phones of the adb server (default ``adb_phones``; ``$UFO_MOBILE_PHONE_PROBE=off`` looks for
    none); ``where`` names the user config in the note.
    """
    if named or settings.device.kind != "sim" or settings.device.choose == "sim":
        return Choice(settings)
    if probe is None and os.environ.get(PROBE_ENV, "").strip().lower() == "off":
        return Choice(settings)
    phones = (probe or adb_phones)(settings.device.adb_host, adb_port(settings))
    if not phones:
        return Choice(settings)
    if len(phones) > 1:
        listed = ", ".join(str(p) for p in phones)
        return Choice(settings, f"{len(phones)} phones are on the adb server ({listed}); the simulated phone is "
                                "used: choose one with --device SERIAL (or --device sim)")
    phone = phones[0]
    if settings.device.choose == "phone":
        return Choice(_on(settings, phone), f"using phone {phone}, the only phone on the adb server "
                                            "(device.choose: phone)")
    if ask is not None:
        if ask(f"use phone {phone} instead of the simulated phone? [y/N] "):
            return Choice(_on(settings, phone))
        return Choice(settings)
    return Choice(settings, f"phone {phone} is connected, but the simulated phone is used: choose with "
                            f"--device {phone.serial} or --device sim, or 'device: {{choose: phone}}' in {where}")
