"""The simulated phone: apps as YAML screen graphs, laid out, hit-tested, dumped and rendered.

``SimPhone`` is the runtime; ``ufo_mobile.core.device.sim.SimDriver`` adapts it to the device port.
App files are described in ``ufo_mobile.sim.phone.model``. The names below are imported on first use,
so importing a light submodule (``ufo_mobile.sim.android.profile``) does not load the renderer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ufo_mobile.sim.phone.loader import builtin_apps, load_app_file, load_app_text
    from ufo_mobile.sim.phone.model import App
    from ufo_mobile.sim.phone.simphone import Foreground, InstalledApp, SimPhone, fixed_clock, real_clock

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

_HOMES = {"App": "phone.model", "builtin_apps": "phone.loader", "load_app_file": "phone.loader",
          "load_app_text": "phone.loader"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES.get(name, 'phone.simphone')}"), name)
