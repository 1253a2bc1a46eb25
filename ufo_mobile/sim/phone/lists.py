"""The items a node repeats over (``for_each``) or names (``let``): a state list filtered by
``where``, ordered by ``sort`` and ``reverse``; see ``model.ForEach``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ufo_mobile.sim.phone.model import ForEach, Node
from ufo_mobile.sim.phone.template import Scope, all_hold, fmt


def select(spec: ForEach, scope: Scope) -> list[tuple[int, Any, Scope]]:
    """The items of ``spec.source`` that pass ``spec.where``, in ``sort`` then ``reverse`` order, each
    with its index in the list and its row scope (``item``; the enclosing row's item is ``@parent``)."""
    items = scope.lookup(spec.source)
    if not isinstance(items, list):
        return []
    chosen = [(index, item, scope.with_item(item, index)) for index, item in enumerate(items)]
    chosen = [entry for entry in chosen if all_hold(spec.where, entry[2])]
    if spec.sort:
        chosen.sort(key=lambda entry: [_sort_key(entry[1], name) for name in spec.sort])
    if spec.reverse:
        chosen.reverse()
    return chosen


def _sort_key(item: Any, name: str) -> tuple[int, float, str]:
    """Numbers (and text holding one: "09") by value before other text, which goes by casefold."""
    value = item.get(name, "") if isinstance(item, Mapping) else item
    text = fmt(value).strip()
    try:
        number = float(text)
    except ValueError:
        return (1, 0.0, text.casefold())
    return (0, number, "") if number == number else (1, 0.0, text.casefold())  # nan sorts as text


def bind_names(spec: Node, scope: Scope) -> Scope:
    """``scope`` with the node's ``let`` names: the items each one selects."""
    if not spec.let:
        return scope
    return scope.with_names({name: [item for _, item, _ in select(query, scope)]
                             for name, query in spec.let.items()})
