"""A package's public names imported when first used (a module ``__getattr__``, PEP 562), so that
importing the package costs nothing until a name is used: ``ufo_mobile`` and ``ufo_mobile.settings``
export their names this way."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, where: Mapping[str, str],
               namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names live in the modules
    ``where`` maps them to; ``namespace`` is the package's ``globals()``, where a name is kept once
    imported so the next use finds it directly."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted([*namespace, *where])

    return getattr_, dir_
