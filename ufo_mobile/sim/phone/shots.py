"""The simulated phone's screenshots, encoded once per screen: PNG bytes kept per drawn content.

Rendering a 1080x2400 screen and encoding it as PNG costs an emulated phone far more CPU than
anything else it does, and an agent looks at the same screen many times (the settle check, a
retried observation, the same home screen at the start of every task). ``ShotCache`` keys the PNG
on everything the renderer draws (``drawn_key``) and keeps the few most recent screens, so the same
screen gives the same bytes without being drawn again, and any change the renderer would show
(a switch, a typed letter, the clock's minute, a toast, the keyboard, the theme) is a new key.

``drawn_key`` takes every field of the snapshot and of every view (new fields are taken
automatically), except the view's app spec and template scope, which the renderer does not read;
of the spec it takes the attributes ``render.py`` reads (``DRAWN_SPEC``; a unit test holds the two
together).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields
from operator import attrgetter

from ufo_mobile.sim.phone.view import Snapshot, View

#: The attributes of a view's spec (``model.Node``) that ``render.py`` reads.
DRAWN_SPEC = ("scrollable", "lines", "multiline")

_NOT_DRAWN = {"spec", "scope", "children"}
_view_fields = attrgetter(*(f.name for f in fields(View) if f.name not in _NOT_DRAWN))
_snapshot_fields = attrgetter(*(f.name for f in fields(Snapshot) if f.name != "root"))
_spec_fields = attrgetter(*DRAWN_SPEC)

#: Screens kept per phone (a few hundred KB of PNG at most).
KEPT = 8


def drawn_key(snapshot: Snapshot) -> Hashable:
    """Everything the renderer draws from ``snapshot``, as a hashable value."""
    return _snapshot_fields(snapshot), _view_key(snapshot.root)


def _view_key(view: View) -> Hashable:
    spec = None if view.spec is None else _spec_fields(view.spec)
    return _view_fields(view), spec, tuple(_view_key(child) for child in view.children)


class ShotCache:
    """The PNG bytes of the last ``KEPT`` screens drawn, by ``drawn_key``. Safe to share between threads."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._shots: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def png(self, snapshot: Snapshot, encode: Callable[[Snapshot], bytes]) -> bytes:
        """The PNG of ``snapshot``: the kept bytes of the same drawing, or ``encode(snapshot)``."""
        key = drawn_key(snapshot)
        with self._lock:
            found = self._shots.get(key)
            if found is not None:
                self._shots.move_to_end(key)
                return found
        data = encode(snapshot)
        with self._lock:
            self._shots[key] = data
            while len(self._shots) > self._kept:
                self._shots.popitem(last=False)
        return data
