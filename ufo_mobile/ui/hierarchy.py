"""Parse a uiautomator hierarchy dump into an immutable tree of ``UINode``.

Accepts the output of ``uiautomator dump`` and uiautomator2's ``dump_hierarchy``: with or without
the XML prolog or a byte-order mark, pretty-printed or on one line, with the ``UI hierchary dumped
to: /dev/tty`` trailer, with one root or several (multi-window dumps, optionally wrapped in
``<display>``/``<window>`` elements). Anything else raises ``UIParseError`` saying what was wrong.

Windows: accessibility reports windows top-most first, so the first root is the top layer. Each node
gets a ``z`` paint rank (higher = drawn later = on top) that combines the window order with the
``drawing-order`` of siblings, falling back to sibling order when the dump has no drawing order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from ufo_mobile.errors import UIParseError

# Bytes that are never valid in XML 1.0 (C0 controls except tab, LF, CR); some devices emit them.
_INVALID_XML_BYTES = bytes(b for b in range(32) if b not in (9, 10, 13))
_EMPTY_HIERARCHY = re.compile(rb"<hierarchy\b[^<>]*/>")
_WRAPPER_TAGS = frozenset({"display", "window", "windows", "displays"})
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


@dataclass(frozen=True, slots=True)
class Bounds:
    """A screen rectangle in pixels; ``right``/``bottom`` are exclusive, as in Android's ``Rect``."""

    left: int
    top: int
    right: int
    bottom: int

    @classmethod
    def parse(cls, text: str) -> Bounds:
        """Parse uiautomator's ``[l,t][r,b]``; anything unreadable becomes an empty rectangle."""
        match = _BOUNDS.fullmatch(text.strip())
        if match is None:
            return cls(0, 0, 0, 0)
        left, top, right, bottom = map(int, match.groups())
        return cls(left, top, right, bottom)

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
    paint rank (higher is drawn on top).
    """

    class_name: str
    text: str
    resource_id: str
    package: str
    content_desc: str
    hint: str
    bounds: Bounds
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


@dataclass(slots=True)
class _Raw:
    """Mutable per-node scratch data used while building the immutable tree."""

    attrs: dict[str, str]
    parent: int
    depth: int
    window: int
    display_id: int
    kids: list[int] = field(default_factory=list)
    end: int = 0
    z: int = 0


# Parsing into lxml's C tree and walking it is several times faster than a parser target, which
# calls back into Python for every element and hands over attribute dicts that must be copied.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, recover=False,
                          load_dtd=False, remove_comments=True, remove_pis=True)


def _collect(root: Any) -> list[_Raw]:
    """Every ``<node>`` in document order with parent, depth, window and display.

    Elements other than ``<node>`` are transparent; ``<display>``/``<window>`` wrappers may set the
    display id of the nodes inside them.
    """
    raws: list[_Raw] = []
    windows = 0
    # (element, parent order, display id in effect); a stack walked in document order
    stack: list[tuple[Any, int, int]] = [(child, -1, 0) for child in reversed(root)]
    while stack:
        element, parent, display = stack.pop()
        tag = element.tag
        if tag != "node":
            if not isinstance(tag, str):
                continue
            if tag in _WRAPPER_TAGS:
                display = _int(element.get("display-id", element.get("id")), display)
            stack.extend((child, parent, display) for child in reversed(element))
            continue
        order = len(raws)
        attrs = dict(zip(element.keys(), element.values(), strict=True))  # one copy; dict.get is cheaper
        if parent >= 0:
            above = raws[parent]
            above.kids.append(order)
            window, depth, display = above.window, above.depth + 1, above.display_id
        else:
            window, depth = windows, 0
            windows += 1
        raws.append(_Raw(attrs, parent, depth, window, _int(attrs.get("display-id"), display)))
        stack.extend((child, order, display) for child in reversed(element))
    _set_ends(raws)
    return raws


def _set_ends(raws: list[_Raw]) -> None:
    """``end`` = one past the last descendant's order (the subtree is ``order..end-1``)."""
    for order in range(len(raws) - 1, -1, -1):
        raw = raws[order]
        raw.end = raws[raw.kids[-1]].end if raw.kids else order + 1


def parse_hierarchy(data: str | bytes) -> UITree:
    """Parse a uiautomator dump.

    Raises:
        UIParseError: the input is empty, truncated, not XML, an ``ERROR:`` message from
            uiautomator, or a hierarchy with no ``<node>``.
    """
    raw = _prepare(data)
    try:
        root = etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise UIParseError(f"malformed hierarchy XML: {exc}") from exc
    if root.tag not in ("hierarchy", "node"):
        raise UIParseError(f"not a uiautomator dump: root element is <{root.tag}>, expected <hierarchy>")
    if root.tag == "node":  # a bare node tree without the <hierarchy> wrapper
        wrapper = etree.Element("hierarchy")
        wrapper.append(root)
        root = wrapper
    raws = _collect(root)
    if not raws:
        raise UIParseError("empty hierarchy: the dump has no <node> element (screen not ready or locked?)")
    return _build(_int(root.get("rotation"), 0), raws)


def _prepare(data: str | bytes) -> bytes:
    """Turn the input into well-formed-looking bytes: strip BOM, prolog junk and trailers."""
    if isinstance(data, str):
        raw = data.lstrip("\ufeff").encode("utf-8", "replace")
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            raw = data.decode("utf-16").encode("utf-8", "replace")
        except UnicodeDecodeError as exc:
            raise UIParseError(f"undecodable UTF-16 dump: {exc}") from exc
    else:
        raw = data[3:] if data.startswith(b"\xef\xbb\xbf") else bytes(data)
    head = raw.lstrip()
    if not head:
        raise UIParseError("empty hierarchy dump (no data)")
    if head.startswith((b"ERROR", b"null")) or b"null root node" in head[:200]:
        message = head[:200].decode("utf-8", "replace").strip()
        raise UIParseError(f"uiautomator reported an error instead of a dump: {message!r}")
    start = raw.find(b"<hierarchy")
    if start < 0:
        start = raw.find(b"<node")
        if start < 0:
            preview = head[:60].decode("utf-8", "replace")
            raise UIParseError(f"not a uiautomator dump: no <hierarchy> element (starts with {preview!r})")
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        raise UIParseError("refusing a dump with a DOCTYPE/ENTITY declaration (uiautomator never emits one)")
    end = raw.rfind(b"</hierarchy>")
    if end >= 0:
        raw = raw[start:end + len(b"</hierarchy>")]
    elif _EMPTY_HIERARCHY.match(raw, start):
        raise UIParseError("empty hierarchy: <hierarchy/> has no <node> (screen not ready or locked?)")
    elif raw.startswith(b"<hierarchy", start):
        raise UIParseError(f"truncated hierarchy dump: no closing </hierarchy> in {len(raw)} bytes")
    else:
        raw = raw[start:]
    return raw.translate(None, _INVALID_XML_BYTES)


def _assign_paint_ranks(raws: list[_Raw], root_orders: list[int]) -> None:
    """Set ``z``: bottom window first, siblings by drawing order, parents before children."""
    stack = list(root_orders)  # popping takes the last root (bottom-most window) first
    rank = 0
    while stack:
        order = stack.pop()
        raws[order].z = rank
        rank += 1
        kids = raws[order].kids
        keys = [(_int(raws[kid].attrs.get("drawing-order"), i), i) for i, kid in enumerate(kids)]
        stack.extend(kids[i] for _, i in sorted(keys, reverse=True))


def _build(rotation: int, raws: list[_Raw]) -> UITree:
    root_orders = [order for order, raw in enumerate(raws) if raw.parent < 0]
    _assign_paint_ranks(raws, root_orders)
    built: list[UINode] = []
    for order in range(len(raws) - 1, -1, -1):
        item = raws[order]
        # children have larger orders, so they are already built (at the far end of ``built``)
        children = tuple(built[len(raws) - 1 - kid] for kid in item.kids)
        built.append(_make_node(item, order, children))
    built.reverse()
    nodes = tuple(built)
    return UITree(rotation=rotation, roots=tuple(nodes[o] for o in root_orders), nodes=nodes)


def _make_node(item: _Raw, order: int, children: tuple[UINode, ...]) -> UINode:
    get = item.attrs.get
    return UINode(
        get("class", ""), get("text", ""), get("resource-id", ""), get("package", ""),
        get("content-desc", ""), get("hint", ""), Bounds.parse(get("bounds", "")),
        get("checkable") == "true", get("checked") == "true", get("clickable") == "true",
        get("long-clickable") == "true", get("enabled") != "false", get("focusable") == "true",
        get("focused") == "true", get("scrollable") == "true", get("password") == "true",
        get("selected") == "true", get("visible-to-user") != "false", get("NAF") == "true",
        _int(get("index"), 0), item.depth, _int(get("drawing-order"), -1), item.window,
        item.display_id, order, item.end, item.parent, item.z, children,
    )


def _int(value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return default
