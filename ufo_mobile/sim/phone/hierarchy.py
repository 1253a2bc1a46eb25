"""Export a snapshot as uiautomator XML, byte-compatible with ``uiautomator dump`` on a phone.

The output has the real prolog, ``<hierarchy rotation="0">``, one line, attributes in the order
Android writes them and, as Android 10+ does, ``drawing-order`` and ``hint`` after ``bounds``
(pass ``modern=False`` for the older 17-attribute form). Like Android's accessibility layer, an
empty EditText reports its hint as its text and a password field reports one dot per character.
Characters XML 1.0 cannot carry are replaced with ``?``, as the uiautomator dumper does.
"""

from __future__ import annotations

import re

from ufo_mobile.sim.phone.view import Snapshot, View

PROLOG = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"

_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
            "\t": "&#9;"}
_SPECIAL = re.compile("[&<>\"\n\r\t]")


def escape(value: str) -> str:
    """Escape text for a double-quoted XML attribute."""
    value = _INVALID.sub("?", value)
    return _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], value)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _attributes(view: View, index: int, order: int, modern: bool) -> str:
    parts = [
        f'index="{index}"',
        f'text="{escape(view.shown_text)}"',
        f'resource-id="{escape(view.resource_id)}"',
        f'class="{escape(view.cls)}"',
        f'package="{escape(view.package)}"',
        f'content-desc="{escape(view.desc)}"',
        f'checkable="{_flag(view.checkable)}"',
        f'checked="{_flag(view.checked)}"',
        f'clickable="{_flag(view.clickable)}"',
        f'enabled="{_flag(view.enabled)}"',
        f'focusable="{_flag(view.focusable)}"',
        f'focused="{_flag(view.focused)}"',
        f'scrollable="{_flag(view.scrollable)}"',
        f'long-clickable="{_flag(view.long_clickable)}"',
        f'password="{_flag(view.password)}"',
        f'selected="{_flag(view.selected)}"',
        f'bounds="{view.bounds.android()}"',
    ]
    if modern:
        parts.append(f'drawing-order="{order}"')
        parts.append(f'hint="{escape(view.hint)}"')
    return " ".join(parts)


def _node(view: View, index: int, order: int, modern: bool, out: list[str]) -> None:
    attributes = _attributes(view, index, order, modern)
    if not view.children:
        out.append(f"<node {attributes} />")
        return
    out.append(f"<node {attributes}>")
    for position, child in enumerate(view.children):
        _node(child, position, position + 1, modern, out)
    out.append("</node>")


def to_xml(snapshot: Snapshot, *, modern: bool = True) -> str:
    """The snapshot as one uiautomator XML document (a single line, no trailing newline)."""
    out = [PROLOG, '<hierarchy rotation="0">']
    _node(snapshot.root, 0, 0, modern, out)
    out.append("</hierarchy>")
    return "".join(out)
