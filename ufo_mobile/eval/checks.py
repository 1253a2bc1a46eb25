"""The check language: what must be true of the phone (and of the answer) after a run.

A check looks at the simulated phone's app state once the run is over, never at the actions
taken, so any way of reaching the goal counts. Each evaluates to a ``Verdict(passed, why)``.

State checks (``app`` defaults to the task's ``app``; ``path`` walks the app's state variables:
``wifi``, ``cart.0.qty``, ``orders.-1.items``)::

    {app: com.android.settings, path: wifi, equals: true}
    {app: com.example.shop, path: cart, contains: {name: "$item", qty: 2}}   # a list item matching
    {path: notes.0.body, contains: "milk"}            # on text: the words, in order
    {path: connected, in: [HomeNet, Office-5G]}       # one of these
    {path: cart, count: 2}                            # a list's length ...
    {path: alarms, count: 1, where: {label: Gym}}     # ... or of the items matching ``where``

Comparisons follow ``ufo_mobile.eval.match``: by meaning (``"2"`` equals 2), mappings as partial
patterns, ``{words: ...}`` and ``{one_of: [...]}`` inside patterns.

Answer checks (information retrieval: the run must end in FINISH with an answer that holds the
expected words, in order; ``exact: true`` compares the whole answer instead)::

    {answer: "$contact.phone"}
    {answer: ["January 17", "10:30"]}                 # every one of these
    {answer: {app: com.android.settings, path: connected}}   # the value on the phone after the run

Combinators::

    {all: [<check>, ...]}    {any: [<check>, ...]}    {not: <check>}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ufo_mobile.core.status import MobileAgentStatus
from ufo_mobile.errors import first_problem
from ufo_mobile.eval import match

_TESTS = ("equals", "contains", "in_", "count")


class Verdict(NamedTuple):
    """The outcome of a check: whether it passed, and why, in one line."""

    passed: bool
    why: str


class CheckError(ValueError):
    """A malformed check; ``at`` is the key path inside the check."""

    def __init__(self, message: str, at: tuple[str, ...] = ()) -> None:
        self.at = at
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class RunFacts:
    """What a check may look at: how the run ended, and the phone's state afterwards."""

    status: str
    answer: str
    reason: str
    state: Callable[[str], dict[str, Any]]  # package -> its state variables (a copy)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class StateRef(_Strict):
    """A value in an app's state to compare with: ``path`` in ``app``'s state (the task's app by default)."""

    app: str | None = None
    path: str = Field(min_length=1)


class StateCheck(_Strict):
    """A test of one value in an app's state."""

    app: str | None = None
    path: str = Field(min_length=1)
    equals: Any = None
    contains: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    count: int | None = Field(default=None, ge=0)
    where: Any = None

    @model_validator(mode="after")
    def _one_test(self) -> StateCheck:
        chosen = [name for name in _TESTS if name in self.model_fields_set]
        if len(chosen) != 1:
            got = ", ".join(name.rstrip("_") for name in chosen) or "none"
            raise ValueError(f"a state check needs exactly one of equals, contains, in, count (got {got})")
        if "where" in self.model_fields_set and self.count is None:
            raise ValueError("where goes with count")
        return self


class AnswerCheck(_Strict):
    """A test of the run's final answer."""

    answer: str | int | float | list[str | int | float] | StateRef
    exact: bool = False


@dataclass(frozen=True)
class Combined:
    """``all``, ``any`` or ``not`` over other checks."""

    op: Literal["all", "any", "not"]
    parts: tuple[Check, ...]


Check = StateCheck | AnswerCheck | Combined


def parse_check(data: Any, at: tuple[str, ...] = ("check",)) -> Check:
    """A check from YAML data (placeholders already filled). Raises ``CheckError``."""
    if not isinstance(data, dict):
        raise CheckError("a check is a mapping (a state check, an answer check, all, any or not)", at)
    if {"all", "any", "not"} & data.keys():
        op: Literal["all", "any", "not"] = "all" if "all" in data else "any" if "any" in data else "not"
        if len(data) != 1:
            raise CheckError(f"{op} stands alone in its mapping (put the other keys in checks inside it)", at)
        if op == "not":
            return Combined("not", (parse_check(data["not"], (*at, "not")),))
        items = data[op]
        if not isinstance(items, list) or not items:
            raise CheckError(f"{op} takes a non-empty list of checks", (*at, op))
        return Combined(op, tuple(parse_check(item, (*at, op, str(i))) for i, item in enumerate(items)))
    model: type[StateCheck] | type[AnswerCheck] = AnswerCheck if "answer" in data else StateCheck
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise CheckError(message, (*at, *where)) from None


def walk(check: Check) -> list[Check]:
    """This check and every check inside it."""
    if isinstance(check, Combined):
        return [check, *(inner for part in check.parts for inner in walk(part))]
    return [check]


# -- evaluation --------------------------------------------------------------------------------


def evaluate(check: Check, facts: RunFacts, default_app: str) -> Verdict:
    """Evaluate ``check`` against a finished run; state checks without ``app`` use ``default_app``."""
    if isinstance(check, Combined):
        return _combine(check, facts, default_app)
    if isinstance(check, AnswerCheck):
        return _answer(check, facts, default_app)
    return _state(check, facts, default_app)


def _combine(check: Combined, facts: RunFacts, default_app: str) -> Verdict:
    verdicts = [evaluate(part, facts, default_app) for part in check.parts]
    if check.op == "not":
        inner = verdicts[0]
        return Verdict(not inner.passed, inner.why + (" (as it must not)" if inner.passed else ""))
    if check.op == "all":
        failed = [v.why for v in verdicts if not v.passed]
        return Verdict(not failed, "; ".join(failed) if failed else "; ".join(v.why for v in verdicts))
    passed = [v.why for v in verdicts if v.passed]
    return Verdict(bool(passed), passed[0] if passed else " / ".join(v.why for v in verdicts))


def read_path(facts: RunFacts, app: str, path: str) -> tuple[bool, Any, str]:
    """``(found, value, what)``: the value at ``path`` in ``app``'s state, and how to name it."""
    what = f"{app} {path}"
    value: Any = facts.state(app)
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and _index(part, len(value)) is not None:
            value = value[_index(part, len(value)) or 0]
        else:
            return False, None, what
    return True, value, what


def _index(part: str, length: int) -> int | None:
    try:
        index = int(part)
    except ValueError:
        return None
    return index if -length <= index < length else None


def _state(check: StateCheck, facts: RunFacts, default_app: str) -> Verdict:
    found, value, what = read_path(facts, check.app or default_app, check.path)
    if not found:
        return Verdict(False, f"{what} does not exist")
    if "equals" in check.model_fields_set:
        ok = match.matches(value, check.equals)
        return Verdict(ok, f"{what} is {match.show(value)}" + ("" if ok else f", not {match.show(check.equals)}"))
    if check.in_ is not None:
        ok = any(match.matches(value, option) for option in check.in_)
        return Verdict(ok, f"{what} is {match.show(value)}" + ("" if ok else f", not one of {match.show(check.in_)}"))
    if check.count is not None:
        if not isinstance(value, list):
            return Verdict(False, f"{what} is {match.show(value)}, not a list")
        items = value if check.where is None else [item for item in value if match.matches(item, check.where)]
        which = "items" if check.where is None else f"items matching {match.show(check.where)}"
        ok = len(items) == check.count
        return Verdict(ok, f"{what} has {len(items)} {which}" + ("" if ok else f", not {check.count}"))
    return _contains(what, value, check.contains)


def _contains(what: str, value: Any, pattern: Any) -> Verdict:
    if isinstance(value, list):
        ok = any(match.matches(item, pattern) for item in value)
        if ok:
            return Verdict(True, f"{what} has an item matching {match.show(pattern)}")
        return Verdict(False, f"{what} has no item matching {match.show(pattern)} (it holds {match.show(value)})")
    if isinstance(value, dict):
        return Verdict(False, f"{what} is a mapping; contains needs a list or text")
    ok = match.holds_words(value, pattern)
    return Verdict(ok, f"{what} is {match.show(value)}, which " + ("holds" if ok else "does not hold")
                   + f" {match.show(pattern)}")


def _answer(check: AnswerCheck, facts: RunFacts, default_app: str) -> Verdict:
    if facts.status != MobileAgentStatus.FINISH:
        return Verdict(False, f"the run ended in {facts.status} ({match.show(facts.reason, 80)}), with no answer")
    if isinstance(check.answer, StateRef):
        found, value, what = read_path(facts, check.answer.app or default_app, check.answer.path)
        if not found:
            return Verdict(False, f"{what} (the expected answer) does not exist")
        expected: list[Any] = [value]
    else:
        expected = list(check.answer) if isinstance(check.answer, list) else [check.answer]
    answer = facts.answer
    if check.exact:
        missing = [item for item in expected if not match.same(answer.strip().rstrip("."), item)]
    else:
        missing = [item for item in expected if not match.holds_words(answer, item)]
    if missing:
        how = "is not" if check.exact else "does not hold"
        return Verdict(False, f"the answer {match.show(answer, 120)} {how} {match.show(missing[0])}")
    return Verdict(True, f"the answer {match.show(answer, 120)} holds {match.show(expected)}")
