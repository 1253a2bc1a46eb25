"""WebDriverAgent's ``/source`` XML as the uiautomator XML the perception pipeline reads.

WDA writes the accessibility tree of the app in front (``FBXPath``): one element per node, named by its
``XCUIElementType``, with ``type``, ``value``, ``name``, ``label``, ``enabled``, ``visible``, ``accessible``,
``x``, ``y``, ``width`` and ``height`` (in points), ``index`` and, on text inputs, ``placeholderValue``;
the root (``XCUIElementTypeApplication``) also carries the app's ``bundleId``. Every iOS driver hands the
runtime a uiautomator ``<hierarchy>`` (``DeviceDriver.get_ui_tree``), so this module says each element
in those terms, once, and the rest (filtering, numbering, the screen list, set-of-mark, the change
between screens, replay) works unchanged:

- ``class`` is the element type (shown shortened: ``Button``, ``StaticText``, ``TextField``);
- ``bounds`` are the element's rect in screen pixels (points times ``scale``), so taps, marks and the
  screenshot agree;
- ``text`` is what the element says: a text input's ``value`` (unless that is its placeholder, which
  becomes the ``hint``), a switch's or slider's ``label``, else its ``label`` (or ``value``);
- ``content-desc`` is the ``value`` a control states beside its label (a slider's "70%", a cell's
  detail: "Wi-Fi" with the value "Off");
- ``resource-id`` is the accessibility identifier, when WDA's ``name`` is one (not the label again);
- iOS has no "clickable": the element types a finger acts on (buttons, cells, links, switches, text
  inputs, keys, ...) are, when enabled and visible; a switch is ``checkable``, ``checked`` when its value is
  1; tables, collection and scroll views are ``scrollable``; a secure text field is a ``password``;
- ``XCUIElementTypeKeyboard`` becomes the input method's window, so the pipeline knows the keyboard is up
  and covers what is under it.

Elements WDA marks invisible are kept as ``visible-to-user="false"`` (the filter drops them, as it does
on Android).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from lxml import etree

from ufo_mobile.core.ios_types import PREFIX, TEXT_INPUTS
from ufo_mobile.errors import UIParseError

#: the element types a finger acts on (XCUIElementType without the prefix)
TAPPABLE = frozenset({
    "Button", "Cell", "Link", "Switch", "Toggle", "TextField", "SecureTextField", "SearchField", "TextView",
    "Key", "Tab", "MenuItem", "MenuBarItem", "SegmentedControl", "Stepper", "PickerWheel", "Slider",
    "Icon", "CheckBox", "RadioButton", "PopUpButton", "ComboBox", "DatePicker", "Picker", "PageIndicator",
    "ColorWell", "Incrementor", "DisclosureTriangle",
})
SCROLLING = frozenset({"Table", "CollectionView", "ScrollView", "WebView", "Map"})
KEYBOARD_PACKAGE = "com.apple.keyboard"  # the keyboard's window, as the pipeline's input-method window
_VALUED = frozenset({"Slider", "Stepper", "PickerWheel", "ProgressIndicator", "Incrementor", "PageIndicator"})


def to_uiautomator(source: str, scale: float) -> str:
    """``source`` (WDA's ``/source`` XML) as a uiautomator ``<hierarchy>`` in screen pixels.

    Raises:
        UIParseError: the source is not XML, or has no application element.
    """
    if scale <= 0:
        raise ValueError("scale must be > 0")
    root = read_source(source)
    if not str(root.tag).startswith(PREFIX):
        raise UIParseError(f"the WebDriverAgent source has no application element (its root is <{root.tag}>)")
    bundle = root.get("bundleId") or ""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<hierarchy rotation="0">']
    keyboards: list[etree._Element] = []
    _node(root, bundle, scale, lines, keyboards, 0)
    for keyboard in keyboards:  # the keyboard's own window, above the app's
        _node(keyboard, KEYBOARD_PACKAGE, scale, lines, [], 0, window=True)
    lines.append("</hierarchy>")
    return "\n".join(lines)


def read_source(source: str | bytes) -> etree._Element:
    """WDA's ``/source`` XML parsed (no entities resolved, nothing fetched).

    Raises:
        UIParseError: it is not XML.
    """
    try:
        return etree.fromstring(source.encode("utf-8") if isinstance(source, str) else source,
                                parser=etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except etree.XMLSyntaxError as exc:
        raise UIParseError(f"the WebDriverAgent source is not XML: {exc}") from None


def held_text(element: etree._Element) -> str:
    """What a text input holds: WDA's ``value``, unless that is the placeholder iOS reports for an empty field."""
    value = element.get("value") or ""
    return "" if value == (element.get("placeholderValue") or "") else value


def longest_input_text(source: str) -> int:
    """The length of the longest text a text input in ``source`` holds (0 for a source that is not XML)."""
    try:
        root = read_source(source)
    except UIParseError:
        return 0
    return max((len(held_text(e)) for e in root.iter()
                if isinstance(e.tag, str) and e.tag.removeprefix(PREFIX) in TEXT_INPUTS), default=0)


def _node(element: etree._Element, package: str, scale: float, lines: list[str],
          keyboards: list[etree._Element], index: int, window: bool = False) -> None:
    if not isinstance(element.tag, str):  # a comment or a processing instruction
        return
    kind = element.tag.removeprefix(PREFIX)
    if kind == "Keyboard" and not window:
        keyboards.append(element)
        return
    attrs = _attributes(element, kind, package, scale, index)
    children = [child for child in element if isinstance(child.tag, str)]
    if not children:
        lines.append(f"<node {attrs} />")
        return
    lines.append(f"<node {attrs}>")
    for number, child in enumerate(children):
        _node(child, package, scale, lines, keyboards, number)
    lines.append("</node>")


def _attributes(element: etree._Element, kind: str, package: str, scale: float, index: int) -> str:
    get = element.get
    name, label, value = get("name") or "", get("label") or "", get("value") or ""
    placeholder = get("placeholderValue") or ""
    enabled = get("enabled", "true") == "true"
    visible = get("visible", "true") == "true"
    hint, desc = "", ""
    if kind in TEXT_INPUTS:  # an empty field without a placeholder may say its label as its value
        text = "" if not placeholder and value == label else held_text(element)
        hint = placeholder or label
    elif kind in ("Switch", "Toggle", "CheckBox"):
        text = label
    elif kind in _VALUED:
        text, desc = label, value
    elif kind == "Application":  # the app's name: the screen's first line names the app already
        text = ""
    else:  # a cell's detail ("Wi-Fi", value "Off") is said beside its label, as VoiceOver says it
        text = label or value
        desc = value if label and value and value != label else ""
    identifier = name if name and name not in (label, value) else ""
    checkable = kind in ("Switch", "Toggle", "CheckBox")
    fields = {
        "index": str(index), "text": text, "resource-id": identifier, "class": f"{PREFIX}{kind}",
        "package": package, "content-desc": desc,
        "checkable": _flag(checkable), "checked": _flag(checkable and value in ("1", "true")),
        "clickable": _flag(kind in TAPPABLE and enabled and visible),
        "enabled": _flag(enabled), "focusable": _flag(kind in TEXT_INPUTS), "focused": "false",
        "scrollable": _flag(kind in SCROLLING), "long-clickable": "false",
        "password": _flag(kind == "SecureTextField"), "selected": _flag(get("selected") == "true"),
        "visible-to-user": _flag(visible), "bounds": _bounds(element, scale),
    }
    if hint:
        fields["hint"] = hint
    return " ".join(f"{key}={quoteattr(value)}" for key, value in fields.items())


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _bounds(element: etree._Element, scale: float) -> str:
    """The element's rect in pixels, ``[left,top][right,bottom]`` (0 when WDA gave none)."""
    try:
        x, y, w, h = (float(element.get(key) or 0) for key in ("x", "y", "width", "height"))
    except ValueError:
        x = y = w = h = 0.0
    left, top = round(x * scale), round(y * scale)
    right, bottom = round((x + max(w, 0.0)) * scale), round((y + max(h, 0.0)) * scale)
    return f"[{left},{top}][{right},{bottom}]"
