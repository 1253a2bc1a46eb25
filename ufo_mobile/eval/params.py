"""Task parameters: the values that make each run of a task a variant, drawn from a seeded RNG.

As AndroidWorld's tasks do, a task names what varies (a contact, a time, an item, an amount) and
every seed gives one concrete variant; the same task and seed always give the same values, on
every machine (the RNG is seeded with ``"<task id>#<seed>"``). Parameters are drawn in the order
they are written, and a derived one may use those above it::

    params:
      contact: {choice: [{name: Alice Johnson, phone: "+1 555-0101"}, {name: Bob Smith, ...}]}
      qty: {int: [2, 5]}                   # 2, 3, 4 or 5 (step: 1)
      time: {time: ["06:00", "09:45"], step: 15}
                                           # {text: "07:15", h: 7, m: 15, hh: "07", mm: "15"}
      pair: {sample: [Oat milk, Bananas, Spaghetti], k: 2}   # two different ones, as a list
      note: {format: "Call $contact.name back"}               # derived: text from a template
      qty_text: {format: "$qty"}           # "3": a number as text (for a reply's typed text)
      row: {sum: [qty, 4]}                 # derived: integers and integer parameters added up

Fields of a choice that the task text does not use may serve the oracle script (the row where
the item shows on screen, say).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ufo_mobile.eval.template import TemplateError, lookup, render
from ufo_mobile.sim.phone.template import fmt

_KINDS = ("choice", "int_range", "time", "sample", "format", "sum")
_CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


class ParamSpec(BaseModel):
    """How one parameter is drawn: exactly one of choice, int, time, sample, format, sum."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    choice: list[Any] | None = Field(default=None, min_length=1)
    int_range: tuple[int, int] | None = Field(default=None, alias="int")
    time: tuple[str, str] | None = None
    step: int = Field(default=1, gt=0, description="int: the step between values; time: minutes")
    sample: list[Any] | None = Field(default=None, min_length=1)
    k: int = Field(default=2, gt=0, description="sample: how many different items")
    format: str | None = None
    sum: list[int | str] | None = Field(default=None, min_length=1)

    @field_validator("time")
    @classmethod
    def _clock_times(cls, value: tuple[str, str] | None) -> tuple[str, str] | None:
        if value is not None:
            for text in value:
                if not _CLOCK.match(text):
                    raise ValueError(f"{text!r} is not a 24-hour time HH:MM")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> ParamSpec:
        chosen = [name for name in _KINDS if getattr(self, name) is not None]
        if len(chosen) != 1:
            got = ", ".join(name.replace("int_range", "int") for name in chosen) or "none"
            raise ValueError(f"a parameter needs exactly one of choice, int, time, sample, format, sum (got {got})")
        if self.int_range is not None and self.int_range[1] < self.int_range[0]:
            raise ValueError("int: [low, high] needs low <= high")
        if self.time is not None and _minutes(self.time[1]) < _minutes(self.time[0]):
            raise ValueError("time: [from, to] needs from <= to")
        if self.sample is not None and self.k > len(self.sample):
            raise ValueError(f"sample: k is {self.k}, but there are only {len(self.sample)} items")
        return self

    def draw(self, rng: random.Random, earlier: Mapping[str, Any]) -> Any:
        """One value; ``earlier`` holds the parameters drawn before this one.

        Raises:
            TemplateError: a derived parameter names an unknown parameter or adds up a non-integer.
        """
        if self.choice is not None:
            return rng.choice(self.choice)
        if self.int_range is not None:
            low, high = self.int_range
            return rng.choice(range(low, high + 1, self.step))
        if self.time is not None:
            start, end = (_minutes(text) for text in self.time)
            return clock_value(rng.choice(range(start, end + 1, self.step)))
        if self.sample is not None:
            return rng.sample(self.sample, self.k)
        if self.format is not None:
            return fmt(render(self.format, earlier))
        return _add_up(self.sum or [], earlier)


def _minutes(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def clock_value(minutes: int) -> dict[str, Any]:
    """A time of day as a parameter: its text and its parts, as numbers and as two digits."""
    hour, minute = divmod(minutes, 60)
    return {"text": f"{hour:02d}:{minute:02d}", "h": hour, "m": minute, "hh": f"{hour:02d}", "mm": f"{minute:02d}"}


def _add_up(terms: list[int | str], earlier: Mapping[str, Any]) -> int:
    total = 0
    for term in terms:
        value = lookup(earlier, term) if isinstance(term, str) else term
        if isinstance(value, bool) or not isinstance(value, int):
            raise TemplateError(f"sum: {term} is {value!r}, not an integer")
        total += value
    return total


def draw_params(specs: Mapping[str, ParamSpec], task_id: str, seed: int) -> dict[str, Any]:
    """Every parameter of a task for one seed, in the order written.

    Raises:
        TemplateError: a derived parameter is wrong (its ``at`` names the parameter).
    """
    rng = random.Random(f"{task_id}#{seed}")
    values: dict[str, Any] = {}
    for name, spec in specs.items():
        try:
            values[name] = spec.draw(rng, values)
        except TemplateError as exc:
            raise TemplateError(exc.message, ("params", name)) from None
    return values
