"""Choose the nodes the model sees and give them stable 1-based ids.

Kept: every visible actionable node (clickable, long-clickable, checkable, scrollable, text fields)
and every visible node that carries text or a content description. Dropped: nodes off screen or
zero-sized, nodes hidden by ``visible-to-user="false"``, nodes fully under a higher window or under
a large clickable overlay drawn later (a scrim, a dialog backdrop), disabled wrapper containers
without text, and the on-screen keyboard's keys. A clickable container whose only text child is
plain text becomes one control: the container is the tap target, the child's text its label.

Ids follow document order, so the same XML always gives the same ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from ufo_mobile.core import ios_types
from ufo_mobile.core.ui.hierarchy import Bounds, UINode, UITree

# Which window is the keyboard's or the app's, and the screen: windows.py. Imported from here too,
# as they always were.
from ufo_mobile.core.ui.windows import DEFAULT_KEYBOARD_PACKAGES as DEFAULT_KEYBOARD_PACKAGES
from ufo_mobile.core.ui.windows import infer_app_package as infer_app_package
from ufo_mobile.core.ui.windows import infer_screen as infer_screen
from ufo_mobile.core.ui.windows import is_keyboard_package as is_keyboard_package
from ufo_mobile.core.ui.windows import keyboard_visible as keyboard_visible
from ufo_mobile.core.ui.windows import screen_for as screen_for

_NOT_ALNUM = re.compile(r"[\W_]+")


class ControlKind(StrEnum):
    """What a control is for; drives the annotation colour."""

    BUTTON = "button"
    EDIT = "edit"
    TOGGLE = "toggle"
    SCROLL = "scroll"
    IMAGE = "image"
    TEXT = "text"


@dataclass(frozen=True, slots=True)
class FilterOptions:
    """Tuning of the control filter.

    Args:
        keyboard_packages: package prefixes treated as on-screen keyboards.
        min_size: the smallest visible width and height, in pixels, of a kept control.
        overlay_fraction: a clickable node drawn later that covers at least this fraction of the
            screen hides what lies entirely beneath it.
    """

    keyboard_packages: frozenset[str] = DEFAULT_KEYBOARD_PACKAGES
    min_size: int = 1
    overlay_fraction: float = 0.25


_DEFAULT_FILTER = FilterOptions()


@dataclass(slots=True, eq=False)
class Control:
    """A node the model can see and refer to by ``index``.

    ``bounds`` are clipped to the screen. ``label`` is the text (or content description) shown to
    the model; for a merged container it comes from ``label_node``. ``parent`` is the index of the
    enclosing control (0 for none) and ``level`` the nesting depth among controls.

    Treat controls as immutable. (Not ``frozen``, for the reason ``UINode`` is not: a frozen
    dataclass's ``__init__`` costs several times more, and every observation makes dozens.)
    """

    index: int
    node: UINode
    bounds: Bounds
    kind: ControlKind
    label: str
    description: str = ""
    hint: str = ""
    parent: int = 0
    level: int = 0
    label_node: UINode | None = None

    @property
    def center(self) -> tuple[int, int]:
        return self.bounds.center

    @property
    def short_class(self) -> str:
        return short_class_name(self.node.class_name, self.kind)

    @property
    def editable(self) -> bool:
        return self.kind is ControlKind.EDIT

    @property
    def actionable(self) -> bool:
        return is_actionable(self.node)

    @property
    def selected(self) -> bool:
        return self.node.selected or (self.label_node is not None and self.label_node.selected)

    @property
    def focused(self) -> bool:
        return self.node.focused or (self.label_node is not None and self.label_node.focused)


def short_class_name(class_name: str, kind: ControlKind = ControlKind.TEXT) -> str:
    """``android.widget.TextView`` -> ``TextView``, ``XCUIElementTypeButton`` (iOS) -> ``Button``;
    obfuscated or empty names become ``View``."""
    short = class_name.rsplit(".", 1)[-1].rsplit("$", 1)[-1].removeprefix(ios_types.PREFIX)
    if len(short) <= 3 or not short[0].isupper():
        return "View"
    return short


_IOS_TEXT_INPUTS = frozenset(f"{ios_types.PREFIX}{kind}" for kind in ios_types.TEXT_INPUTS)


def is_editable(node: UINode) -> bool:
    name = node.class_name
    return "EditText" in name or "AutoComplete" in name or name in _IOS_TEXT_INPUTS


def is_actionable(node: UINode) -> bool:
    return (node.clickable or node.long_clickable or node.checkable or node.scrollable
            or is_editable(node))


def node_label(node: UINode) -> tuple[str, str]:
    """The label and the extra description of a node: its text, else its content description.

    The description is returned separately only when it says something the text does not. A text
    field whose text merely repeats its hint is treated as empty.
    """
    if not node.text and not node.content_desc:
        return "", ""  # most layouts: nothing to clean
    text = _clean(node.text)
    desc = _clean(node.content_desc)
    if text and node.hint and text == _clean(node.hint) and is_editable(node):
        text = ""
    if not text:
        return desc, ""
    return text, ("" if says_nothing_new(desc, text) else desc)


def same_words(a: str, b: str) -> bool:
    """True when both strings say the same, ignoring case, spaces and punctuation."""
    na = _squash(a)
    return bool(na) and na == _squash(b)


def says_nothing_new(extra: str, text: str) -> bool:
    """True when ``extra`` adds nothing to ``text`` (its words are all inside it)."""
    squashed = _squash(extra)
    return not squashed or squashed in _squash(text)



def extract_controls(tree: UITree, screen: Bounds | None = None, *, app_package: str = "",
                     options: FilterOptions | None = None, obstruction: Bounds | None = None) -> list[Control]:
    """The controls of ``tree`` in document order, indexed from 1.

    ``obstruction`` is a screen area drawn over the app that the dump does not show (the soft
    keyboard, when the dump holds only the app's window): controls entirely under it are dropped,
    and controls partly under it keep only the part outside it.
    """
    opts = options or _DEFAULT_FILTER
    screen = screen or infer_screen(tree)
    app = app_package or infer_app_package(tree, opts.keyboard_packages)
    # With several windows, every root hides what lies under it in the windows below.
    overlays = list(tree.roots) if len(tree.roots) > 1 else []
    threshold = screen.area * opts.overlay_fraction
    keyboard: dict[str, bool] = {}  # per package
    node_labels: list[tuple[str, str]] = [("", "")] * len(tree.nodes)  # node_label, of the nodes looked at
    label: Labeler = lambda node: node_labels[node.order]  # noqa: E731 - made here, passed around
    kept: dict[int, Bounds] = {}
    min_size = opts.min_size
    editable: dict[str, bool] = {}  # is_editable, per class name
    for node in tree.nodes:  # one pass: the candidates, and the overlays that may hide some of them
        if not node.visible_to_user:
            continue
        tappable = node.clickable or node.long_clickable
        acts = tappable or node.checkable or node.scrollable
        if not acts:
            known = editable.get(node.class_name)
            if known is None:
                known = editable[node.class_name] = is_editable(node)
            acts = known
        if not (acts or node.text or node.content_desc):
            continue  # a bare layout (most nodes): no label, nothing to do with it, and no overlay
        box = node.bounds
        if (screen.left <= box.left and screen.top <= box.top and box.right <= screen.right
                and box.bottom <= screen.bottom):
            clip: Bounds | None = box  # on screen already (most nodes): nothing to cut
        else:
            clip = box.intersect(screen)
        # Without drawing-order, document order is not paint order (elevation reorders views),
        # so in-window overlays are only trusted when the dump states the drawing order.
        if tappable and node.drawing_order >= 0 and node.parent >= 0 and clip is not None and clip.area >= threshold:
            overlays.append(node)
        if clip is None or clip.right - clip.left < min_size or clip.bottom - clip.top < min_size:
            continue
        package = node.package
        on_keyboard = keyboard.get(package)
        if on_keyboard is None:
            on_keyboard = keyboard[package] = is_keyboard_package(package, opts.keyboard_packages, app_package=app)
        if on_keyboard:
            continue
        if obstruction is not None:
            clip = _outside(clip, obstruction, min_size)
            if clip is None:
                continue
        text, _ = node_labels[node.order] = node_label(node)  # later steps ask only for these nodes' labels
        if not text and not acts:
            continue  # neither a label nor anything to do with it
        if not node.enabled and not text and node.children:
            continue  # a disabled wrapper: its texts and controls are listed on their own
        kept[node.order] = clip
    if overlays:
        for order, clip in list(kept.items()):
            if _covered(tree.nodes[order], clip, overlays):
                del kept[order]
    _drop_shadowed_wrappers(tree, kept, label)
    parents = _nearest_kept_ancestors(tree, kept)
    labels = _merge_labels(tree, kept, parents, label)
    return _number(tree, kept, labels, label)


Labeler = Callable[[UINode], tuple[str, str]]


def _outside(clip: Bounds, cover: Bounds, min_size: int) -> Bounds | None:
    """The part of ``clip`` not under ``cover`` (a band across the screen, like a keyboard), or None."""
    if cover.contains(clip):
        return None
    if clip.intersect(cover) is None or not (cover.left <= clip.left and clip.right <= cover.right):
        return clip  # untouched, or cut from the side: keep it whole
    if cover.top > clip.top:  # covered from below: keep what is above
        rest = Bounds(clip.left, clip.top, clip.right, cover.top)
    else:  # covered from above
        rest = Bounds(clip.left, cover.bottom, clip.right, clip.bottom)
    return rest if rest.height >= min_size else None


def _covered(node: UINode, clip: Bounds, overlays: Iterable[UINode]) -> bool:
    for overlay in overlays:
        if overlay.z > node.z and not node.contains_node(overlay) and overlay.bounds.contains(clip):
            return True
    return False


def _drop_shadowed_wrappers(tree: UITree, kept: dict[int, Bounds], label: Labeler) -> None:
    """Drop unlabeled tap wrappers that a tappable descendant covers entirely.

    Touches go to the deepest view that takes them, so such a wrapper can never be tapped; listing
    it only adds a line (apps often nest several full-screen clickable layouts).
    """
    orders = list(kept)
    for position, order in enumerate(orders):
        node = tree.nodes[order]
        if label(node)[0] or node.scrollable or node.checkable or is_editable(node):
            continue
        if not (node.clickable or node.long_clickable):
            continue
        clip = kept[order]
        for inner in orders[position + 1:]:
            if inner >= node.end:
                break
            if inner in kept and _takes_touch(tree.nodes[inner]) and kept[inner] == clip:
                del kept[order]
                break


def _takes_touch(node: UINode) -> bool:
    return node.clickable or node.long_clickable or is_editable(node)


def _nearest_kept_ancestors(tree: UITree, kept: dict[int, Bounds]) -> dict[int, int]:
    """Map each kept node's order to the order of its nearest kept ancestor (-1 for none)."""
    parents: dict[int, int] = {}
    open_stack: list[UINode] = []
    for order in kept:  # dict insertion order is document order
        node = tree.nodes[order]
        while open_stack and order >= open_stack[-1].end:  # past the subtree of the one above
            open_stack.pop()
        parents[order] = open_stack[-1].order if open_stack else -1
        open_stack.append(node)
    return parents


def _merge_labels(tree: UITree, kept: dict[int, Bounds], parents: dict[int, int], label: Labeler) -> dict[int, int]:
    """Fold single plain-text children into their tappable container.

    Removes the absorbed children from ``kept`` and returns ``{container order: child order}``.
    """
    children: dict[int, list[int]] = {}
    for order, parent in parents.items():
        if parent >= 0:
            children.setdefault(parent, []).append(order)
    merged: dict[int, int] = {}
    for order, kids in children.items():
        container = tree.nodes[order]
        plain = [k for k in kids if not is_actionable(tree.nodes[k]) and k not in children]
        own_label = label(container)[0]
        if own_label:  # drop children that only repeat the container's label
            for kid in plain:
                if says_nothing_new(label(tree.nodes[kid])[0], own_label):
                    del kept[kid]
            continue
        tappable = container.clickable or container.long_clickable or container.checkable
        if not tappable or is_editable(container) or container.scrollable or len(plain) != len(kids):
            continue  # only a container of plain text becomes one control
        if _single_label(tree, plain, label):
            merged[order] = plain[0]
            for kid in plain:
                del kept[kid]
    return merged


def _single_label(tree: UITree, orders: list[int], label: Labeler) -> str:
    """The label shared by all these nodes (one node, or copies saying the same), else ``""``."""
    labels = [label(tree.nodes[order])[0] for order in orders]
    if not labels or not labels[0]:
        return ""
    if all(same_words(label, labels[0]) for label in labels[1:]):
        return labels[0]
    return ""


def _number(tree: UITree, kept: dict[int, Bounds], labels: dict[int, int], label_of: Labeler) -> list[Control]:
    controls: list[Control] = []
    open_stack: list[Control] = []
    for order, clip in kept.items():  # document order
        node = tree.nodes[order]
        while open_stack and order >= open_stack[-1].node.end:  # past the subtree of the one above
            open_stack.pop()
        enclosing = open_stack[-1] if open_stack else None
        merged = labels.get(order)
        label_node = tree.nodes[merged] if merged is not None else None
        label, description = label_of(label_node or node)
        if label_node is not None and not description:
            description = label_of(node)[1]
        kind = _kind(node)
        control = Control(len(controls) + 1, node, clip, kind, label, description,
                          _clean(node.hint) if kind is ControlKind.EDIT else "",
                          enclosing.index if enclosing else 0, enclosing.level + 1 if enclosing else 0, label_node)
        controls.append(control)
        open_stack.append(control)
    return controls


def _kind(node: UINode) -> ControlKind:
    if is_editable(node):
        return ControlKind.EDIT
    if node.checkable:
        return ControlKind.TOGGLE
    if node.clickable or node.long_clickable:
        return ControlKind.BUTTON
    if node.scrollable:
        return ControlKind.SCROLL
    if "Image" in node.class_name:
        return ControlKind.IMAGE
    return ControlKind.TEXT


def _clean(text: str) -> str:
    """Strip outer whitespace and invisible format characters."""
    if not text or text.isascii():  # the invisible characters are not ASCII
        return text.strip()
    return text.replace("\u200b", "").replace("\ufeff", "").replace("\u200e", "").strip()


def _squash(text: str) -> str:
    """``text`` casefolded, with only its letters and digits (``str.isalnum``, which is what ``\\w``
    matches besides the underscore)."""
    return _NOT_ALNUM.sub("", text.casefold()) if text else ""
