"""What is on the simulated screen: a laid-out tree of views with pixel bounds.

``layout`` builds a ``Snapshot`` from an app, its state and the navigation frame; ``hierarchy``
turns it into uiautomator XML, ``render`` into a PNG and ``phone`` hit-tests it. A snapshot is
built fresh for every observation and nothing changes it afterwards, so rendering may run in
another thread while the phone takes more input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ufo_mobile.sim.phone.model import Node
from ufo_mobile.sim.phone.template import Scope

PASSWORD_DOT = "\u2022"
ELLIPSIS = "\u2026"

#: The most characters of text a view carries: its ``text``, ``content-desc`` and ``hint`` as the
#: UI dump reports them, and so what layout measures and render draws. Longer text is cut to this
#: many characters, the last one an ellipsis (``bounded``); the app's state keeps it whole. A real
#: TextView shows no more than its box and ``maxLines`` hold either, and a dump carrying a megabyte
#: label helps no reader: 10,000 characters is several screens of small print on any phone.
TEXT_LIMIT = 10_000


def bounded(text: str) -> str:
    """``text``, cut to ``TEXT_LIMIT`` characters (ending in an ellipsis) when it is longer."""
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 1] + ELLIPSIS


@dataclass(frozen=True)
class Rect:
    """A pixel rectangle; ``right`` and ``bottom`` are exclusive, as in Android bounds."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    def contains(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def intersect(self, other: Rect) -> Rect | None:
        """The overlap of two rectangles, or ``None`` when it is empty."""
        left, top = max(self.left, other.left), max(self.top, other.top)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        if right <= left or bottom <= top:
            return None
        return Rect(left, top, right, bottom)

    def inset(self, dx: int, dy: int) -> Rect:
        """Shrink by ``dx``/``dy`` on each side, never below zero size."""
        dx, dy = min(dx, self.width // 2), min(dy, self.height // 2)
        return Rect(self.left + dx, self.top + dy, self.right - dx, self.bottom - dy)

    def android(self) -> str:
        """The uiautomator form ``[l,t][r,b]``."""
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"


@dataclass
class View:
    """One laid-out node. ``bounds`` is the visible part, ``frame`` the full unclipped box."""

    cls: str
    package: str
    frame: Rect
    bounds: Rect
    key: str = ""
    text: str = ""
    desc: str = ""
    hint: str = ""
    resource_id: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    kind: str = "plain"
    bind: str | None = None
    value: int = 0
    vmin: int = 0
    vmax: int = 100
    content_height: int = 0
    scroll_offset: int = 0
    scroll_range: int = 0
    style: str | None = None
    padding: tuple[int, int] = (0, 0)
    size: int | None = None
    align: str | None = None
    icon: str = ""
    color: str | None = None
    spec: Node | None = None
    scope: Scope | None = None
    children: list[View] = field(default_factory=list)

    @property
    def item(self) -> Any:
        """The list item this view was repeated for, if any."""
        return self.scope.item if self.scope is not None else None

    @property
    def shown_text(self) -> str:
        """The text an accessibility dump reports: dots for passwords, the hint when empty."""
        if self.password and self.text:
            return PASSWORD_DOT * len(self.text)
        if self.kind == "field" and not self.text:
            return self.hint
        return self.text

    def seek_value(self, x: int, scale: float) -> int:
        """A SeekBar's value for a touch at ``x`` (its track is inset 48 design pixels each side)."""
        track = self.frame.inset(round(48 * scale), 0)
        fraction = max(0.0, min(1.0, (x - track.left) / max(1, track.width)))
        return self.vmin + round(fraction * (self.vmax - self.vmin))

    @property
    def showing_hint(self) -> bool:
        return self.kind == "field" and not self.text and bool(self.hint)

    def walk(self) -> Iterator[View]:
        """This view and all its descendants, in drawing order."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class StatusBar:
    time: str
    battery: int
    wifi: bool
    bluetooth: bool


@dataclass(frozen=True)
class Snapshot:
    """The current screen of the phone."""

    width: int
    height: int
    package: str
    screen: str
    activity: str
    root: View
    status: StatusBar
    status_height: int
    nav_height: int
    dark: bool = False
    toast: str = ""
    app_color: str | None = None
    background: str | None = None
    keyboard: bool = False     # the soft keyboard is up (drawn over the bottom, takes taps there)
    animated: bool = False     # the screen's ``animated`` flag (never idle)
    secure: bool = False       # the screen's ``secure`` flag (FLAG_SECURE)

    def find(self, predicate: Callable[[View], bool]) -> View | None:
        """The first view, in drawing order, for which ``predicate`` is true."""
        return next((view for view in self.root.walk() if predicate(view)), None)

    def hit(self, x: int, y: int, accept: Callable[[View], bool]) -> View | None:
        """The topmost, deepest view containing (x, y) that ``accept`` takes."""
        return _hit(self.root, x, y, accept)


def _hit(view: View, x: int, y: int, accept: Callable[[View], bool]) -> View | None:
    if not view.bounds.contains(x, y):
        return None
    for child in reversed(view.children):
        found = _hit(child, x, y, accept)
        if found is not None:
            return found
    return view if accept(view) else None
