"""Run the effects of a tap, long press or Enter: state changes and navigation.

State changes happen here; navigation is delegated to a ``Navigator`` (the phone), so this module
knows nothing about tasks and back stacks. Effects run in order and each sees the changes of the
ones before it; an effect whose ``when`` conditions fail is skipped.

``toggle`` and ``increment`` may name ``item.field``: the field of the list item the tapped row was
repeated for. The layout hands rows the app's live items, so the change lands in the app's state.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence
from typing import Any, Protocol

from ufo_mobile.sim.phone.behaviour import Effect, IncrementSpec, LaunchSpec, RemoveSpec
from ufo_mobile.sim.phone.template import Scope, all_hold, fmt, resolve, truthy


class Navigator(Protocol):
    """What effects may ask of the phone."""

    def goto(self, package: str, screen: str, replace: bool) -> None: ...

    def back(self) -> None: ...

    def home(self) -> None: ...

    def launch(self, spec: LaunchSpec, scope: Scope) -> None: ...


def run_effects(effects: Sequence[Effect], package: str, state: dict[str, Any], scope: Scope,
                nav: Navigator) -> None:
    """Apply ``effects`` for ``package``; ``scope`` must read the same live ``state`` dict."""
    for effect in effects:
        if all_hold(effect.when, scope):
            _apply(effect, package, state, scope, nav)


def _apply(effect: Effect, package: str, state: dict[str, Any], scope: Scope, nav: Navigator) -> None:
    action = effect.action
    if action == "goto" and effect.goto is not None:
        nav.goto(package, effect.goto.screen, effect.goto.replace)
    elif action == "back":
        nav.back()
    elif action == "home":
        nav.home()
    elif action == "launch" and effect.launch is not None:
        nav.launch(effect.launch, scope)
    elif action == "set_var" and effect.set_var is not None:
        state[effect.set_var.var] = resolve(effect.set_var.value, scope)
    elif action == "toggle" and effect.toggle is not None:
        _change(state, scope, effect.toggle, lambda old: not truthy(old))
    elif action == "increment" and effect.increment is not None:
        step = effect.increment
        _change(state, scope, step.var, lambda old: _stepped(old, step))
    elif action == "remove" and effect.remove is not None:
        state[effect.remove.list] = _without(state.get(effect.remove.list), effect.remove, scope)
    elif action == "clear" and effect.clear is not None:
        for name in effect.clear:
            state[name] = empty_like(state.get(name))
    elif action == "append" and effect.append is not None:
        items = list(state.get(effect.append.list) or [])
        items.append(resolve(effect.append.item, scope))
        state[effect.append.list] = items
    elif action == "upsert" and effect.upsert is not None:
        spec = effect.upsert
        item = resolve(spec.item, scope)
        kept = [old for old in state.get(spec.list) or []
                if not (isinstance(old, dict) and old.get(spec.key) == item.get(spec.key))]
        state[spec.list] = [item, *kept]


def _change(state: dict[str, Any], scope: Scope, name: str, change: Callable[[Any], Any]) -> None:
    """Replace a state variable, or with ``item.field`` a field of the current list item, by
    ``change(old)``; an ``item.field`` outside a row of mappings changes nothing."""
    if not name.startswith("item."):
        state[name] = change(state.get(name))
        return
    item, field = scope.item, name.removeprefix("item.")
    if isinstance(item, MutableMapping):
        item[field] = change(item.get(field))


def _stepped(old: Any, step: IncrementSpec) -> int:
    """``old`` (a number, or text holding one; anything else counts as 0) plus ``step.by``, clamped."""
    try:
        value = int(float(fmt(old).strip() or 0))
    except (ValueError, OverflowError):  # not a number, nan, inf
        value = 0
    value += step.by
    if step.min is not None:
        value = max(step.min, value)
    if step.max is not None:
        value = min(step.max, value)
    return value


def _without(items: Any, spec: RemoveSpec, scope: Scope) -> list[Any]:
    """The list without the items ``spec`` names (compared as text when a key is given)."""
    target = resolve(spec.value, scope)
    if spec.key is None:
        return [old for old in items or [] if old != target]
    return [old for old in items or []
            if not (isinstance(old, dict) and fmt(old.get(spec.key)) == fmt(target))]


def empty_like(value: Any) -> Any:
    """The empty value of the same type: ``""``, ``[]``, ``{}``, ``False`` or ``0``."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return type(value)(0)
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return ""
