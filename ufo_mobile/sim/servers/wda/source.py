"""The simulated phone's screen as an iPhone's WebDriverAgent shows it: ``/source`` XML (and JSON).

WDA's page source is an XCTest accessibility snapshot of the active application written by
``FBXPath`` (appium/WebDriverAgent, ``WebDriverAgentLib/Utilities/FBXPath.m``) with libxml2's
``xmlDocDumpFormatMemory``: the ``<?xml version="1.0" encoding="UTF-8"?>`` prolog, one element per
snapshot node named after its type (``XCUIElementTypeButton``), two spaces of indentation per level,
``<X .../>`` for a node without children and a newline at the end. The attributes come in the order
of ``FBElementAttribute.supportedAttributes``: ``type, value, name, label, enabled, visible,
accessible, x, y, width, height, index``, then ``placeholderValue`` (text inputs only) and ``traits``;
the ones that cost XCTest extra queries (``hittable``, ``nativeFrame``, ``nativeAccessibilityElement``,
``minValue``/``maxValue``, ``customActions``) are left out unless asked for, and an attribute whose
value is nil is not written at all. The application element adds ``processId`` and ``bundleId``.

The values follow ``XCUIElement+FBWebDriverAttributes.m``:

* ``name`` is the accessibility identifier, else the label; ``label`` is left out when empty except
  on text fields, which always carry one (``label=""``);
* ``value``: a StaticText's is its label, a Switch's ``"1"``/``"0"``, a selected Button's ``"1"``, a
  text input's its text or, when empty, its placeholder (as iOS reports an empty field), a Slider's
  ``"NN%"``; a SecureTextField's text is one bullet per character;
* ``x, y, width, height`` are points (pixels / ``scale``) of the element's whole frame, made integral
  as ``CGRectIntegral`` does (origin floored, far edge ceiled), so a 100 px wide view at 3x is 34 pt;
* ``accessible`` is true for an accessibility element none of whose ancestors (Tables aside) is one:
  the texts inside a tappable Cell or Button are not accessible, the Cell is; text fields count even
  when the field itself is not the accessibility element;
* ``traits`` joins ``UIAccessibilityTraits`` names with ``", "`` (WDA walks a dictionary, so the order
  on a device is a hash order; here it is the traits' bit order).

How the Android views map (iOS has no Android classes): the window root is a Window; the app bar a
NavigationBar named after its title (with a StaticText of trait Header, and "Navigate up" as a Button
"Back"); an EditText a TextField (SecureTextField for passwords, TextView when multi-line); a Switch or
CheckBox a Switch; a SeekBar a Slider; Buttons and every clickable view outside a list a Button (one
element, labelled with the texts inside it joined by ``", "``, as SwiftUI combines them); clickable
rows of a list (RecyclerView, ListView, GridView) Cells, labelled with their first text and valued
with the others (a Settings row reads ``name="Wi-Fi" value="Off"``), their texts kept as children;
TextViews StaticTexts; ImageViews Images; lists a Table (a GridView a CollectionView), other scroll
containers a ScrollView, a WebView a WebView; the launcher's app icons Icons; the rest Other. Views
scrolled out of sight are not in the snapshot at all (a real one keeps them with ``visible="false"``).

While the soft keyboard is up, the application gets a second Window holding an ``XCUIElementTypeKeyboard``
over the bottom of the screen with a Key (or Button) per key: the app's controls under it are still in
the tree and still ``visible="true"`` (XCTest's visibility ignores other windows), but a tap there types.

``BUNDLE_IDS`` is where the emulated iPhone's bundle ids come from: Apple's stock apps under Apple's
ids, the others under their package names.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.sim.phone import keyboard
from ufo_mobile.sim.phone.view import PASSWORD_DOT, Snapshot, View

__all__ = ["BUNDLE_IDS", "SPRINGBOARD", "Element", "bundle_id", "element_tree", "package_for", "to_description",
           "to_json", "to_xml"]

#: The emulated iPhone's bundle id for each Android package of the simulated phone; a package not
#: listed keeps its own name as its bundle id. The launcher is SpringBoard.
BUNDLE_IDS: dict[str, str] = {
    "com.android.launcher3": "com.apple.springboard",
    "com.android.settings": "com.apple.Preferences",
    "com.google.android.apps.messaging": "com.apple.MobileSMS",
    "com.android.contacts": "com.apple.MobileAddressBook",
    "com.example.notes": "com.apple.mobilenotes",
    "com.example.calendar": "com.apple.mobilecal",
    "com.example.clock": "com.apple.mobiletimer",
    "com.example.browser": "com.apple.mobilesafari",
}
SPRINGBOARD = "com.apple.springboard"

PROLOG = '<?xml version="1.0" encoding="UTF-8"?>'
_LIST_CLASSES = frozenset({"RecyclerView", "ListView", "GridView"})
_BUTTON_CLASSES = frozenset({"Button", "ImageButton", "FloatingActionButton", "ExtendedFloatingActionButton"})
_IMAGE_CLASSES = frozenset({"ImageView", "QuickContactBadge"})
_TOGGLE_CLASSES = frozenset({"Switch", "SwitchCompat", "SwitchMaterial", "CheckBox", "ToggleButton", "RadioButton",
                             "CompoundButton", "CheckedTextView"})
_TEXT_INPUTS = frozenset({"TextField", "SecureTextField", "TextView", "SearchField"})
#: Icon glyphs of the simulated apps, named as an icon-only iOS button's label would be.
_GLYPH_NAMES = {"+": "Add", "<": "Back", ">": "Send", "x": "Close", "search": "Search", "list": "More"}
#: UIAccessibilityTraits names in their bit order (UIAccessibilityConstants.h; ToggleButton is iOS 17's).
_TRAIT_ORDER = ("Button", "Link", "Image", "Selected", "PlaysSound", "KeyboardKey", "StaticText", "SummaryElement",
                "NotEnabled", "UpdatesFrequently", "SearchField", "StartsMediaSession", "Adjustable",
                "AllowsDirectInteraction", "CausesPageTurn", "TabBar", "Header", "ToggleButton", "SupportsZoom")
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_SPECIAL = re.compile("[&<>\"\n\r\t]")


def bundle_id(package: str) -> str:
    """The emulated iPhone's bundle id of an Android package (``BUNDLE_IDS``, else the package)."""
    return BUNDLE_IDS.get(package, package)


def package_for(bundle: str, installed: Iterable[str]) -> str | None:
    """The installed Android package shown as ``bundle``, or None: an Apple id maps back to its
    package; a stock app's Android package is not a bundle id on the iPhone."""
    packages = set(installed)
    for package, mapped in BUNDLE_IDS.items():
        if mapped == bundle:
            return package if package in packages else None
    if bundle in BUNDLE_IDS:
        return None
    return bundle if bundle in packages else None


@dataclass
class Element:
    """One node of the emulated XCTest snapshot; ``frame`` is in points, unrounded (x, y, w, h)."""

    type: str
    frame: tuple[float, float, float, float]
    value: str | bool | None = None
    identifier: str = ""
    label: str = ""
    placeholder: str | None = None
    enabled: bool = True
    visible: bool = True
    a11y: bool = False             # isAccessibilityElement (the element's own flag)
    accessible: bool = False       # WDA's ``accessible`` (set by ``element_tree``)
    traits: tuple[str, ...] = ()
    selected: bool = False
    focused: bool = False
    minmax: tuple[int, int] | None = None
    pid: int = 0
    bundle: str | None = None
    view: View | None = None       # the simulated view it shows (None for the keyboard and the root)
    children: list[Element] = field(default_factory=list)

    @property
    def wd_type(self) -> str:
        return f"XCUIElementType{self.type}"

    @property
    def wd_label(self) -> str | None:
        if self.type in ("TextField", "SecureTextField"):
            return self.label
        return self.label or None

    @property
    def wd_name(self) -> str | None:
        return self.identifier or self.label or None

    @property
    def wd_value(self) -> str | None:
        value: Any = self.value
        if self.type == "StaticText":
            value = value or self.label
        elif self.type == "Button":
            value = value or ("1" if self.selected else None)
        elif self.type == "Switch":
            value = "1" if value else "0"
        elif self.type in _TEXT_INPUTS:
            value = value or self.placeholder
        return None if value in (None, "") else str(value)

    @property
    def rect(self) -> tuple[int, int, int, int]:
        """``CGRectIntegral`` of the frame: x, y, width, height in whole points."""
        x, y, w, h = self.frame
        left, top = math.floor(x), math.floor(y)
        return left, top, math.ceil(x + w) - left, math.ceil(y + h) - top

    @property
    def wd_traits(self) -> str:
        traits = set(self.traits)
        if self.selected:
            traits.add("Selected")
        if not self.enabled:
            traits.add("NotEnabled")
        return ", ".join(name for name in _TRAIT_ORDER if name in traits)

    def walk(self) -> Iterator[Element]:
        """This element and its descendants, in document order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, type_: str, label: str | None = None) -> Element | None:
        """The first element of ``type_`` (short form, ``"Button"``), with ``label`` if given."""
        return next((e for e in self.walk() if e.type == type_ and (label is None or e.label == label)), None)


# -- the snapshot -----------------------------------------------------------------------------------


class _Builder:
    def __init__(self, snap: Snapshot, scale: float) -> None:
        self.snap = snap
        self.scale = scale
        self.launcher = bundle_id(snap.package) == SPRINGBOARD

    def frame(self, view: View) -> tuple[float, float, float, float]:
        rect, s = view.frame, self.scale
        return rect.left / s, rect.top / s, rect.width / s, rect.height / s

    def element(self, type_: str, view: View, **kw: Any) -> Element:
        visible = view.bounds.width > 0 and view.bounds.height > 0
        return Element(type_, self.frame(view), enabled=view.enabled, visible=visible, view=view,
                       selected=view.selected, **kw)

    def convert(self, view: View, in_list: bool) -> Element:
        short = view.cls.rsplit(".", 1)[-1]
        if view.key == "root":
            return self.container("Window", view, in_list)
        if view.kind == "field":
            return self.text_input(view)
        if view.kind == "toggle" or short in _TOGGLE_CLASSES:
            return self.element("Switch", view, value=view.checked, label=view.desc or view.text, a11y=True,
                                traits=("Button", "ToggleButton"))
        if view.kind == "seekbar" or short == "SeekBar":
            span = max(1, view.vmax - view.vmin)
            percent = round(100 * (view.value - view.vmin) / span)
            return self.element("Slider", view, value=f"{percent}%", label=view.desc, a11y=True,
                                traits=("Adjustable",), minmax=(view.vmin, view.vmax))
        if view.key == "toolbar":
            title = next((c.text for c in view.children if c.resource_id.endswith(":id/toolbar_title")), "")
            bar = self.element("NavigationBar", view, identifier=title)
            bar.children = [self.convert(child, in_list) for child in view.children]
            return bar
        if view.resource_id.endswith(":id/toolbar_title"):
            return self.element("StaticText", view, label=view.text, a11y=True, traits=("Header",))
        if view.desc == "Navigate up" and view.clickable:
            return self.element("Button", view, label="Back", a11y=True, traits=("Button",))
        if short == "WebView":
            return self.container("WebView", view, in_list)
        if view.scrollable or short in _LIST_CLASSES or short.endswith("ScrollView"):
            kind = "CollectionView" if short == "GridView" else "Table" if short in _LIST_CLASSES else "ScrollView"
            return self.container(kind, view, short in _LIST_CLASSES)
        if self.launcher and view.style == "app_icon" and view.clickable:
            return self.element("Icon", view, label=view.desc or view.text, a11y=True, traits=("Button",))
        if view.clickable or (view.long_clickable and view.kind == "plain" and view.children):
            return self.tappable(view, short, in_list)
        if short in _IMAGE_CLASSES or (not view.children and not view.text and view.desc):
            return self.element("Image", view, label=view.desc, a11y=bool(view.desc), traits=("Image",))
        if view.text and not view.children:
            return self.element("StaticText", view, label=view.shown_text, a11y=True, traits=("StaticText",))
        return self.container("Other", view, in_list)

    def container(self, type_: str, view: View, in_list: bool) -> Element:
        element = self.element(type_, view)
        element.children = [self.convert(child, in_list) for child in view.children]
        return element

    def text_input(self, view: View) -> Element:
        spec = view.spec
        type_ = "SecureTextField" if view.password else "TextView" if spec is not None and spec.multiline \
            else "TextField"
        text = PASSWORD_DOT * len(view.text) if view.password else view.text
        return self.element(type_, view, value=text, label=view.desc, placeholder=view.hint or None, a11y=True,
                            focused=view.focused)

    def tappable(self, view: View, short: str, in_list: bool) -> Element:
        interactive = any(_interactive(d) for child in view.children for d in child.walk())
        if in_list and short not in _BUTTON_CLASSES:
            cell = self.element("Cell", view, a11y=not interactive, traits=("Button",) if not interactive else ())
            cell.children = [self.convert(child, False) for child in view.children]
            if not interactive:  # UITableViewCell: its title is the label, the texts after it the value
                texts = _texts(view)
                cell.label = texts[0] if texts else ""
                cell.value = ", ".join(texts[1:]) or None
            return cell
        if interactive:
            return self.container("Other", view, in_list)
        label = ", ".join(_texts(view)) or _GLYPH_NAMES.get(view.icon, view.icon)
        return self.element("Button", view, label=label, a11y=True, traits=("Button",))

    def keyboard_window(self) -> Element:
        width, height, s = self.snap.width, self.snap.height, self.scale
        rect = keyboard.window_rect(width, height)

        def pts(left: int, top: int, right: int, bottom: int) -> tuple[float, float, float, float]:
            return left / s, top / s, (right - left) / s, (bottom - top) / s

        keys: list[Element] = []
        for key in keyboard.keys(width, height):
            frame = pts(key.rect.left, key.rect.top, key.rect.right, key.rect.bottom)
            if key.action == "type":
                keys.append(Element("Key", frame, label=key.label, a11y=True, traits=("KeyboardKey",)))
            elif key.action == "shift":
                keys.append(Element("Button", frame, label="shift", a11y=True, traits=("Button", "KeyboardKey")))
            elif key.action == "delete":
                keys.append(Element("Key", frame, label="delete", a11y=True, traits=("KeyboardKey",)))
            elif key.action == "symbols":
                keys.append(Element("Key", frame, identifier="more", label="numbers", a11y=True,
                                    traits=("KeyboardKey",)))
            elif key.action == "space":
                keys.append(Element("Key", frame, label="space", a11y=True, traits=("KeyboardKey",)))
            else:
                keys.append(Element("Button", frame, identifier="Return", label="return", a11y=True,
                                    traits=("Button", "KeyboardKey")))
        board = Element("Keyboard", pts(rect.left, rect.top, rect.right, rect.bottom), children=keys)
        holder = Element("Other", board.frame, children=[board])
        return Element("Window", (0.0, 0.0, width / s, height / s), children=[holder])


def _interactive(view: View) -> bool:
    short = view.cls.rsplit(".", 1)[-1]
    return view.clickable or view.kind != "plain" or short in _BUTTON_CLASSES or view.checkable


def _texts(view: View) -> list[str]:
    """The accessibility labels inside ``view``, in reading order: its description wins over its text."""
    if view.desc:
        return [view.desc]
    if view.text and view.kind != "field":
        return [view.shown_text]
    return [text for child in view.children for text in _texts(child)]


def element_tree(snap: Snapshot, *, scale: float, bundle: str, pid: int, label: str) -> Element:
    """The XCTest snapshot of the application showing ``snap``: its window(s) under an Application."""
    builder = _Builder(snap, scale)
    app = Element("Application", (0.0, 0.0, snap.width / scale, snap.height / scale), label=label, pid=pid,
                  bundle=bundle)
    app.children = [builder.convert(snap.root, False)]
    if snap.keyboard:
        app.children.append(builder.keyboard_window())
    _mark_accessible(app, False)
    return app


def _mark_accessible(element: Element, ancestor: bool) -> None:
    """WDA's ``isWDAccessible``: an accessibility element (a text field always, a Cell that is not one
    when its first child is) with no accessibility element above it (a Table does not count)."""
    own = element.a11y
    if element.type == "Cell" and not own:
        own = bool(element.children) and element.children[0].a11y
    elif element.type in ("TextField", "SecureTextField"):
        own = True
    element.accessible = own and not ancestor
    below = ancestor or (element.a11y and element.type != "Table")
    for child in element.children:
        _mark_accessible(child, below)


# -- writers ----------------------------------------------------------------------------------------


def _escape(value: str) -> str:
    value = _INVALID_XML.sub("", value)  # fb_xmlSafeStringWithReplacement:@""
    return _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], value)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _attributes(element: Element, index: int, excluded: frozenset[str]) -> list[tuple[str, str]]:
    x, y, w, h = element.rect
    found: list[tuple[str, str | None]] = [
        ("type", element.wd_type), ("value", element.wd_value), ("name", element.wd_name),
        ("label", element.wd_label), ("enabled", _bool(element.enabled)), ("visible", _bool(element.visible)),
        ("accessible", _bool(element.accessible)), ("x", str(x)), ("y", str(y)), ("width", str(w)),
        ("height", str(h)), ("index", str(index)),
    ]
    if element.type in _TEXT_INPUTS:
        found.append(("placeholderValue", element.placeholder))
    found.append(("traits", element.wd_traits))
    attributes = [(name, value) for name, value in found if value is not None and name.lower() not in excluded]
    if element.type == "Application" and element.pid > 0:
        attributes.append(("processId", str(element.pid)))
        if element.bundle is not None:
            attributes.append(("bundleId", element.bundle))
    return attributes


def _write(element: Element, index: int, depth: int, excluded: frozenset[str], out: list[str]) -> None:
    pad = "  " * depth
    attrs = " ".join(f'{name}="{_escape(value)}"' for name, value in _attributes(element, index, excluded))
    tag = _escape(element.wd_type)
    if not element.children:
        out.append(f"{pad}<{tag} {attrs}/>")
        return
    out.append(f"{pad}<{tag} {attrs}>")
    for position, child in enumerate(element.children):
        _write(child, position, depth + 1, excluded, out)
    out.append(f"{pad}</{tag}>")


def to_xml(root: Element, *, scope: str | None = None, excluded: Iterable[str] = ()) -> str:
    """The tree as WDA's ``/source`` XML. ``scope`` wraps it in an element of that name (Appium asks
    for ``AppiumAUT``); ``excluded`` leaves out attributes by name, case-insensitively."""
    out = [PROLOG]
    names = frozenset(name.strip().lower() for name in excluded if name.strip())
    scope = _INVALID_XML.sub("", scope or "")
    if scope:
        out.append(f"<{_escape(scope)}>")
    _write(root, 0, 1 if scope else 0, names, out)
    if scope:
        out.append(f"</{_escape(scope)}>")
    return "\n".join(out) + "\n"


def _cg_rect(x: float, y: float, w: float, h: float) -> str:
    def num(value: float) -> str:
        return str(int(value)) if float(value).is_integer() else repr(float(value))

    return f"{{{{{num(x)}, {num(y)}}}, {{{num(w)}, {num(h)}}}}}"


def _as_dict(element: Element, excluded: frozenset[str]) -> dict[str, Any]:
    x, y, w, h = element.rect
    info: dict[str, Any] = {
        "type": element.type, "rawIdentifier": element.identifier or None, "name": element.wd_name,
        "value": element.wd_value, "label": element.wd_label,
        "rect": {"x": x, "y": y, "width": w, "height": h}, "customActions": None,
    }
    blocks: dict[str, tuple[str, Any]] = {
        "frame": ("frame", _cg_rect(x, y, w, h)), "nativeFrame": ("nativeFrame", _cg_rect(*element.frame)),
        "enabled": ("isEnabled", "1" if element.enabled else "0"),
        "visible": ("isVisible", "1" if element.visible else "0"),
        "accessible": ("isAccessible", "1" if element.accessible else "0"),
        "nativeAccessibilityElement": ("isNativeAccessibilityElement", "1" if element.a11y else "0"),
        "focused": ("isFocused", "1" if element.focused else "0"), "traits": ("traits", element.wd_traits),
    }
    if element.type in _TEXT_INPUTS:
        blocks["placeholderValue"] = ("placeholderValue", element.placeholder)
    if element.minmax is not None:
        blocks["minValue"] = ("minValue", element.minmax[0])
        blocks["maxValue"] = ("maxValue", element.minmax[1])
    for name, (key, value) in blocks.items():
        if name not in excluded:
            info[key] = value
    if element.children:
        info["children"] = [_as_dict(child, excluded) for child in element.children]
    return info


def to_json(root: Element, *, excluded: Iterable[str] = ()) -> dict[str, Any]:
    """The tree as WDA's ``/source?format=json`` object (``XCUIApplication+FBHelpers``'s ``fb_tree``):
    short type names, the ``is``-prefixed flags as ``"1"``/``"0"`` strings, children nested."""
    return _as_dict(root, frozenset(name.strip() for name in excluded if name.strip()))


def to_description(root: Element) -> str:
    """The tree as ``/source?format=description``: one line per element, XCTest's debug-description
    shape (type, frame in points, identifier, label, value), two spaces of indentation per level.
    An approximation: XCTest's real text also carries memory addresses."""
    lines: list[str] = []

    def line(element: Element, depth: int) -> None:
        parts = [element.type, _cg_rect(*element.frame)]
        if element.type == "Application":
            parts.insert(1, f"pid: {element.pid}")
        if element.identifier:
            parts.append(f"identifier: {json.dumps(element.identifier, ensure_ascii=False)}")
        if element.label:
            parts.append(f"label: {json.dumps(element.label, ensure_ascii=False)}")
        value = element.wd_value if element.type != "StaticText" else None
        if value is not None:
            parts.append(f"value: {json.dumps(value, ensure_ascii=False)}")
        lines.append("  " * depth + ", ".join(parts))
        for child in element.children:
            line(child, depth + 1)

    line(root, 0)
    return "\n".join(lines)
