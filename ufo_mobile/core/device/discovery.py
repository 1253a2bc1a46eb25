"""What ``python -m ufo_mobile devices`` shows: every phone the adb server sees, and its state (the
server itself is started by ``ufo_mobile/core/device/local_adb.py`` when none answers), and each
iPhone's WebDriverAgent asked for (``--wda URL``: WDA cannot be discovered, only asked)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ufo_mobile.core.device.blocking import classify
from ufo_mobile.core.device.local_adb import AdbUnavailableError

HINTS = {
    "unauthorized": "accept the 'Allow USB debugging' prompt on the phone, then run this again",
    "offline": "the phone stopped answering: reconnect the cable or run 'adb reconnect offline'",
    "no permissions": "the adb server may not open the USB device: check udev rules",
    "authorizing": "the phone is still deciding; unlock it and look for the debugging prompt",
}


@dataclass(frozen=True)
class DeviceRow:
    """One phone as ``python -m ufo_mobile devices`` lists it; ``note`` says what to do about a phone
    that is not ready."""

    serial: str
    state: str
    model: str = ""
    os: str = ""  # "Android 14", "iOS 17.5"
    screen: str = ""
    note: str = ""


def _describe(device: Any, timeout: float) -> tuple[str, str, str]:
    def prop(name: str) -> str:
        return str(device.shell(f"getprop {shlex.quote(name)}", timeout=timeout)).strip()

    size = device.window_size()
    return prop("ro.product.model"), f"Android {prop('ro.build.version.release')}", f"{size.width}x{size.height}"


def list_devices(client: Any, *, timeout: float = 10.0) -> list[DeviceRow]:
    """Blocking: one row per device known to the adb server, ready or not.

    Raises:
        AdbUnavailableError: the server did not answer the list (``local_adb.ensure_server`` first
            makes sure one runs).
    """
    try:
        infos = client.list()
    except Exception as exc:
        where = f"{client.host}:{client.port}"
        raise AdbUnavailableError(f"the adb server at {where} did not list the phones ({type(exc).__name__}: "
                                  f"{exc})", serial="-") from exc
    rows = []
    for info in infos:
        if info.state != "device":
            rows.append(DeviceRow(info.serial, info.state, note=HINTS.get(info.state, "")))
            continue
        try:
            model, android, screen = _describe(client.device(info.serial), timeout)
        except Exception as exc:
            rows.append(DeviceRow(info.serial, info.state, note=str(classify(exc, serial=info.serial,
                                                                               what="query"))))
            continue
        rows.append(DeviceRow(info.serial, info.state, model, android, screen))
    return rows


WDA_HINT = ("start WebDriverAgent on the iPhone (Xcode, or xcodebuild test) and forward its port to this "
            "machine (iproxy 8100 8100)")


def wda_row(url: str, *, timeout: float = 10.0) -> DeviceRow:
    """Blocking: the iPhone whose WebDriverAgent answers at ``url`` (name, iOS version, screen in pixels),
    or why it does not."""
    name = f"wda:{url}"
    try:
        import wdapy
    except ImportError:
        from ufo_mobile.core.device.wda import IOS_EXTRA

        return DeviceRow(name, "unavailable", note=IOS_EXTRA)
    client = wdapy.AppiumClient(url)
    client.request_timeout = timeout
    try:
        status = client.request(wdapy.GET, "/status")["value"]
        info = client.request(wdapy.GET, "/wda/device/info")["value"]
        scale = float(client.session_request(wdapy.GET, "/wda/screen")["value"]["scale"])
        width, height = client.window_size()
    except Exception as exc:  # noqa: BLE001 - whatever went wrong is said on the row
        return DeviceRow(name, "unreachable", note=f"{classify(exc, serial=name, what='ask')}; {WDA_HINT}")
    os = status.get("os") if isinstance(status, dict) else None
    version = f"iOS {os.get('version')}" if isinstance(os, dict) and os.get("version") else "iOS"
    state = "ready" if isinstance(status, dict) and status.get("ready", True) else "busy"
    return DeviceRow(name, state, str(info.get("name") or info.get("model") or "iPhone"), version,
                     f"{round(width * scale)}x{round(height * scale)}")


def format_rows(rows: list[DeviceRow]) -> str:
    """The rows as an aligned table, each note on a line of its own below it (or how to connect a phone)."""
    if not rows:
        return ("no devices: connect a phone with USB debugging on, or run 'adb connect HOST:PORT'; an iPhone "
                "is asked for with --wda URL")
    header = ("SERIAL", "STATE", "MODEL", "OS", "SCREEN")
    cells = [header, *[(r.serial, r.state, r.model, r.os, r.screen) for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip()
             for row in cells]
    lines += [f"{r.serial}: {r.note}" for r in rows if r.note]
    return "\n".join(lines)
