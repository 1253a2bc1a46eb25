"""The simulated phone: apps as YAML screen graphs, laid out, hit-tested, dumped and rendered.

``SimPhone`` is the runtime; ``ufo_mobile.device.sim.SimDriver`` adapts it to the device port.
App files are described in ``ufo_mobile.sim.model``.
"""

from ufo_mobile.sim.loader import builtin_apps, load_app_file, load_app_text
from ufo_mobile.sim.model import App
from ufo_mobile.sim.phone import Foreground, InstalledApp, SimPhone, fixed_clock, real_clock

__all__ = [
    "App",
    "Foreground",
    "InstalledApp",
    "SimPhone",
    "builtin_apps",
    "fixed_clock",
    "load_app_file",
    "load_app_text",
    "real_clock",
]
