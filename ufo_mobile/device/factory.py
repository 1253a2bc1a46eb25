"""Build the driver named in the settings."""

from __future__ import annotations

from typing import Any

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.settings import DeviceSettings
from ufo_mobile.trace.writer import RunWriter


def adb_client(settings: DeviceSettings) -> Any:
    import adbutils

    return adbutils.AdbClient(host=settings.adb_host, port=settings.adb_port,
                              socket_timeout=settings.command_timeout_seconds)


def make_driver(settings: DeviceSettings, *, logger: Any = None) -> DeviceDriver:
    if settings.kind == "adb":
        from ufo_mobile.device.adb import AdbDriver

        return AdbDriver(settings.serial, client=adb_client(settings), timeout=settings.command_timeout_seconds,
                         logger=logger)
    if settings.kind == "u2":
        from ufo_mobile.device.u2 import U2Driver

        return U2Driver(settings.serial, client=adb_client(settings), timeout=settings.command_timeout_seconds,
                        start_timeout=settings.u2_start_timeout_seconds, fallback=settings.u2_fallback,
                        logger=logger)
    from ufo_mobile.device.sim import SimDriver
    from ufo_mobile.sim.phone import SimPhone

    phone = SimPhone(width=settings.sim.width, height=settings.sim.height)
    for app in settings.sim.apps:
        phone.install_app(app)
    if settings.sim.start_app:
        phone.start_app(settings.sim.start_app)
    return SimDriver(phone)


def wrap_driver(driver: DeviceDriver, settings: DeviceSettings, writer: RunWriter) -> DeviceDriver:
    """Add the wrappers the settings ask for: human-like input, then the action recording."""
    if settings.stealth:
        from ufo_mobile.device.stealth import StealthDriver

        driver = StealthDriver(driver, seed=settings.stealth_seed)
    if settings.record_actions:
        from ufo_mobile.device.recording import RecordingDriver

        driver = RecordingDriver.for_run(driver, writer)
    return driver
