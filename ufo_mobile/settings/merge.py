"""Settings laid over settings: the defaults file under the task file, command-line overrides over
both, and each ``models.<role>`` over ``model``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base``, mappings merged key by key (neither is changed)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
