"""Fixtures for the suite tests: the shipped suite, and settings and a driver that make a run cheap.

Checks look at the phone's state only, so these runs skip the pixel work that is most of a step's
time on the simulated phone: ``StillSimDriver`` is a ``SimDriver`` whose screenshot is one image
rendered once (the home screen), and ``fast_settings`` sends it unshrunk and unannotated, writes
no report and does not wait for the screen to settle. Everything else (observation, UI dump,
prompt, reply, action, step records) runs as in any run.
"""

from __future__ import annotations

import functools

import pytest

from ufo_mobile.core.device.sim import SimDriver
from ufo_mobile.eval import SuiteTask, load_suite
from ufo_mobile.eval.runner import default_settings
from ufo_mobile.settings import Settings
from ufo_mobile.shipped import CONFIG_DIR
from ufo_mobile.sim.phone.simphone import SimPhone

SUITE = CONFIG_DIR / "suite"


@functools.cache
def _still_png() -> bytes:
    return SimPhone().screenshot_png()


class StillSimDriver(SimDriver):
    """A ``SimDriver`` whose screenshots are all the same pre-rendered image."""

    async def screenshot(self) -> bytes:
        await self._call()
        return _still_png()


@functools.cache
def suite_tasks() -> tuple[SuiteTask, ...]:
    """The shipped suite, loaded once per test process."""
    return tuple(load_suite(SUITE))


def fast_settings(**perception: object) -> Settings:
    base = default_settings()
    return base.model_copy(update={
        "logs": base.logs.model_copy(update={"report": False}),
        "perception": base.perception.model_copy(update={
            "annotate": False, "settle_timeout_seconds": 0.0, "image_max_tiles": 0, "image_longest_side": 4096,
            **perception}),
    })


@pytest.fixture
def settings() -> Settings:
    return fast_settings()
