"""Reducers: how a partial update from a phase is merged into the shared state.

Each field of ``SharedState`` names its reducer in ``Annotated`` metadata. A phase never mutates
the state; it returns a mapping of field -> value and ``apply_update`` merges it field by field,
returning a new state. Unknown fields are an error (a typo must not silently drop data).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

Reducer = Callable[[Any, Any], Any]
M = TypeVar("M", bound=BaseModel)


def replace_value(old: Any, new: Any) -> Any:
    """The new value wins (plans, device fields, flags)."""
    return new


def add(old: Any, new: Any) -> Any:
    """Numbers add up (counters)."""
    return old + new


def _id_attr(item: Any) -> Any:
    """An item's id: its ``id`` key or attribute (None: it has none)."""
    if isinstance(item, Mapping):
        return item.get("id")
    return getattr(item, "id", None)


def _item_id(item: Any) -> Any:
    """The same, where a string or a number is its own id."""
    return item if isinstance(item, str | int) else _id_attr(item)


def _append_new(old: list[Any], new: Any, key: Callable[[Any], Any]) -> list[Any]:
    """``old`` with one item or a list of items appended, except those whose ``key`` (not None) is
    there already: the first item of an id stays."""
    items = new if isinstance(new, list) else [new]
    merged = list(old)
    seen = {key(x) for x in merged} - {None}
    for item in items:
        k = key(item)
        if k is None or k not in seen:
            merged.append(item)
            if k is not None:
                seen.add(k)
    return merged


def append_items(old: list[Any], new: Any) -> list[Any]:
    """Append one item or a list of items (histories: one entry per action or step). An item with an
    ``id`` (an attribute or a key) already there is dropped (seed 003); items without one, such as
    strings and flags, always append."""
    return _append_new(old, new, _id_attr)


def append_unique(old: list[Any], new: Any) -> list[Any]:
    """Append items whose id (a string is its own id) is not there yet; the first one stays."""
    return _append_new(old, new, _item_id)


def add_messages(old: list[Any], new: Any) -> list[Any]:
    """Append chat messages; a message whose ``id`` is already there is dropped (seed 003): a
    message replayed by a resumed or re-asked turn is not sent twice."""
    return append_items(old, new)


def replace_messages(old: list[Any], new: Any) -> list[Any]:
    """The new list of messages replaces the old one (a conversation compacted or restarted)."""
    return list(new) if isinstance(new, list) else [new]


def merge_dict(old: dict[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Shallow merge of mappings (custom variables)."""
    return {**old, **new}


def field_name(model: type[BaseModel], name: str) -> str:
    """The field ``name`` stands for: itself, or the field an older name (``FIELD_ALIASES``) became."""
    aliases: dict[str, str] = getattr(model, "FIELD_ALIASES", {})
    return aliases.get(name, name)


def reducer_of(model: type[BaseModel], field: str) -> Reducer:
    info = model.model_fields[field_name(model, field)]
    for meta in info.metadata:
        if callable(meta):
            return meta  # type: ignore[no-any-return]
    return replace_value


def apply_update(state: M, update: Mapping[str, Any] | None) -> M:
    """Merge ``update`` into ``state`` through each field's reducer; return the new state.

    Raises:
        KeyError: ``update`` names a field the state does not have.
    """
    if not update:
        return state
    model = type(state)
    values: dict[str, Any] = {}
    for key, value in update.items():
        name = field_name(model, key)
        if name not in model.model_fields:
            raise KeyError(f"{model.__name__} has no field {key!r}")
        values[name] = reducer_of(model, name)(values.get(name, getattr(state, name)), value)
    return model.model_validate({**dict(state), **values})
