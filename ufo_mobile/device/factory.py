"""Build the driver named in the settings."""

from __future__ import annotations

from ufo_mobile.device.base import DeviceDriver
from ufo_mobile.settings import DeviceSettings


def make_driver(settings: DeviceSettings) -> DeviceDriver:
    from ufo_mobile.device.sim import SimDriver
    from ufo_mobile.sim.phone import SimPhone

    phone = SimPhone(width=settings.sim.width, height=settings.sim.height)
    for app in settings.sim.apps:
        phone.install_app(app)
    if settings.sim.start_app:
        phone.start_app(settings.sim.start_app)
    return SimDriver(phone)
