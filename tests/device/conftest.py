"""Tests on a real phone: run with ANDROID_SERIAL=<serial> python -m pytest tests/device -m device."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("ANDROID_SERIAL"):
        return
    skip = pytest.mark.skip(reason="needs a real phone: set ANDROID_SERIAL to its adb serial")
    for item in items:
        if item.get_closest_marker("device") is not None:
            item.add_marker(skip)
