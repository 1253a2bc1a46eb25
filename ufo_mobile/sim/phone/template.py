"""The tiny, eval-free expression language of app files: ``{var}`` templates and conditions.

A placeholder is ``{name}`` or ``{name?then:else}`` where ``name`` is a state variable, a name a
node binds with ``let``, ``item``, ``item.field`` or an ``@`` variable supplied by the phone
(``@time``, ``@date``, ``@index``, ``@apps``) or by the enclosing list row (``@parent``,
``@parent.field``: the item of the row around the current one, e.g. in a ``let`` filter). A list
name takes a ``#`` suffix: ``{events#}`` is the number of its items, ``{events#title}`` their
``title`` fields joined with ", " (conditions may test ``events#`` too). ``{{`` and ``}}`` are
literal braces; any other brace is kept as written. Values are substituted in one pass, so text a
user typed is never interpreted again.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.sim.phone.behaviour import Condition

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([@A-Za-z_][\w@]*(?:\.[\w@]+)*)(#\w*)?(?:\?([^{}:]*):([^{}]*))?\}")


@dataclass(frozen=True)
class Scope:
    """What names resolve to: the app's live state, the current list item, phone variables and
    the names bound by ``let`` (kept in ``extras`` next to the ``@`` variables; they shadow state)."""

    state: Mapping[str, Any]
    item: Any = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def with_item(self, item: Any, index: int) -> Scope:
        """The scope of a list row: ``item`` is the row's, ``@parent`` the enclosing row's item."""
        return Scope(self.state, item, {**self.extras, "@index": index, "@parent": self.item})

    def with_names(self, names: Mapping[str, Any]) -> Scope:
        """This scope with ``let`` bindings added."""
        return Scope(self.state, self.item, {**self.extras, **names}) if names else self

    def lookup(self, name: str) -> Any:
        """The value of ``name``; unknown names resolve to ``""`` (app files are checked at load).

        ``name#`` is the length of a list and ``name#field`` its items' fields joined with ", ".
        """
        base, hash_, field_name = name.partition("#")
        if hash_:
            return aggregate(self.lookup(base), field_name)
        if name == "item" or name.startswith("item."):
            return _walk(self.item, name.split(".")[1:])
        if name.startswith("@"):
            head, _, rest = name.partition(".")
            return _walk(self.extras.get(head, ""), rest.split(".") if rest else [])
        if name in self.extras:
            return self.extras[name]
        return self.state.get(name, "")


def _walk(value: Any, parts: list[str]) -> Any:
    for part in parts:
        value = value.get(part, "") if isinstance(value, Mapping) else ""
    return value


def aggregate(value: Any, field_name: str) -> Any:
    """A list's length (``field_name`` empty) or its items' ``field_name`` values joined with ", "."""
    items = value if isinstance(value, list) else []
    if not field_name:
        return len(items)
    return ", ".join(fmt(item.get(field_name, "")) if isinstance(item, Mapping) else fmt(item) for item in items)


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
        value = scope.lookup(match.group(1) + (match.group(2) or ""))
        if match.group(3) is not None:
            return match.group(3) if truthy(value) else match.group(4)
        return fmt(value)

    return _PLACEHOLDER.sub(fill, template)


def resolve(value: Any, scope: Scope) -> Any:
    """Render templates inside ``value`` (strings, lists, mappings); other values pass through.

    A string that is exactly one plain placeholder yields a copy of the raw value, so
    ``"{notes}"`` is a list and ``"{wifi}"`` a bool.
    """
    if isinstance(value, str):
        match = _PLACEHOLDER.fullmatch(value)
        if match and match.group(1) and match.group(3) is None:
            return copy.deepcopy(scope.lookup(match.group(1) + (match.group(2) or "")))
        return render(value, scope)
    if isinstance(value, Mapping):
        return {str(key): resolve(item, scope) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, scope) for item in value]
    return value


def names(template: str) -> list[str]:
    """The variable names a template refers to (for load-time checks), without a ``#`` suffix."""
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
