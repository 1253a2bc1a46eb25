"""What the drivers themselves read in a UI dump: the window roots' order and the focused field.

The UI layer parses dumps for the model (``ufo_mobile.core.ui``); the drivers need two small things
before that, with the same care (no entities resolved, no network, no huge trees):

- ``order_roots``: uiautomator2's server collects window roots in a HashSet
  (``AccessibilityNodeInfoDumper.getWindowRoots``), so a multi-window dump lists them in no useful
  order. They are put in stacking order, top-most first, from ``dumpsys window`` (``Window #0`` is
  the top), matched by package; roots of packages it does not list keep their places.
- ``focused_field``: the text of the focused text field, to read back what an input method typed.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from ufo_mobile.core.device.dumpsys import window_packages

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


@dataclass(frozen=True)
class FieldText:
    """The focused text field: what it shows, and whether it is a password (shown as dots)."""

    text: str
    password: bool
    resource_id: str = ""


def _root(xml: str) -> etree._Element | None:
    start = xml.find("<hierarchy")
    if start < 0:
        return None
    try:
        return etree.fromstring(xml[start:].encode("utf-8"), _PARSER)
    except etree.XMLSyntaxError:
        return None


def window_count(xml: str) -> int:
    """How many roots (windows) the dump has; 0 when it cannot be read."""
    root = _root(xml)
    return 0 if root is None else sum(1 for child in root if isinstance(child.tag, str))


def order_roots(xml: str, window_dump: str) -> str:
    """``xml`` with its window roots in stacking order (module docstring); unchanged when there is
    nothing to reorder or the dump cannot be read."""
    ranks: dict[str, int] = {}
    for rank, package in enumerate(window_packages(window_dump)):
        ranks.setdefault(package, rank)
    root = _root(xml)
    if root is None or not ranks:
        return xml
    windows = [child for child in root if isinstance(child.tag, str)]
    if len(windows) < 2:
        return xml
    slots = [index for index, node in enumerate(windows) if node.get("package") in ranks]
    known = sorted((windows[index] for index in slots), key=lambda node: ranks[str(node.get("package"))])
    ordered = list(windows)
    for index, node in zip(slots, known, strict=True):
        ordered[index] = node
    if ordered == windows:
        return xml
    tails = [node.tail for node in windows]
    for node in windows:
        root.remove(node)
    for node, tail in zip(ordered, tails, strict=True):
        node.tail = tail
        root.append(node)
    return xml[:xml.find("<hierarchy")] + str(etree.tostring(root, encoding="unicode"))


def focused_field(xml: str) -> FieldText | None:
    """The focused node that takes text (an ``EditText``, or ``editable="true"``), if any."""
    root = _root(xml)
    if root is None:
        return None
    found: FieldText | None = None
    for node in root.iter("node"):
        if node.get("focused") != "true":
            continue
        editable = node.get("editable") == "true" or "EditText" in (node.get("class") or "")
        field = FieldText(node.get("text") or "", node.get("password") == "true", node.get("resource-id") or "")
        if editable:
            return field
        found = found or field  # a focused view of another class (a WebView's input, say)
    return found
