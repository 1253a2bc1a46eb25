"""Suite templates: ``$name`` placeholders in a task's text, setup, check and oracle script.

``$name`` (or ``${name}`` next to letters) is a parameter; ``$name.field`` a field of a parameter
that is a mapping, ``$name.0`` an item of one that is a list; ``$$`` is a literal dollar. A ``$``
not followed by a letter or an underscore stays as written, so prices such as ``$2.49`` need no
escaping. A string that is exactly one placeholder yields the parameter's value itself (a number
stays a number, a mapping a mapping); inside longer text a value is written as text. Values are
inserted once and never scanned again, so a parameter holding ``$x`` is just text.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from ufo_mobile.sim.phone.template import fmt

_NAME = r"[A-Za-z_]\w*(?:\.\w+)*"
_PLACEHOLDER = re.compile(rf"\$\$|\$\{{({_NAME})\}}|\$({_NAME})")


class TemplateError(ValueError):
    """A placeholder names no parameter; ``at`` is the key path of the string that holds it."""

    def __init__(self, message: str, at: tuple[str, ...] = ()) -> None:
        self.at = at
        self.message = message
        super().__init__(message)


def lookup(params: Mapping[str, Any], name: str) -> Any:
    """The value of ``name`` (``contact``, ``contact.phone``, ``pair.0``) in ``params``."""
    head, *rest = name.split(".")
    if head not in params:
        known = ", ".join(f"${key}" for key in params) or "none"
        raise TemplateError(f"unknown parameter ${head} (parameters: {known})")
    value = params[head]
    for part in rest:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and _is_index(part, len(value)):
            value = value[int(part)]
        else:
            raise TemplateError(f"${name}: the parameter has no {part!r}")
    return value


def _is_index(part: str, length: int) -> bool:
    return part.isdigit() and int(part) < length


def render(value: Any, params: Mapping[str, Any], at: tuple[str, ...] = ()) -> Any:
    """``value`` with every placeholder filled: strings, and the strings inside lists and mappings
    (keys are left alone). Raises ``TemplateError`` naming the key path of a bad placeholder."""
    if isinstance(value, str):
        try:
            return _render_text(value, params)
        except TemplateError as exc:
            raise TemplateError(exc.message, at) from None
    if isinstance(value, Mapping):
        return {key: render(item, params, (*at, str(key))) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, params, (*at, str(index))) for index, item in enumerate(value)]
    return value


def _render_text(text: str, params: Mapping[str, Any]) -> Any:
    whole = _PLACEHOLDER.fullmatch(text)
    if whole is not None and whole.group(0) != "$$":
        return copy.deepcopy(lookup(params, whole.group(1) or whole.group(2)))

    def fill(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return fmt(lookup(params, match.group(1) or match.group(2)))

    return _PLACEHOLDER.sub(fill, text)
