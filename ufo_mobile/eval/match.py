"""How a value on the phone is compared with what a check expects.

Values on a phone are typed by people (and agents): ``"2"`` in a quantity field, ``"07"`` in an
hour field, ``"oat milk"`` in a search. So equality is on meaning, not on type:

- numbers: ``2``, ``"2"``, ``"02"`` and ``2.0`` are equal;
- booleans: ``true`` equals ``true`` and the text ``"true"`` (likewise false), never 1 or 0;
- text: equal after folding case and collapsing spaces (``"Oat  Milk "`` equals ``"oat milk"``);
- ``null`` equals a missing value, ``null`` and ``""``;
- a mapping is a partial pattern: each of its keys must be in the value and match (other keys
  of the value are free); a list must have as many items, each matching in turn;
- two pattern forms: ``{words: "..."}`` (the value's text holds these words, in order, as in
  ``contains`` on text) and ``{one_of: [a, b]}`` (the value matches one of them).

"Words" are runs of letters and digits, case folded, numbers without leading zeros, so ``"Call
+1 555-0101"`` holds the words of ``"555 0101"`` and of ``"+1 555-0101"``, but ``"13"`` does not
hold ``"3"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ufo_mobile.safe_text import printable
from ufo_mobile.sim.phone.template import fmt as as_text  # a value as the text a screen shows

_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


def words(value: Any) -> list[str]:
    """The words of a value's text (see the module docstring)."""
    found = _WORD.findall(as_text(value).casefold())
    return [str(int(word)) if word.isascii() and word.isdigit() else word for word in found]


def holds_words(value: Any, expected: Any) -> bool:
    """Whether the words of ``expected`` appear in ``value``'s, next to each other and in order."""
    have, want = words(value), words(expected)
    if not want:
        return not as_text(expected).strip() or as_text(expected).strip() in as_text(value)
    return any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return float(value.strip())
    return None


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def same(value: Any, expected: Any) -> bool:
    """Equality of two scalars by meaning (see the module docstring)."""
    if expected is None or expected == "":
        return value is None or value == ""
    if isinstance(expected, bool) or isinstance(value, bool):
        return as_text(value).casefold() == as_text(expected).casefold() and value is not None
    left, right = _number(value), _number(expected)
    if left is not None and right is not None:
        return left == right
    if isinstance(value, (dict, list)):
        return False
    return _fold(as_text(value)) == _fold(as_text(expected))


def matches(value: Any, pattern: Any) -> bool:
    """Whether ``value`` matches ``pattern`` (scalars, partial mappings, lists, the two forms)."""
    if isinstance(pattern, Mapping):
        if set(pattern) == {"words"}:
            return not isinstance(value, (dict, list)) and holds_words(value, pattern["words"])
        if set(pattern) == {"one_of"} and isinstance(pattern["one_of"], list):
            return any(matches(value, option) for option in pattern["one_of"])
        return isinstance(value, Mapping) and all(
            key in value and matches(value[key], part) for key, part in pattern.items())
    if isinstance(pattern, list):
        return isinstance(value, list) and len(value) == len(pattern) and all(
            matches(item, part) for item, part in zip(value, pattern, strict=True))
    return same(value, pattern)


def show(value: Any, limit: int = 160) -> str:
    """A value for a check's explanation: compact JSON, made safe to print and cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    except ValueError:  # a circular structure: not from the phone, but never crash an explanation
        text = repr(value)
    return printable(text) if len(text) <= limit else printable(text[:limit]) + "…"
