"""Turn a screen spec plus app state into a ``View`` tree with real pixel bounds.

Layout works like a stripped-down Android LinearLayout: a node measures its natural height
from its content, columns stack children and hand the space left over to ``grow`` children, rows
give fixed-width widgets their width and share the rest, grids fill cells, and scroll containers
lay their content out at natural height, shift it by the scroll offset and clip it to the
viewport (moved on a little when the viewport would end exactly on a row boundary while more lies
below, so the next row shows cut off, as on a real phone). Views that end up entirely outside their
parent's visible area are dropped, exactly like the rows a RecyclerView has not attached; visible
views carry bounds clipped to what shows. A view's text is cut to ``view.TEXT_LIMIT`` characters
before anything measures it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ufo_mobile.sim.phone import paint, theme
from ufo_mobile.sim.phone.lists import bind_names, select
from ufo_mobile.sim.phone.model import App, Node, Screen
from ufo_mobile.sim.phone.paint import Fonts
from ufo_mobile.sim.phone.template import Scope, all_hold, fmt, render, truthy
from ufo_mobile.sim.phone.view import Rect, View, bounded


@dataclass(frozen=True)
class _Inst:
    """One instance of a node spec: a ``for_each`` node yields one per list item."""

    spec: Node
    scope: Scope
    key: str


def _out_of_flow(spec: Node) -> bool:
    return spec.bounds is not None or spec.anchor is not None


class Layout:
    """Lays out one screen of one app; build a new one for every snapshot."""

    def __init__(self, app: App, state: Mapping[str, Any], extras: Mapping[str, Any], *, fonts: Fonts,
                 width: int, height: int, scroll: Mapping[str, int], focus: str | None,
                 content_bottom: int | None = None) -> None:
        self.app = app
        self.fonts = fonts
        self.width = width
        self.height = height
        self.scale = width / 1080
        self.scroll = scroll
        self.focus = focus
        self.scope = Scope(state, None, extras)
        self.status_height = self.px(theme.STATUS_BAR)
        self.nav_height = self.px(theme.NAV_BAR)
        self.content_bottom = content_bottom  # the keyboard's top, on a screen that resizes for it
        self._heights: dict[tuple[str, int], int] = {}

    def px(self, value: float) -> int:
        """Design pixels to screen pixels."""
        return round(value * self.scale)

    # -- screen --------------------------------------------------------------------------------

    def build(self, screen_name: str) -> View:
        """The full view tree of ``screen_name``: window root, decor, content, screen."""
        spec = self.app.screens[screen_name]
        full = Rect(0, 0, self.width, self.height)
        bottom = self.content_bottom if self.content_bottom is not None else self.height - self.nav_height
        content = Rect(0, self.status_height, self.width, bottom)
        items: list[_Inst] = []
        if spec.app_bar:
            items.append(_Inst(self._toolbar(spec, screen_name), self.scope, "toolbar"))
        for index, node in enumerate(spec.body):
            items.extend(self._expand(node, self.scope, f"body{index}"))
        screen = self._container("android.widget.LinearLayout", content, "screen")
        screen.children = self._arrange(items, "column", content, content, stretch=True)
        holder = self._container("android.widget.FrameLayout", content, "content")
        holder.resource_id = "android:id/content"
        holder.children = [screen]
        decor = self._container("android.widget.LinearLayout", full, "decor")
        decor.children = [holder]
        root = self._container("android.widget.FrameLayout", full, "root")
        root.children = [decor]
        return root

    def _container(self, cls: str, rect: Rect, key: str) -> View:
        return View(cls=cls, package=self.app.package, frame=rect, bounds=rect, key=key)

    def _toolbar(self, spec: Screen, screen_name: str) -> Node:
        up = spec.up if spec.up is not None else screen_name != self.app.start
        children: list[Any] = []
        if up:
            children.append({"class": "android.widget.ImageButton", "desc": "Navigate up", "icon": "<",
                             "width": theme.TOOLBAR, "height": theme.TOOLBAR, "on_tap": {"back": True}})
        children.append({"class": "android.widget.TextView", "id": "toolbar_title", "text": spec.title,
                         "style": "toolbar_title", "padding": [0 if up else 48, 0]})
        children.extend(spec.actions)
        return Node.model_validate({"class": "android.view.ViewGroup", "id": "toolbar", "layout": "row",
                                    "height": theme.TOOLBAR, "padding": [0, 0], "children": children})

    # -- expansion -----------------------------------------------------------------------------

    def _expand(self, spec: Node, scope: Scope, key: str) -> list[_Inst]:
        """Instances of ``spec`` that are visible: none, one, or one per list item."""
        if spec.for_each is None:
            own = bind_names(spec, scope)
            return [_Inst(spec, own, key)] if all_hold(spec.visible, own) else []
        found: list[_Inst] = []
        for index, _item, item_scope in select(spec.for_each, scope):
            own = bind_names(spec, item_scope)
            if all_hold(spec.visible, own):
                found.append(_Inst(spec, own, f"{key}#{index}"))
        return found

    def _children(self, inst: _Inst) -> list[_Inst]:
        found: list[_Inst] = []
        for index, child in enumerate(inst.spec.children):
            found.extend(self._expand(child, inst.scope, f"{inst.key}/{index}"))
        return found

    # -- measuring -----------------------------------------------------------------------------

    def _font_size(self, spec: Node) -> int:
        style = spec.style or ("button" if theme.short_class(spec.cls) in theme.BUTTON_CLASSES else "body")
        return self.px(spec.size or theme.FONT_SIZES[style])

    def _measure(self, inst: _Inst, width: int) -> int:
        """Natural height of an instance laid out ``width`` pixels wide (memoized per build)."""
        known = self._heights.get((inst.key, width))
        if known is None:
            known = self._heights[(inst.key, width)] = self._measure_uncached(inst, width)
        return known

    def _measure_uncached(self, inst: _Inst, width: int) -> int:
        spec = inst.spec
        if spec.height is not None:
            return self.px(spec.height)
        pad_h, pad_v = self.px(spec.padding[0]), self.px(spec.padding[1])
        inner = max(0, width - 2 * pad_h)
        content = self._measure_children(inst, inner) if spec.children else self._leaf_height(inst, inner)
        return content + 2 * pad_v

    def _measure_children(self, inst: _Inst, width: int) -> int:
        kids = [kid for kid in self._children(inst) if not _out_of_flow(kid.spec)]
        if not kids:
            return 0
        layout = inst.spec.layout
        if layout == "column":
            return sum(self._measure(kid, width) for kid in kids)
        if layout == "grid":
            cell = width // inst.spec.columns
            rows = [kids[i:i + inst.spec.columns] for i in range(0, len(kids), inst.spec.columns)]
            return sum(max(self._measure(kid, cell) for kid in row) for row in rows)
        share = width // len(kids) if layout == "row" else width
        return max(self._measure(kid, share) for kid in kids)

    def _leaf_height(self, inst: _Inst, width: int) -> int:
        spec = inst.spec
        short = theme.short_class(spec.cls)
        size = self._font_size(spec)
        if spec.kind == "field" and spec.multiline:
            return max(self.px(150), (spec.lines or 3) * theme.line_height(size) + self.px(60))
        if short in theme.LEAF_HEIGHTS:
            return self.px(theme.LEAF_HEIGHTS[short])
        text = bounded(render(spec.text, inst.scope) or render(spec.desc, inst.scope))
        if not text and "Text" not in short:
            return 0
        style = spec.style or "body"
        step = theme.line_height(size)
        if spec.lines is None and style not in theme.MULTILINE_STYLES:
            return step
        if style in theme.BUBBLE_STYLES:
            lines = len(paint.wrap(text, self.fonts, size, theme.bubble_text_width(width, self.scale)))
            return lines * step + 2 * self.px(theme.BUBBLE_PAD) + self.px(theme.BUBBLE_GAP)
        return len(paint.wrap(text, self.fonts, size, width, max_lines=spec.lines)) * step

    def _natural_width(self, inst: _Inst) -> int | None:
        """Width a widget wants in a row, or ``None`` to share the space left."""
        spec = inst.spec
        if spec.width is not None:
            return self.px(spec.width)
        if spec.grow:
            return None
        short = theme.short_class(spec.cls)
        if short in ("ImageButton", "ImageView"):
            return self._measure(inst, self.width)
        text = bounded(render(spec.text, inst.scope))
        if short == "Button":
            return self.fonts.width(self._font_size(spec), text) + self.px(96)
        if short in theme.CHECKABLE_CLASSES and not text:
            return self.px(180)
        return None

    # -- placing -------------------------------------------------------------------------------

    def _arrange(self, kids: list[_Inst], layout: str, inner: Rect, clip: Rect, *,
                 stretch: bool, columns: int = 4) -> list[View]:
        flow = [kid for kid in kids if not _out_of_flow(kid.spec)]
        if layout == "row":
            boxes = self._row_boxes(flow, inner)
        elif layout == "grid":
            boxes = self._grid_boxes(flow, inner, columns)
        elif layout == "stack":
            boxes = [inner] * len(flow)
        else:
            boxes = self._column_boxes(flow, inner, stretch)
        placed = [self._place(kid, box, clip) for kid, box in zip(flow, boxes, strict=True)]
        placed += [self._place(kid, self._float_box(kid, inner), clip)
                   for kid in kids if _out_of_flow(kid.spec)]
        return [view for view in placed if view is not None]

    def _column_boxes(self, kids: list[_Inst], inner: Rect, stretch: bool) -> list[Rect]:
        heights = [0 if stretch and kid.spec.grow else self._measure(kid, inner.width) for kid in kids]
        growers = [i for i, kid in enumerate(kids) if stretch and kid.spec.grow]
        if growers:
            spare = max(0, inner.height - sum(heights))
            for n, i in enumerate(growers):
                heights[i] = spare // len(growers) + (spare % len(growers) if n == 0 else 0)
        boxes, y = [], inner.top
        for kid, height in zip(kids, heights, strict=True):
            width = self.px(kid.spec.width) if kid.spec.width is not None else inner.width
            left = inner.left + (inner.width - width) // 2
            boxes.append(Rect(left, y, left + width, y + height))
            y += height
        return boxes

    def _row_boxes(self, kids: list[_Inst], inner: Rect) -> list[Rect]:
        widths = [self._natural_width(kid) for kid in kids]
        sharing = [i for i, width in enumerate(widths) if width is None]
        spare = max(0, inner.width - sum(width or 0 for width in widths))
        boxes, x = [], inner.left
        for i, kid in enumerate(kids):
            width = widths[i]
            if width is None:
                width = spare // len(sharing) + (spare % len(sharing) if i == sharing[0] else 0)
            height = self.px(kid.spec.height) if kid.spec.height is not None else inner.height
            top = inner.top + (inner.height - height) // 2
            boxes.append(Rect(x, top, x + width, top + height))
            x += width
        return boxes

    def _grid_boxes(self, kids: list[_Inst], inner: Rect, columns: int) -> list[Rect]:
        cell = inner.width // columns
        boxes: list[Rect] = []
        y = inner.top
        for start in range(0, len(kids), columns):
            row = kids[start:start + columns]
            height = max(self._measure(kid, cell) for kid in row)
            for n in range(len(row)):
                left = inner.left + n * cell
                boxes.append(Rect(left, y, left + cell, y + height))
            y += height
        return boxes

    def _float_box(self, inst: _Inst, inner: Rect) -> Rect:
        spec = inst.spec
        if spec.bounds is not None:
            left, top, right, bottom = (self.px(value) for value in spec.bounds)
            return Rect(left, top, right, bottom)
        width = self._natural_width(inst) or self.px(168)
        height = self._measure(inst, width) or self.px(168)
        margin = self.px(spec.margin)
        lefts = {"bottom_left": inner.left + margin, "bottom_center": inner.left + (inner.width - width) // 2}
        left = lefts.get(spec.anchor or "", inner.right - margin - width)
        top = inner.top + margin if spec.anchor == "top_right" else inner.bottom - margin - height
        return Rect(left, top, left + width, top + height)

    def _place(self, inst: _Inst, frame: Rect, clip: Rect) -> View | None:
        visible = frame.intersect(clip)
        if visible is None:
            return None
        spec = inst.spec
        view = self._make_view(inst, frame, visible)
        inner = frame.inset(self.px(spec.padding[0]), self.px(spec.padding[1]))
        kids = self._children(inst)
        if not kids:
            return view
        if spec.scrollable:
            view.children = self._scrolled(inst, kids, inner, visible, view)
        else:
            view.children = self._arrange(kids, spec.layout, inner, visible, stretch=True,
                                          columns=spec.columns)
        return view

    def _scrolled(self, inst: _Inst, kids: list[_Inst], inner: Rect, visible: Rect, view: View) -> list[View]:
        """Lay out scroll content at natural height, shifted by the stored offset."""
        flow = [kid for kid in kids if not _out_of_flow(kid.spec)]
        heights = [self._measure(kid, inner.width) for kid in flow]
        total = sum(heights)
        room = max(0, total - inner.height)
        offset = min(max(self.scroll.get(inst.key, 0), 0), room)
        if inst.spec.from_end:
            offset = room - offset
        offset = self._peek(heights, offset, inner.height, room)
        view.content_height = total
        view.scroll_offset = offset
        view.scroll_range = room
        view.scrollable = room > 0
        shifted = Rect(inner.left, inner.top - offset, inner.right, inner.top - offset + max(total, 1))
        clip = inner.intersect(visible) or visible
        return self._arrange(kids, "column", shifted, clip, stretch=False)

    def _peek(self, heights: list[int], offset: int, viewport: int, room: int) -> int:
        """``offset``, moved on just enough that the row under the viewport's bottom edge shows a part
        of itself (``theme.LIST_PEEK``, or a third of the row if less) while more lies below.

        Rows of fixed height in a viewport that happens to hold a whole number of them would
        otherwise end exactly at the edge, and nothing on the screen (or in the XML) would say the
        list goes on; a real list rarely stops there, and shows the next row cut off.
        """
        if offset >= room:
            return offset  # at the end: nothing lies below
        bottom = offset + viewport
        top = 0
        for height in heights:
            if top + height > bottom:  # the first row not wholly in view
                wanted = min(height // 3, self.px(theme.LIST_PEEK))
                shown = bottom - top
                return min(room, offset + wanted - shown) if shown < wanted else offset
            top += height
        return offset

    # -- one view ------------------------------------------------------------------------------

    def _make_view(self, inst: _Inst, frame: Rect, visible: Rect) -> View:
        spec, scope = inst.spec, inst.scope
        kind = spec.kind
        short = theme.short_class(spec.cls)
        value = scope.lookup(spec.bind) if spec.bind else None
        clickable = spec.clickable if spec.clickable is not None else (
            bool(spec.on_tap) or kind != "plain" or short in theme.BUTTON_CLASSES)
        view = View(
            cls=spec.cls, package=self.app.package, frame=frame, bounds=visible, key=inst.key,
            text=bounded(fmt(value) if kind == "field" else render(spec.text, scope)),
            desc=bounded(render(spec.desc, scope)), hint=bounded(render(spec.hint, scope)),
            resource_id=self._resource_id(spec.id),
            checkable=spec.checkable if spec.checkable is not None else (
                kind == "toggle" or short in theme.CHECKABLE_CLASSES),
            checked=truthy(value) if kind == "toggle" else bool(spec.checked),
            clickable=clickable, enabled=spec.enabled,
            focusable=spec.focusable if spec.focusable is not None else (
                clickable or kind != "plain" or spec.scrollable),
            focused=spec.focused if spec.focused is not None else (
                kind == "field" and spec.bind == self.focus),
            scrollable=False,
            long_clickable=spec.long_clickable if spec.long_clickable is not None else (
                bool(spec.on_long_press) or kind == "field"),
            password=spec.password, kind=kind, bind=spec.bind,
            selected=spec.selected if isinstance(spec.selected, bool) else all_hold(spec.selected, scope),
            vmin=spec.min, vmax=spec.max, style=spec.style,
            padding=(self.px(spec.padding[0]), self.px(spec.padding[1])),
            size=self._font_size(spec), align=spec.align, icon=render(spec.icon, scope),
            spec=spec, scope=scope,
        )
        if kind == "seekbar":
            view.value = _clamp(_as_int(value, spec.min), spec.min, spec.max)
        if isinstance(scope.item, Mapping) and isinstance(scope.item.get("color"), str):
            view.color = scope.item["color"]
        return view

    def _resource_id(self, rid: str) -> str:
        if not rid or ":" in rid:
            return rid
        return f"{self.app.package}:id/{rid}"


def _as_int(value: Any, default: int) -> int:
    try:
        return round(float(value))
    except (TypeError, ValueError):
        return default


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))
