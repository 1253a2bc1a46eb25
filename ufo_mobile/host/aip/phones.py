"""The task service's phones as DEVICE_INFO_RESPONSE describes them, and which phone a TASK asks for.

A DEVICE_INFO_RESPONSE's ``result`` has the keys of UFO's ``DeviceSystemInfo`` (``device_id``,
``platform``, ``os_version``, ``platform_type``, ``supported_features``, ``schema_version``) for this
device server, plus ``phones``: one entry per phone with its name (``serial``), model, Android version,
screen size and whether it is busy (the session running on it) or free. A phone's model, version and
screen are asked once (a bounded adb call off the event loop) and kept; a phone that does not answer
is listed with the error instead.
"""

from __future__ import annotations

import shlex
from typing import Any

from ufo_mobile.core.device.blocking import call_blocking
from ufo_mobile.errors import DeviceCommandError, DeviceError
from ufo_mobile.fleet.devices import Phone
from ufo_mobile.settings import Settings

SIM_MODEL = "UFO Sim Phone (in-process)"
FEATURES = ["gui_automation", "screenshots", "ui_hierarchy", "annotated_screenshots"]


def pick(phones: list[Phone], device_id: str, named: str | None, target_id: str | None) -> str | None:
    """The phone a TASK asks for: ``metadata.device``, else ``target_id`` when it names a phone; None
    (any free phone) when neither names one and ``target_id`` is absent or this server's own id.

    Raises:
        ValueError: a phone that is not here, or a ``target_id`` that is neither a phone nor this server.
    """
    names = [p.name for p in phones]
    listed = ", ".join(names)
    if named is not None:
        if named not in names:
            raise ValueError(f"no phone {named!r} here (phones: {listed})")
        return named
    if target_id is None or target_id == device_id:
        return None
    if target_id in names:
        return target_id
    raise ValueError(f"target_id {target_id!r} is neither this device server ({device_id!r}) nor one of its "
                     f"phones ({listed})")


def _describe_blocking(phone: Phone, timeout: float) -> dict[str, Any]:
    if phone.kind == "wda":  # an iPhone: what its WebDriverAgent says
        from ufo_mobile.core.device.discovery import wda_row

        row = wda_row(phone.serial, timeout=timeout)
        if row.state != "ready":
            raise DeviceCommandError(f"{row.state}: {row.note}", serial=phone.name)
        return {"model": row.model, "android_version": None, "ios_version": row.os.removeprefix("iOS ").strip(),
                "screen_size": row.screen}
    import adbutils

    client = adbutils.AdbClient(host=phone.adb_host, port=phone.adb_port, socket_timeout=timeout)
    device = client.device(phone.serial)

    def prop(name: str) -> str:
        return str(device.shell(f"getprop {shlex.quote(name)}", timeout=timeout)).strip()

    size = device.window_size()
    return {"model": prop("ro.product.model"), "android_version": prop("ro.build.version.release"),
            "screen_size": f"{size.width}x{size.height}"}


class PhoneInfo:
    """Describes the phones for DEVICE_INFO_RESPONSE; what a phone said once is kept."""

    def __init__(self, phones: list[Phone], base: Settings, device_id: str, *, timeout: float = 10.0) -> None:
        self.phones = phones
        self.base = base
        self.device_id = device_id
        self.timeout = timeout
        self._known: dict[str, dict[str, Any]] = {}

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.phones]

    async def describe(self, phone: Phone) -> dict[str, Any]:
        """Model, Android version and screen size (``error`` instead when the phone does not answer)."""
        if phone.name in self._known:
            return self._known[phone.name]
        if phone.kind == "sim":
            sim = self.base.device.sim
            info: dict[str, Any] = {"model": SIM_MODEL, "android_version": None,
                                    "screen_size": f"{sim.width}x{sim.height}"}
        else:
            try:
                info = await call_blocking(_describe_blocking, phone, self.timeout, limit=self.timeout * 4 + 1,
                                           serial=phone.name, what="describe the phone")
            except DeviceError as exc:
                return {"model": None, "android_version": None, "screen_size": None, "error": str(exc)}
        self._known[phone.name] = info
        return info

    async def result(self, busy: dict[str, str], queued: int, only: str | None = None) -> dict[str, Any]:
        """The DEVICE_INFO_RESPONSE ``result``: this server (or only the phone named ``only``).
        ``busy`` maps a phone to the session running on it; ``queued`` is how many tasks wait."""
        phones = [p for p in self.phones if only is None or p.name == only]
        entries = []
        for phone in phones:
            entry = {"serial": phone.name, "kind": phone.kind, **await self.describe(phone)}
            running = busy.get(phone.name)
            entry["state"] = "busy" if running is not None else "free"
            entry["session_id"] = running
            entries.append(entry)
        versions = sorted({str(e["android_version"]) for e in entries if e.get("android_version")})
        ios = sorted({str(e["ios_version"]) for e in entries if e.get("ios_version")})
        return {
            "device_id": only or self.device_id,
            "platform": "ios" if ios and not versions else "android",
            "platform_type": "mobile",
            "os_version": ", ".join([*(f"Android {v}" for v in versions), *(f"iOS {v}" for v in ios)]) or "unknown",
            "supported_features": FEATURES,
            "schema_version": "1.0",
            "phones": entries,
            "free": sum(1 for e in entries if e["state"] == "free"),
            "queued_tasks": queued,
        }
