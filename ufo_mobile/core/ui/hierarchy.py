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
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeVar

from lxml import etree

# The tree's types live in nodes.py; they are imported from here too, as they always were.
from ufo_mobile.core.ui.nodes import Bounds as Bounds
from ufo_mobile.core.ui.nodes import UINode as UINode
from ufo_mobile.core.ui.nodes import UITree as UITree
from ufo_mobile.errors import UIParseError

# Bytes that are never valid in XML 1.0 (C0 controls except tab, LF, CR); some devices emit them.
_INVALID_XML_BYTES = bytes(b for b in range(32) if b not in (9, 10, 13))
_SPACE = re.compile(rb"\s*")  # what bytes.lstrip() strips
_EMPTY_HIERARCHY = re.compile(rb"<hierarchy\b[^<>]*/>")
# No DTD loaded, nothing fetched, no huge-document allowance. Entities: only "internal" ones would
# be resolved, and _prepare lets no declaration through; not False, which (with a parser target)
# hands "&amp;" over as the text "&#38;".
_PARSER_OPTIONS = {"resolve_entities": "internal", "load_dtd": False, "no_network": True, "huge_tree": False,
                   "remove_comments": True, "remove_pis": True}
_WRAPPER_TAGS = frozenset({"display", "window", "windows", "displays"})
_D = TypeVar("_D", int, None)
# "0".."255" and their numbers: the index and drawing order of nearly every node, looked up faster
# than int() reads them
_SMALL: dict[str | None, int] = {str(number): number for number in range(256)}
# the flags and the index, in the order of _STANDARD
_STANDARD_FLAGS = ("checkable", "checked", "clickable", "long-clickable", "enabled", "focusable", "focused",
                   "scrollable", "password", "selected", "index")
_STANDARD = itemgetter("class", "text", "resource-id", "package", "content-desc", *_STANDARD_FLAGS[:-1], "bounds",
                       "index")
_STANDARD_COUNT = len(_STANDARD_FLAGS) + 6  # the attributes _STANDARD reads: a node with just these has no other


@dataclass(slots=True)
class _Read:
    """What ``_Target`` read: every node in document order, each one's drawing-order attribute (None
    when it has none), the window roots (top-most first), the root element's tag and its ``rotation``
    attribute, and whether all siblings paint in document order (most dumps: then the paint ranks
    follow from the order)."""

    nodes: list[UINode]
    draw: list[int | None]
    roots: tuple[UINode, ...]
    root: str
    rotation: str | None
    ordered: bool


class _Target:
    """The parser target that turns lxml's parse events into ``UINode`` at once: ``start`` builds each
    ``<node>`` from its attribute dict (no element tree is built), ``end`` closes its subtree, and
    ``close`` hands over the ``_Read``.

    Elements other than ``<node>`` are transparent; ``<display>``/``<window>`` wrappers outside any
    node may set the display id of the nodes inside them. lxml looks ``start``/``end``/``close`` up
    once, so they are closures over the state (no look-ups on ``self`` per event): they run for every
    element of every dump. One target and its parser serve every parse of a thread (``_parser``):
    ``reset`` after each read makes it ready for the next (making the parser costs more than parsing
    a small dump).
    """

    __slots__ = ("start", "end", "close", "reset")

    def __init__(self) -> None:
        nodes: list[UINode] = []
        draw: list[int | None] = []
        roots: list[UINode] = []
        opened: list[UINode] = []  # the open nodes, innermost last
        kids: list[list[UINode]] = []  # the children so far of each open node
        displays = [0]  # the display id in effect outside any node, innermost wrapper last
        root = ""
        rotation: str | None = None
        ordered = True

        def start(tag: str, attrs: dict[str, str]) -> None:
            nonlocal root, rotation
            if tag != "node":
                if not root:
                    root, rotation = tag, attrs.get("rotation")
                elif tag in _WRAPPER_TAGS and not opened:
                    displays.append(_int(attrs.get("display-id", attrs.get("id")), displays[-1]))
                return
            order = len(nodes)
            try:  # every dump names these on every node: one C call instead of seventeen
                (class_name, text, resource_id, package, desc, checkable, checked, clickable, long_clickable, enabled,
                 focusable, focused, scrollable, password, selected, bounds, index) = _STANDARD(attrs)
                plain = len(attrs) == _STANDARD_COUNT  # and no other (most nodes of most dumps)
            except KeyError:
                (class_name, text, resource_id, package, desc, checkable, checked, clickable, long_clickable, enabled,
                 focusable, focused, scrollable, password, selected, bounds, index) = _standard(attrs)
                plain = False
            position = _SMALL.get(index)
            if position is None:
                position = _int(index, 0)
            if opened:
                above = opened[-1]
                parent, window, depth, display = above.order, above.window, len(opened), above.display_id
            else:
                if not root:
                    root = tag
                parent, window, depth, display = -1, len(roots), 0, displays[-1]
            if plain:
                hint, visible, naf, drawing_order = "", True, False, None
            else:
                hint, visible, naf, drawing_order, display = _optional(attrs, display)
            node = UINode(  # z: its order, the paint rank when the dump has one window painted in document order
                class_name, text, resource_id, package, desc, hint, bounds,
                checkable == "true", checked == "true", clickable == "true", long_clickable == "true",
                enabled != "false", focusable == "true", focused == "true", scrollable == "true",
                password == "true", selected == "true", visible, naf, position, depth,
                -1 if drawing_order is None else drawing_order, window, display, order, order + 1, parent, order,
            )
            if opened:
                kids[-1].append(node)
            else:
                roots.append(node)
            nodes.append(node)
            draw.append(drawing_order)
            opened.append(node)
            kids.append([])

        def end(tag: str) -> None:
            nonlocal ordered
            if tag == "node":
                own = opened.pop()
                done = kids.pop()
                own.end = len(nodes)  # one past the last node of its subtree
                if done:
                    own.children = tuple(done)
                    if ordered and len(done) > 1:
                        ordered = _in_paint_order(done, draw)
            elif tag in _WRAPPER_TAGS and not opened and len(displays) > 1:
                displays.pop()

        def close() -> _Read:
            return _Read(nodes, draw, tuple(roots), root, rotation, ordered)

        def reset() -> None:  # also after a parse that failed half way
            nonlocal nodes, draw, roots, opened, kids, displays, root, rotation, ordered
            nodes, draw, roots, opened, kids, displays = [], [], [], [], [], [0]
            root, rotation, ordered = "", None, True

        self.start, self.end, self.close, self.reset = start, end, close, reset


_LOCAL = threading.local()


def _parser() -> tuple[_Target, etree.XMLParser]:
    """This thread's target and the parser that feeds it, made on first use (a parser is not shared
    between threads)."""
    made: tuple[_Target, etree.XMLParser] | None = getattr(_LOCAL, "parser", None)
    if made is None:
        target = _Target()
        made = _LOCAL.parser = (target, etree.XMLParser(target=target, **_PARSER_OPTIONS))
    return made


def _standard(attrs: Mapping[str, str]) -> tuple[str | None, ...]:
    """``_STANDARD(attrs)`` for a node that lacks some of them: the texts default to ``""``, the
    flags and the index to None."""
    get = attrs.get
    return (get("class", ""), get("text", ""), get("resource-id", ""), get("package", ""), get("content-desc", ""),
            *(get(name) for name in _STANDARD_FLAGS[:-1]), get("bounds", ""), get("index"))


def _optional(attrs: Mapping[str, str], display: int) -> tuple[str, bool, bool, int | None, int]:
    """A node's attributes that not every dump writes: its hint, whether it is visible to the user,
    whether it is NAF, its drawing order (None without one) and its display (``display``, the
    enclosing one, unless it names its own)."""
    get = attrs.get
    drawing = get("drawing-order")  # a small number or missing, almost always
    drawing_order = _SMALL.get(drawing)
    if drawing_order is None and drawing is not None:
        drawing_order = _int(drawing, None)
    if "display-id" in attrs:
        display = _int(attrs["display-id"], display)
    return get("hint", ""), get("visible-to-user") != "false", get("NAF") == "true", drawing_order, display


def _in_paint_order(kids: list[UINode], draw: list[int | None]) -> bool:
    """True when these siblings paint in document order: their drawing orders (a sibling without one
    counts as its position) never go down."""
    previous: int | None = None
    for position, kid in enumerate(kids):
        key = draw[kid.order]
        if key is None:
            key = position
        if previous is not None and key < previous:
            return False
        previous = key
    return True


def _paint_ranks(roots: tuple[UINode, ...], read: _Read) -> None:
    """Set ``z``: bottom window first, siblings by drawing order, parents before children.

    When every group of siblings paints in document order (``read.ordered``), that is each window's
    nodes in document order, the windows from the bottom one up: counted, not sorted.
    """
    nodes, draw = read.nodes, read.draw
    if read.ordered:
        if len(roots) == 1 and roots[0].end == len(nodes):
            return  # one window: ``_Target`` gave each node its order as its rank
        total = len(nodes)
        for root in roots:
            offset = total - root.end - root.order  # the nodes of the windows below, less the root's order
            for node in nodes[root.order:root.end]:
                node.z = node.order + offset
        return
    stack = list(roots)  # popping takes the last root (bottom-most window) first
    rank = 0
    while stack:
        node = stack.pop()
        node.z = rank
        rank += 1
        kids = node.children
        if len(kids) == 1:
            stack.append(kids[0])
        elif kids:
            keys = [draw[kid.order] for kid in kids]
            if keys.count(None) == len(keys):  # no drawing order: siblings paint in document order
                stack.extend(reversed(kids))
            else:
                ranked = sorted([(i if key is None else key, i) for i, key in enumerate(keys)], reverse=True)
                stack.extend([kids[i] for _, i in ranked])


def parse_hierarchy(data: str | bytes) -> UITree:
    """Parse a uiautomator dump.

    Raises:
        UIParseError: the input is empty, truncated, not XML, an ``ERROR:`` message from
            uiautomator, or a hierarchy with no ``<node>``.
    """
    read = _read(_prepare(data))
    if read.root not in ("hierarchy", "node"):
        raise UIParseError(f"not a uiautomator dump: root element is <{read.root}>, expected <hierarchy>")
    nodes = read.nodes
    if not nodes:
        raise UIParseError("empty hierarchy: the dump has no <node> element (screen not ready or locked?)")
    roots = read.roots
    _paint_ranks(roots, read)
    return UITree(rotation=_int(read.rotation, 0), roots=roots, nodes=tuple(nodes))


def _read(raw: bytes) -> _Read:
    """Parse the prepared dump with this thread's target.

    lxml (libxml2) hands each element's attributes to ``_Target`` as a dict; no tree is built.
    ``_prepare`` has refused DOCTYPE and ENTITY declarations, and the parser resolves no entity and
    fetches nothing; comments and processing instructions are dropped. Bytes that XML forbids (C0
    controls but tab, LF and CR; some devices emit them) make libxml2 fail, so they are deleted and
    the dump read again only then: deleting them first would cost a pass over every dump.
    """
    target, parser = _parser()
    try:
        return etree.fromstring(raw, parser)  # type: ignore[no-any-return]
    except etree.XMLSyntaxError as exc:
        error = exc
    finally:
        target.reset()  # the target lets go of this dump's nodes (and of a failed read's)
    cleaned = raw.translate(None, _INVALID_XML_BYTES)
    if len(cleaned) < len(raw):
        try:
            return etree.fromstring(cleaned, parser)  # type: ignore[no-any-return]
        except etree.XMLSyntaxError as exc:
            error = exc
        finally:
            target.reset()
    raise UIParseError(f"malformed hierarchy XML: {error}") from error


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
    skip = _SPACE.match(raw).end()  # type: ignore[union-attr]  # (always matches)
    head = raw[skip:skip + 200]  # the start, without leading whitespace (copying the rest costs)
    if not head:
        raise UIParseError("empty hierarchy dump (no data)")
    if head.startswith((b"ERROR", b"null")) or b"null root node" in head:
        message = head[:200].decode("utf-8", "replace").strip()
        raise UIParseError(f"uiautomator reported an error instead of a dump: {message!r}")
    start = raw.find(b"<hierarchy")
    if start < 0:
        start = raw.find(b"<node")
        if start < 0:
            preview = head[:60].decode("utf-8", "replace")
            raise UIParseError(f"not a uiautomator dump: no <hierarchy> element (starts with {preview!r})")
    if _declares(raw):
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
    return raw


def _declares(raw: bytes) -> bool:
    """``b"<!DOCTYPE" in raw or b"<!ENTITY" in raw``, found by looking at each ``!`` (a one-byte
    search is several times faster than those two, and dumps hold few)."""
    at = raw.find(b"!")
    while at >= 0:
        if raw[at - 1:at] == b"<" and (raw.startswith(b"DOCTYPE", at + 1) or raw.startswith(b"ENTITY", at + 1)):
            return True
        at = raw.find(b"!", at + 1)
    return False


def _int(value: str | None, default: _D) -> int | _D:
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return default
