"""The tiny, eval-free expression language of app files: ``{var}`` templates and conditions.

A placeholder is ``{name}`` or ``{name?then:else}`` where ``name`` is a state variable, ``item``,
``item.field`` or an ``@`` variable supplied by the phone (``@time``, ``@date``, ``@index``,
``@apps``). ``{{`` and ``}}`` are literal braces; any other brace is kept as written. Values are
substituted in one pass, so text a user typed is never interpreted again.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.sim.model import Condition

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([@A-Za-z_][\w@]*(?:\.[\w@]+)*)(?:\?([^{}:]*):([^{}]*))?\}")


@dataclass(frozen=True)
class Scope:
    """What names resolve to: the app's live state, the current list item, phone variables."""

    state: Mapping[str, Any]
    item: Any = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def with_item(self, item: Any, index: int) -> Scope:
        return Scope(self.state, item, {**self.extras, "@index": index})

    def lookup(self, name: str) -> Any:
        """The value of ``name``; unknown names resolve to ``""`` (app files are checked at load)."""
        if name == "item":
            return self.item
        if name.startswith("item."):
            value = self.item
            for part in name.split(".")[1:]:
                value = value.get(part, "") if isinstance(value, Mapping) else ""
            return value
        if name.startswith("@"):
            return self.extras.get(name, "")
        return self.state.get(name, "")


def fmt(value: Any) -> str:
    """A value as text: ``None`` is empty, booleans are ``true``/``false``, 40.0 is ``40``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def render(template: str, scope: Scope) -> str:
    """Fill every placeholder of ``template`` from ``scope``."""

    def fill(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        value = scope.lookup(match.group(1))
        if match.group(2) is not None:
            return match.group(2) if truthy(value) else match.group(3)
        return fmt(value)

    return _PLACEHOLDER.sub(fill, template)


def resolve(value: Any, scope: Scope) -> Any:
    """Render templates inside ``value`` (strings, lists, mappings); other values pass through.

    A string that is exactly one plain placeholder yields a copy of the raw value, so
    ``"{notes}"`` is a list and ``"{wifi}"`` a bool.
    """
    if isinstance(value, str):
        match = _PLACEHOLDER.fullmatch(value)
        if match and match.group(1) and match.group(2) is None:
            return copy.deepcopy(scope.lookup(match.group(1)))
        return render(value, scope)
    if isinstance(value, Mapping):
        return {str(key): resolve(item, scope) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, scope) for item in value]
    return value


def names(template: str) -> list[str]:
    """The variable names a template refers to (for load-time checks)."""
    return [m.group(1) for m in _PLACEHOLDER.finditer(template) if m.group(1)]


def truthy(value: Any) -> bool:
    """Truthiness as app files mean it: ``""``, ``"false"`` and ``"0"`` are false."""
    if isinstance(value, str):
        return value not in ("", "false", "0")
    return bool(value)


def holds(condition: Condition, scope: Scope) -> bool:
    """Evaluate one condition."""
    value = scope.lookup(condition.var)
    if condition.equals is not None:
        target = condition.equals
        if isinstance(target, str):
            result = fmt(value) == render(target, scope)
        else:
            result = value == target and isinstance(value, bool) == isinstance(target, bool)
    elif condition.contains is not None:
        result = render(condition.contains, scope).casefold() in fmt(value).casefold()
    elif condition.not_empty is not None:
        empty = len(value) == 0 if isinstance(value, (str, list, dict)) else value is None
        result = (not empty) == condition.not_empty
    else:
        result = truthy(value)
    return result != condition.negate


def all_hold(conditions: list[Condition], scope: Scope) -> bool:
    return all(holds(condition, scope) for condition in conditions)
