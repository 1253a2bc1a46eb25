"""How much one screen looks like another: a score over the controls, and which control is which.

Both screens are lists of controls as ``controls.json`` holds them (``UIState.get_element_info``).
Each control becomes a signature:

- ``cls``: the class's short name (``LinearLayout``);
- ``rid``: the resource id without its package (``com.android.settings:id/title`` -> ``title``);
- ``label``: its text, description or hint, else the texts of the controls inside it (a row is
  known by its title), casefolded, spaces collapsed, digits as ``#`` (a clock or a battery level
  does not make a screen another one);
- ``pos``: its centre as a fraction of the screen's width and height (so a screen of another size
  still compares);
- ``weight``: 2 for a control one acts on or reads (clickable, editable, checkable, scrollable, or
  with a label), 1 otherwise, 0.5 for an empty container.

Two controls ``a`` and ``b`` agree by

    s(a, b) = 0.25 [cls equal] + 0.25 [rid equal] + 0.35 label(a, b) + 0.15 max(0, 1 - d(a, b) / 0.5)

where ``label`` is 1 for equal labels, else the Jaccard index of their sets of words (runs of letters
and digits), and ``d`` the
distance between the centres (in screen fractions). Pairs are formed greedily, best first, one to
one, and only when ``s >= PAIR_MIN`` (0.6); controls equal in everything pair first. The screen's
score is the weighted Jaccard index of the two sets, with the pairs as a soft intersection, in
which a control that came in (no partner among the recorded ones) weighs half:

    I = sum over pairs of s(a, b) * (w(a) + w(b)) / 2
    score = I / (W(recorded) + W(current) - I - NEW_DISCOUNT * W(new))

1.0 for the same screen. A control that went away says more than one that came in: the screen a
step was decided on still stands when a phone shows a few more things on it (a launcher with two
more apps installed, a list with a new row), and not when what the step saw has gone.

A scrolled list keeps the rows still in view (they pair by class, id and label; only their
positions differ), and loses the rows that left and came in: on the real dumps of
``../shared/data/ui_dumps``, a list scrolled by a fifth of its height scores 0.71 to 1.00 (median
0.81), while the screens of two different apps score at most 0.30 (either way round).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PAIR_MIN = 0.6
"""The least agreement for two controls to count as the same one."""

NEW_DISCOUNT = 0.5
"""The share of a new control's weight left out of the union (see the module docstring)."""

TARGET_MIN = 0.8
"""The least agreement of a control an action names with its partner (a guard uses it: a row at the
same place with another label is not the row the action meant)."""

W_CLASS, W_ID, W_LABEL, W_POS = 0.25, 0.25, 0.35, 0.15
POS_SPAN = 0.5
"""Centres this far apart (in screen fractions) no longer agree in position at all."""

INNER_TEXTS = 3
"""A control without a label of its own is known by the first this many texts inside it."""

_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")

Control = Mapping[str, Any]


@dataclass(frozen=True)
class Signature:
    """What a control is, as far as matching goes (see the module docstring)."""

    index: int
    cls: str
    rid: str
    label: str
    words: frozenset[str]
    pos: tuple[float, float]
    weight: float
    exact: tuple[Any, ...]


@dataclass
class Comparison:
    """The outcome of comparing a recorded screen with the current one."""

    score: float
    pairs: dict[int, int] = field(default_factory=dict)  # recorded index -> current index
    agreement: dict[int, float] = field(default_factory=dict)  # recorded index -> s(recorded, partner)
    missing: list[int] = field(default_factory=list)  # recorded indices with no partner, in screen order
    new: list[int] = field(default_factory=list)  # current indices with no partner, in screen order


def normalise(text: str) -> str:
    return _DIGITS.sub("#", _SPACE.sub(" ", text).strip().casefold())


def short_id(resource_id: str) -> str:
    return resource_id.rsplit("/", 1)[-1] if resource_id else ""


def own_label(control: Control) -> str:
    for key in ("text", "description", "hint"):
        value = control.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def inner_labels(controls: Sequence[Control]) -> dict[int, str]:
    """Each control's label: its own, else the first texts of the controls inside it."""
    children: dict[int, list[int]] = {}
    by_index = {int(c.get("index", 0)): c for c in controls}
    for c in controls:
        children.setdefault(int(c.get("parent") or 0), []).append(int(c.get("index", 0)))
    labels: dict[int, str] = {}
    for index, control in by_index.items():
        label = own_label(control)
        if not label:
            found: list[str] = []
            stack = list(reversed(children.get(index, [])))
            while stack and len(found) < INNER_TEXTS:
                child = stack.pop()
                text = own_label(by_index.get(child, {}))
                if text:
                    found.append(text)
                stack.extend(reversed(children.get(child, [])))
            label = " ".join(found)
        labels[index] = label
    return labels


def signatures(controls: Sequence[Control], screen: tuple[int, int]) -> list[Signature]:
    """The signatures of a screen's controls (``screen`` is its width and height in pixels)."""
    width, height = max(screen[0], 1), max(screen[1], 1)
    labels = inner_labels(controls)
    out = []
    for c in controls:
        index = int(c.get("index", 0))
        left, top, right, bottom = (list(c.get("bounds") or [0, 0, 0, 0]) + [0, 0, 0, 0])[:4]
        label = normalise(labels.get(index, ""))
        acts = any(bool(c.get(k)) for k in ("clickable", "editable", "checkable", "scrollable"))
        weight = 2.0 if acts or own_label(c) else 1.0 if label or c.get("resource_id") else 0.5
        cls = str(c.get("class") or "").rsplit(".", 1)[-1]
        rid = short_id(str(c.get("resource_id") or ""))
        pos = ((left + right) / 2 / width, (top + bottom) / 2 / height)
        out.append(Signature(index, cls, rid, label, frozenset(_WORD.findall(label)), pos, weight,
                             (cls, rid, label, round(pos[0], 3), round(pos[1], 3))))
    return out


def agreement(a: Signature, b: Signature) -> float:
    """``s(a, b)``, between 0 and 1."""
    if a.label == b.label:
        label = 1.0
    elif a.words and b.words:
        label = len(a.words & b.words) / len(a.words | b.words)
    else:
        label = 0.0
    distance = math.dist(a.pos, b.pos)
    return (W_CLASS * (a.cls == b.cls) + W_ID * (a.rid == b.rid) + W_LABEL * label
            + W_POS * max(0.0, 1.0 - distance / POS_SPAN))


def compare(recorded: Sequence[Control], recorded_screen: tuple[int, int],
            current: Sequence[Control], current_screen: tuple[int, int]) -> Comparison:
    """Score ``current`` against ``recorded`` and pair their controls (see the module docstring)."""
    old, now = signatures(recorded, recorded_screen), signatures(current, current_screen)
    if not old and not now:
        return Comparison(1.0)
    pairs: dict[int, tuple[int, float]] = {}
    taken: set[int] = set()
    free_now: dict[tuple[Any, ...], list[Signature]] = {}
    for sig in now:
        free_now.setdefault(sig.exact, []).append(sig)
    rest_old = []
    for sig in old:  # equal in everything: pair at once, in screen order
        same = free_now.get(sig.exact)
        if same:
            partner = same.pop(0)
            pairs[sig.index] = (partner.index, 1.0)
            taken.add(partner.index)
        else:
            rest_old.append(sig)
    rest_now = [s for s in now if s.index not in taken]
    candidates = sorted(((agreement(a, b), a.index, b.index) for a in rest_old for b in rest_now),
                        key=lambda t: (-t[0], t[1], t[2]))
    for s, a_index, b_index in candidates:
        if s < PAIR_MIN:
            break
        if a_index in pairs or b_index in taken:
            continue
        pairs[a_index] = (b_index, s)
        taken.add(b_index)
    weight_old = {s.index: s.weight for s in old}
    weight_now = {s.index: s.weight for s in now}
    shared = sum(s * (weight_old[a] + weight_now[b]) / 2 for a, (b, s) in pairs.items())
    new_weight = sum(w for index, w in weight_now.items() if index not in taken)
    union = sum(weight_old.values()) + sum(weight_now.values()) - shared - NEW_DISCOUNT * new_weight
    return Comparison(
        score=round(shared / union, 4) if union > 0 else 1.0,
        pairs={a: b for a, (b, _) in sorted(pairs.items())},
        agreement={a: round(s, 4) for a, (_, s) in sorted(pairs.items())},
        missing=[s.index for s in old if s.index not in pairs],
        new=[s.index for s in now if s.index not in taken],
    )


def describe(control: Control | None, limit: int = 40) -> str:
    """``[3] LinearLayout 'Wi-Fi'``: a control as the mismatch report names it."""
    if control is None:
        return "?"
    label = own_label(control)
    label = label if len(label) <= limit else label[: limit - 1] + "…"
    cls = str(control.get("class") or "?").rsplit(".", 1)[-1]
    shown = f" {label!r}" if label else ""
    return f"[{control.get('index', '?')}] {cls}{shown}"
