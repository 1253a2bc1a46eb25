"""The parsed dump's types: ``Bounds`` (a screen rectangle), ``UINode`` (one ``<node>``) and
``UITree`` (the windows and every node). ``hierarchy.parse_hierarchy`` makes them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


@dataclass(slots=True, unsafe_hash=True)
class Bounds:
    """A screen rectangle in pixels; ``right``/``bottom`` are exclusive, as in Android's ``Rect``.

    A value: compared and hashed by its four numbers. Treat it as immutable (it may be shared). Not
    ``frozen``: a frozen dataclass's ``__init__`` costs four times as much, and a dump makes one per
    node whose rectangle is asked for.
    """

    left: int
    top: int
    right: int
    bottom: int

    @classmethod
    def parse(cls, text: str) -> Bounds:
        """Parse uiautomator's ``[l,t][r,b]``; anything unreadable becomes an empty rectangle."""
        if text[:1] == "[" and text[-1:] == "]":  # split at the brackets and commas: no regex, as a rule
            first, between, second = text[1:-1].partition("][")
            left, comma, top = first.partition(",")
            right, comma2, bottom = second.partition(",")
            if (between and comma and comma2 and (left.isdecimal() or left[:1] == "-" and left[1:].isdecimal())
                    and (top.isdecimal() or top[:1] == "-" and top[1:].isdecimal())
                    and (right.isdecimal() or right[:1] == "-" and right[1:].isdecimal())
                    and (bottom.isdecimal() or bottom[:1] == "-" and bottom[1:].isdecimal())):
                return cls(int(left), int(top), int(right), int(bottom))
        match = _BOUNDS.fullmatch(text) or _BOUNDS.fullmatch(text.strip())
        if match is None:
            return cls(0, 0, 0, 0)
        left, top, right, bottom = match.groups()
        return cls(int(left), int(top), int(right), int(bottom))

    @property
    def width(self) -> int:
        return max(0, self.right - self.left)

    @property
    def height(self) -> int:
        return max(0, self.bottom - self.top)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def is_empty(self) -> bool:
        return self.right <= self.left or self.bottom <= self.top

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    def intersect(self, other: Bounds) -> Bounds | None:
        """The overlap of both rectangles, or ``None`` when they do not overlap."""
        box = Bounds(max(self.left, other.left), max(self.top, other.top),
                     min(self.right, other.right), min(self.bottom, other.bottom))
        return None if box.is_empty else box

    def overlaps(self, other: Bounds) -> bool:
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)

    def contains(self, other: Bounds) -> bool:
        """True when ``other`` lies entirely inside this rectangle."""
        return (self.left <= other.left and self.top <= other.top
                and other.right <= self.right and other.bottom <= self.bottom)

    def contains_point(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def union(self, other: Bounds) -> Bounds:
        return Bounds(min(self.left, other.left), min(self.top, other.top),
                      max(self.right, other.right), max(self.bottom, other.bottom))

    def as_list(self) -> list[int]:
        return [self.left, self.top, self.right, self.bottom]


@dataclass(slots=True, eq=False)
class UINode:
    """One ``<node>`` of the dump. Equality is identity; ``order`` identifies it within its tree.

    Treat nodes as immutable. (Not ``frozen``: a frozen dataclass's ``__init__`` sets every field
    through ``object.__setattr__``, which tripled the cost of building a tree.)

    ``order`` is the pre-order position in the document, ``end`` the exclusive end of its subtree
    (so ``a.order < b.order < a.end`` means ``b`` is inside ``a``), ``parent`` the parent's
    ``order`` (-1 for a root), ``window`` the root's position (0 = top-most window) and ``z`` the
    paint rank (higher is drawn on top). ``bounds`` are read from the dump's text when first asked
    for: more than half the nodes of a real dump are bare layouts whose rectangle nobody asks for.
    """

    class_name: str
    text: str
    resource_id: str
    package: str
    content_desc: str
    hint: str
    _bounds: Bounds | str  # the dump's text until ``bounds`` reads it
    checkable: bool
    checked: bool
    clickable: bool
    long_clickable: bool
    enabled: bool
    focusable: bool
    focused: bool
    scrollable: bool
    password: bool
    selected: bool
    visible_to_user: bool
    naf: bool
    index: int
    depth: int
    drawing_order: int
    window: int
    display_id: int
    order: int
    end: int
    parent: int
    z: int
    children: tuple[UINode, ...] = field(default=())

    @property
    def bounds(self) -> Bounds:
        box = self._bounds
        if isinstance(box, str):
            box = self._bounds = Bounds.parse(box)
        return box

    @property
    def short_class(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def resource_name(self) -> str:
        """The part of the resource id after ``:id/`` (``com.app:id/send`` -> ``send``)."""
        return self.resource_id.rsplit("/", 1)[-1]

    def contains_node(self, other: UINode) -> bool:
        """True when ``other`` is a strict descendant of this node (same tree)."""
        return self.order < other.order < self.end

    def iter(self) -> Iterator[UINode]:
        """This node and its descendants in document order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


@dataclass(frozen=True, slots=True)
class UITree:
    """A parsed dump: its roots (windows, top-most first), every node in document order, rotation."""

    rotation: int
    roots: tuple[UINode, ...]
    nodes: tuple[UINode, ...]

    @property
    def bounds(self) -> Bounds:
        """The union of the root bounds."""
        box = self.roots[0].bounds
        for root in self.roots[1:]:
            box = box.union(root.bounds)
        return box

    def parent(self, node: UINode) -> UINode | None:
        return self.nodes[node.parent] if node.parent >= 0 else None

    def ancestors(self, node: UINode) -> Iterator[UINode]:
        """The parent, grandparent, ... up to the window root."""
        current = node.parent
        while current >= 0:
            ancestor = self.nodes[current]
            yield ancestor
            current = ancestor.parent
