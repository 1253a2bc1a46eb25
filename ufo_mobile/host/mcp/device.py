"""``get_device_info``'s facts, read the way each driver can: UFO's keys and UFO's raw text values.

UFO runs six ``adb shell`` commands (three ``getprop``, ``wm size``, ``wm density``, ``dumpsys battery``)
and returns their output as text: ``screen_size`` is ``"Physical size: 1080x2400"`` and the battery
status is ``dumpsys``'s number. We ask an adb phone the same questions in one shell round trip (fixed
words only, nothing from the caller), take the in-process simulated phone's facts from the simulator,
and ask any other driver for its screen size alone.
"""

from __future__ import annotations

from typing import Any

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.device.blocking import call_blocking

INFO_KEYS = ("model", "android_version", "sdk_version", "screen_size", "screen_density", "battery_level",
             "battery_status")
_QUESTIONS = (("model", "getprop ro.product.model"), ("android_version", "getprop ro.build.version.release"),
              ("sdk_version", "getprop ro.build.version.sdk"), ("screen_size", "wm size"),
              ("screen_density", "wm density"), ("battery", "dumpsys battery"))
_MARK = "@@ufo-mcp@@"


def innermost(driver: DeviceDriver) -> DeviceDriver:
    """The driver under any wrappers (recording, stealth)."""
    from ufo_mobile.core.device.wrappers import DriverWrapper

    return driver.innermost if isinstance(driver, DriverWrapper) else driver


def adb_device(driver: DeviceDriver) -> Any | None:
    """The connected ``adbutils`` device under an adb or uiautomator2 driver, else None."""
    from ufo_mobile.core.device.adb_base import AdbBase

    inner = innermost(driver)
    inner = getattr(inner, "adb", inner)  # U2Driver keeps its AdbDriver here
    return inner.device if isinstance(inner, AdbBase) else None


def shell_script() -> str:
    """One shell line asking every question, each answer after a marker line."""
    return "; ".join(f"echo {_MARK}{key}; {command} 2>&1" for key, command in _QUESTIONS)


def parse_answers(output: str) -> dict[str, str]:
    """The answers of ``shell_script`` as UFO's device_info (missing ones are empty strings)."""
    answers: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.replace("\r\n", "\n").split("\n"):
        if line.startswith(_MARK):
            current = answers.setdefault(line[len(_MARK):].strip(), [])
        elif current is not None:
            current.append(line)
    info = {key: "\n".join(answers.get(key, [])).strip() for key in INFO_KEYS[:5]}
    level = status = ""
    for line in answers.get("battery", []):
        name, _, value = line.strip().partition(":")
        if name == "level":
            level = value.strip()
        elif name == "status":
            status = value.strip()
    info["battery_level"], info["battery_status"] = level, status
    return info


async def read_device_info(driver: DeviceDriver, command_seconds: float) -> dict[str, str]:
    """UFO's device facts for ``driver``; the caller bounds the whole call."""
    from ufo_mobile.core.device.sim import SimDriver

    inner = innermost(driver)
    if isinstance(inner, SimDriver):
        return sim_device_info(inner)
    device = adb_device(driver)
    if device is not None:
        output = await call_blocking(device.shell, shell_script(), timeout=command_seconds, limit=command_seconds + 1.0,
                                     serial=driver.serial, what="device info")
        return parse_answers(str(output))
    width, height = await driver.screen_size()
    return {**dict.fromkeys(INFO_KEYS, ""), "screen_size": f"Physical size: {width}x{height}"}


def sim_device_info(driver: Any) -> dict[str, str]:
    """What the simulated phone would answer over adb (its kind profile's properties)."""
    from ufo_mobile.sim.android.profile import device_props, get_profile

    width, height = driver.phone.screen_size()
    props = device_props(get_profile("kind"), driver.serial, width, height)
    return {"model": props["ro.product.model"], "android_version": props["ro.build.version.release"],
            "sdk_version": props["ro.build.version.sdk"], "screen_size": f"Physical size: {width}x{height}",
            "screen_density": f"Physical density: {props['ro.sf.lcd_density']}",
            "battery_level": str(driver.phone.battery), "battery_status": "2"}
