"""Schema of what an app does: the effects a tap, a long press or Enter runs, and the conditions
that guard them and decide what shows (``visible``, ``where``). The rest of an app file (app,
screen, node) is in ``model.py``; ``effects.py`` runs the effects.

Effect (exactly one action key, plus an optional ``when`` list of conditions)::

    goto: wifi | {screen: thread, replace: true}
    back: true          home: true
    launch: com.android.settings | {package: ..., screen: ..., extras: {var: template}}
    set: {var: to, value: "{item.name}"}
    toggle: wifi                      # or item.enabled: a field of the tapped row's list item
    increment: {var: qty, by: 1, min: 1, max: 99}   # add to a number (by may be negative); the
                                      # var may be item.qty; text that is not a number counts as 0
    append: {list: sent, item: {to: "{to}", text: "{draft}"}}
    upsert: {list: threads, key: name, item: {name: "{to}", snippet: "{draft}"}}  # moves to front
    remove: {list: cart, key: name, value: "{item.name}"}   # drop the items whose field equals
                                      # value; without key, the items equal to value ("{item}")
    clear: [title, body]

Condition::

    {var: wifi}                       # truthy
    {var: item.name, contains: "{query}"}   # case-insensitive substring
    {var: to, equals: "{item.with}"}  # string comparison after rendering; bool/int compare as is
    {var: draft, not_empty: true}
    negate: true                      # inverts any of the above
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Scalar = str | int | float | bool


class Spec(BaseModel):
    """A part of an app file: unknown keys are errors (naming the field), and it never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def as_list(value: Any) -> Any:
    """Accept a single mapping where a list is expected (``on_tap: {goto: x}``)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    return value


class Condition(Spec):
    """A test on a variable; see the module docstring."""

    var: str
    equals: Scalar | None = None
    contains: str | None = None
    not_empty: bool | None = None
    negate: bool = False

    @model_validator(mode="after")
    def _one_test(self) -> Condition:
        tests = [self.equals is not None, self.contains is not None, self.not_empty is not None]
        if sum(tests) > 1:
            raise ValueError("use at most one of equals, contains, not_empty")
        return self


class GotoSpec(Spec):
    screen: str
    replace: bool = False


class LaunchSpec(Spec):
    package: str
    screen: str | None = None
    extras: dict[str, Any] = Field(default_factory=dict)


class SetSpec(Spec):
    var: str
    value: Any


class AppendSpec(Spec):
    list: str
    item: Any


class UpsertSpec(Spec):
    list: str
    key: str
    item: dict[str, Any]


class IncrementSpec(Spec):
    var: str
    by: int = 1
    min: int | None = None
    max: int | None = None

    @model_validator(mode="after")
    def _range(self) -> IncrementSpec:
        if self.min is not None and self.max is not None and self.max < self.min:
            raise ValueError("max must not be less than min")
        return self


class RemoveSpec(Spec):
    list: str
    key: str | None = None
    value: Any


_ACTIONS = ("goto", "back", "home", "launch", "set_var", "toggle", "increment", "append", "upsert", "remove",
            "clear")


class Effect(Spec):
    """One step of a behaviour: exactly one action, guarded by ``when``."""

    when: list[Condition] = Field(default_factory=list)
    goto: GotoSpec | None = None
    back: bool = False
    home: bool = False
    launch: LaunchSpec | None = None
    set_var: SetSpec | None = Field(default=None, alias="set")
    toggle: str | None = None
    increment: IncrementSpec | None = None
    append: AppendSpec | None = None
    upsert: UpsertSpec | None = None
    remove: RemoveSpec | None = None
    clear: list[str] | None = None

    @field_validator("when", mode="before")
    @classmethod
    def _when_list(cls, value: Any) -> Any:
        return as_list(value)

    @field_validator("goto", mode="before")
    @classmethod
    def _goto_short(cls, value: Any) -> Any:
        return {"screen": value} if isinstance(value, str) else value

    @field_validator("launch", mode="before")
    @classmethod
    def _launch_short(cls, value: Any) -> Any:
        return {"package": value} if isinstance(value, str) else value

    @field_validator("increment", mode="before")
    @classmethod
    def _increment_short(cls, value: Any) -> Any:
        return {"var": value} if isinstance(value, str) else value

    @field_validator("clear", mode="before")
    @classmethod
    def _clear_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _exactly_one(self) -> Effect:
        chosen = [name for name in _ACTIONS if getattr(self, name) not in (None, False)]
        if len(chosen) != 1:
            raise ValueError(
                "an effect needs exactly one of goto, back, home, launch, set, toggle, increment, append, "
                f"upsert, remove, clear (got {', '.join(chosen) or 'none'})"
            )
        return self

    @property
    def action(self) -> str:
        """The name of the action this effect performs."""
        return next(name for name in _ACTIONS if getattr(self, name) not in (None, False))
