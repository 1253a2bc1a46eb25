"""Build the driver named in the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ufo_mobile.core.device.base import DeviceDriver
from ufo_mobile.core.trace.writer import RunWriter
from ufo_mobile.errors import ConfigError, DeviceCommandError, SimulatorError
from ufo_mobile.settings import DeviceSettings, SimSettings

if TYPE_CHECKING:
    from ufo_mobile.sim.phone.simphone import SimPhone


def adb_client(settings: DeviceSettings) -> Any:
    """A client of the adb server the settings name (``adb_host``, ``adb_port``)."""
    from ufo_mobile.core.device.adb_base import AdbServerClient

    return AdbServerClient(host=settings.adb_host, port=settings.adb_port,
                           socket_timeout=settings.command_timeout_seconds)


def build_sim_phone(settings: SimSettings) -> SimPhone:
    """The simulated phone with the user's apps installed.

    Raises:
        ConfigError: an app file is missing, malformed or invalid, or ``start_app`` is unknown.
    """
    from ufo_mobile.sim.phone.loader import packaged_app
    from ufo_mobile.sim.phone.simphone import SimPhone

    phone = SimPhone(width=settings.width, height=settings.height)
    for package in settings.install:
        try:
            phone.install(packaged_app(package))
        except SimulatorError as exc:
            raise ConfigError(str(exc), key="device.sim.install") from exc
    for app in settings.apps:
        try:
            phone.install_app(app)
        except SimulatorError as exc:
            raise ConfigError(str(exc), key="device.sim.apps") from exc
    if settings.start_app:
        try:
            phone.start_app(settings.start_app)
        except (SimulatorError, DeviceCommandError) as exc:
            raise ConfigError(str(exc), key="device.sim.start_app") from exc
    return phone


def make_driver(settings: DeviceSettings, *, logger: Any = None, phone: SimPhone | None = None) -> DeviceDriver:
    """The driver for ``settings``; for the simulator, ``phone`` (built by ``build_sim_phone``) if given."""
    if settings.kind == "adb":
        from ufo_mobile.core.device.adb import AdbDriver

        return AdbDriver(settings.serial, client=adb_client(settings), timeout=settings.command_timeout_seconds,
                         start_timeout=settings.u2_start_timeout_seconds, label_cache_dir=settings.label_cache_dir,
                         display_id=settings.display_id, logger=logger)
    if settings.kind == "wda":
        from ufo_mobile.core.device.wda import IOSDriver, check_ios_extra

        check_ios_extra("device.kind")
        if not settings.serial:
            raise ConfigError("an iPhone is reached at its WebDriverAgent's URL: --device wda:http://127.0.0.1:8100",
                              key="device.serial")
        return IOSDriver(settings.serial, timeout=settings.command_timeout_seconds, apps=settings.wda_apps)
    if settings.kind == "u2":
        from ufo_mobile.core.device.u2 import U2Driver

        return U2Driver(settings.serial, client=adb_client(settings), timeout=settings.command_timeout_seconds,
                        start_timeout=settings.u2_start_timeout_seconds, fallback=settings.u2_fallback,
                        label_cache_dir=settings.label_cache_dir, display_id=settings.display_id, logger=logger)
    from ufo_mobile.core.device.sim import SimDriver

    return SimDriver(phone or build_sim_phone(settings.sim))


def wrap_driver(driver: DeviceDriver, settings: DeviceSettings, writer: RunWriter) -> DeviceDriver:
    """Add the wrappers the settings ask for: human-like input, then the action recording."""
    if settings.stealth:
        from ufo_mobile.core.device.stealth import StealthDriver

        driver = StealthDriver(driver, seed=settings.stealth_seed)
    if settings.record_actions:
        from ufo_mobile.core.device.recording import RecordingDriver

        driver = RecordingDriver.for_run(driver, writer)
    return driver
