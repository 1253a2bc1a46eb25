"""The uiautomator2 server's window dump: every window root, in the format its dumper writes.

``AccessibilityNodeInfoDumper.dumpWindowHierarchy`` (openatx/android-uiautomator-server) collects
the active window's root and every window's root into a ``HashSet`` and serializes them with an
indenting ``XmlSerializer`` (KXmlSerializer: ``\\r\\n`` and two spaces per level, ``" />"`` for empty
elements). Each root is a ``<node index="0">`` straight under ``<hierarchy>``; the attributes add
``visible-to-user``, ``editable`` and ``display-id`` to uiautomator's, and ``NAF="true"`` comes first
on clickable nodes with no text or description anywhere below them. The roots are the status bar,
the navigation bar, the app and, while it is up, the soft keyboard; their order is a HashSet's, so
it is shuffled here with a seed from the device profile and the dump's number.
"""

from __future__ import annotations

import random

from ufo_mobile.sim.phone import keyboard
from ufo_mobile.sim.phone.hierarchy import PROLOG, escape
from ufo_mobile.sim.phone.view import Rect, Snapshot, View

SYSTEMUI = "com.android.systemui"
_NAF_EXCLUDED = ("android.widget.GridView", "android.widget.GridLayout", "android.widget.ListView",
                 "android.widget.TableLayout")


def _view(cls: str, package: str, rect: Rect, rid: str = "", text: str = "", desc: str = "",
          clickable: bool = False, children: list[View] | None = None) -> View:
    view = View(cls=cls, package=package, frame=rect, bounds=rect, text=text, desc=desc, clickable=clickable,
                resource_id=f"{package}:id/{rid}" if rid else "")
    view.children = children or []
    return view


def status_bar(snap: Snapshot) -> View:
    bar = Rect(0, 0, snap.width, snap.status_height)
    scale = snap.width / 1080
    clock = Rect(round(48 * scale), 0, round(220 * scale), bar.bottom)
    icons = Rect(snap.width - round(420 * scale), 0, snap.width - round(36 * scale), bar.bottom)
    system = [_view("android.widget.ImageView", SYSTEMUI, icons, "wifi_signal", desc="Wifi signal full.")
              ] if snap.status.wifi else []
    system.append(_view("android.widget.LinearLayout", SYSTEMUI, icons, "battery",
                        desc=f"Battery {snap.status.battery} percent."))
    contents = _view("android.widget.LinearLayout", SYSTEMUI, bar, "status_bar_contents", children=[
        _view("android.widget.TextView", SYSTEMUI, clock, "clock", text=snap.status.time),
        _view("android.widget.LinearLayout", SYSTEMUI, icons, "system_icons", children=system)])
    status = _view("android.widget.FrameLayout", SYSTEMUI, bar, "status_bar", children=[contents])
    return _view("android.widget.FrameLayout", SYSTEMUI, bar, children=[
        _view("android.widget.FrameLayout", SYSTEMUI, bar, "status_bar_container", children=[status])])


def navigation_bar(snap: Snapshot) -> View:
    bar = Rect(0, snap.height - snap.nav_height, snap.width, snap.height)
    half = round(108 * snap.width / 1080)
    handle = Rect(snap.width // 2 - half, bar.top, snap.width // 2 + half, bar.bottom)
    return _view("android.widget.FrameLayout", SYSTEMUI, bar, children=[
        _view("android.widget.FrameLayout", SYSTEMUI, bar, "navigation_bar_frame", children=[
            _view("android.view.View", SYSTEMUI, handle, "home_handle")])])


def keyboard_window(snap: Snapshot, package: str) -> View:
    window = keyboard.window_rect(snap.width, snap.height)
    keys = [_view("android.view.View", package, key.rect, desc=key.desc, clickable=True)
            for key in keyboard.keys(snap.width, snap.height)]
    holder = _view("android.widget.FrameLayout", package, window, "keyboard_holder", children=keys)
    return _view("android.widget.FrameLayout", package, window, children=[holder])


def window_roots(snap: Snapshot, ime_package: str, seed: str) -> list[View]:
    """The window roots of one dump, in this dump's (seeded) HashSet order."""
    roots = [status_bar(snap), snap.root, navigation_bar(snap)]
    if snap.keyboard:
        roots.append(keyboard_window(snap, ime_package))
    random.Random(seed).shuffle(roots)
    return roots


def _naf(view: View) -> bool:
    """Not Accessibility Friendly: enabled and clickable, and no text or description in it or below."""
    if view.cls in _NAF_EXCLUDED or not (view.clickable and view.enabled) or view.shown_text or view.desc:
        return False
    return not any(child.shown_text or child.desc for child in view.walk() if child is not view)


def _attributes(view: View, index: int, order: int) -> str:
    flag = {True: "true", False: "false"}
    parts = ['NAF="true"'] if _naf(view) else []
    parts += [
        f'index="{index}"', f'text="{escape(view.shown_text)}"', f'resource-id="{escape(view.resource_id)}"',
        f'class="{escape(view.cls)}"', f'package="{escape(view.package)}"', f'content-desc="{escape(view.desc)}"',
        f'checkable="{flag[view.checkable]}"', f'checked="{flag[view.checked]}"',
        f'clickable="{flag[view.clickable]}"', f'enabled="{flag[view.enabled]}"',
        f'focusable="{flag[view.focusable]}"', f'focused="{flag[view.focused]}"',
        f'scrollable="{flag[view.scrollable]}"', f'long-clickable="{flag[view.long_clickable]}"',
        f'password="{flag[view.password]}"', f'selected="{flag[view.selected]}"', 'visible-to-user="true"',
        f'bounds="{view.bounds.android()}"', f'editable="{flag[view.kind == "field"]}"',
        f'drawing-order="{order}"', f'hint="{escape(view.hint)}"', 'display-id="0"',
    ]
    return " ".join(parts)


def _node(view: View, index: int, order: int, depth: int, max_depth: int, out: list[str]) -> None:
    pad = "\r\n" + "  " * depth
    attributes = _attributes(view, index, order)
    if not view.children or max_depth <= 0:
        out.append(f"{pad}<node {attributes} />")
        return
    out.append(f"{pad}<node {attributes}>")
    for position, child in enumerate(view.children):
        _node(child, position, position + 1, depth + 1, max_depth - 1, out)
    out.append(f"{pad}</node>")


def to_u2_xml(roots: list[View], max_depth: int = 50) -> str:
    """The roots as the uiautomator2 server writes them."""
    out = [PROLOG, '\r\n<hierarchy rotation="0">']
    for root in roots:
        _node(root, 0, 0, 1, max_depth, out)
    out.append("\r\n</hierarchy>")
    return "".join(out)
