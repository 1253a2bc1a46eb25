"""An audit of the control filter: which nodes of a dump a user could act on, judged independently
of ``extract_controls``, and whether a kept control stands for each one. The ui tests and the
perception benchmark ("actionable nodes kept") both use it."""

from __future__ import annotations

from collections.abc import Iterable

from ufo_mobile.core.ui.controls import Control, is_keyboard_package, node_label
from ufo_mobile.core.ui.hierarchy import Bounds, UINode, UITree


def _editable(node: UINode) -> bool:
    return "EditText" in node.class_name or "AutoComplete" in node.class_name


def _tappable(node: UINode) -> bool:
    return node.clickable or node.long_clickable or _editable(node)


def is_actionable_node(node: UINode) -> bool:
    return _tappable(node) or node.checkable or node.scrollable


def _hidden_by_overlay(node: UINode, box: Bounds, tree: UITree, screen: Bounds) -> bool:
    return any(
        other.z > node.z and not node.contains_node(other) and other.drawing_order >= 0
        and other.clickable and other.bounds.contains(box) and other.bounds.area * 4 >= screen.area
        for other in tree.nodes
    )


def _reachable(node: UINode, tree: UITree, screen: Bounds) -> bool:
    box = node.bounds.intersect(screen)
    if box is None or not node.visible_to_user or is_keyboard_package(node.package):
        return False
    if any(root.window < node.window and root.bounds.contains(box) for root in tree.roots):
        return False  # under a higher window
    if not node.enabled and node.children and not node_label(node)[0]:
        return False  # disabled wrapper
    return not _hidden_by_overlay(node, box, tree, screen)


def actionable_visible(tree: UITree, screen: Bounds) -> list[UINode]:
    """The actionable nodes a user could reach on this screen."""
    return [node for node in tree.nodes if is_actionable_node(node) and _reachable(node, tree, screen)]


def is_represented(node: UINode, kept: set[int], tree: UITree, screen: Bounds) -> bool:
    """True when a kept node (document order in ``kept``) stands for ``node``."""
    if node.order in kept:
        return True
    if node_label(node)[0] or node.scrollable or node.checkable or _editable(node):
        return False
    box = node.bounds.intersect(screen)
    return any(inner.order in kept and _tappable(inner) and inner.bounds.intersect(screen) == box
               for inner in tree.nodes[node.order + 1:node.end])


def uncovered(tree: UITree, screen: Bounds, controls: Iterable[Control]) -> list[UINode]:
    """The actionable, reachable nodes that no kept control stands for (should be empty)."""
    kept = {c.node.order for c in controls}
    return [n for n in actionable_visible(tree, screen) if not is_represented(n, kept, tree, screen)]
