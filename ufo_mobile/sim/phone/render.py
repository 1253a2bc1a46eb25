"""Draw a snapshot as a phone-sized PNG with Pillow.

Every view is drawn at its XML bounds, so what the model reads in the hierarchy is what it sees in
the screenshot. Scroll containers are drawn into their own layer, cropped to the viewport, so a
half-visible row never bleeds over the app bar. Output is deterministic: the same snapshot gives
the same bytes.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass

from PIL import Image, ImageDraw

from ufo_mobile.sim.phone import keyboard, paint, theme
from ufo_mobile.sim.phone.paint import Canvas, Fonts
from ufo_mobile.sim.phone.theme import Palette
from ufo_mobile.sim.phone.view import Rect, Snapshot, View

_TEXT_COLOURS = {"secondary": "secondary", "caption": "secondary", "header": "accent"}


@dataclass
class _Frame:
    """Drawing context: the target image and the screen-wide facts painters need."""

    image: Image.Image
    palette: Palette
    scale: float
    background: str

    def px(self, value: float) -> int:
        return round(value * self.scale)


class Renderer:
    """Renders snapshots; keeps its fonts. Safe to share between threads."""

    def __init__(self) -> None:
        self._fonts = Fonts()
        self._lock = threading.Lock()

    def png(self, snapshot: Snapshot) -> bytes:
        """The snapshot as PNG bytes."""
        buffer = io.BytesIO()
        self.image(snapshot).save(buffer, format="PNG", compress_level=1)
        return buffer.getvalue()

    def image(self, snapshot: Snapshot) -> Image.Image:
        """The snapshot as an RGB image of the phone's size."""
        palette = theme.DARK if snapshot.dark else theme.LIGHT
        background = snapshot.background or palette.background
        image = Image.new("RGB", (snapshot.width, snapshot.height), background)
        ctx = _Frame(image, palette, snapshot.width / 1080, background)
        with self._lock:
            canvas = Canvas(ImageDraw.Draw(image), self._fonts)
            self._view(canvas, snapshot.root, None, ctx)
            self._status_bar(canvas, snapshot, ctx)
            if snapshot.keyboard:
                keyboard.draw(canvas, snapshot.width, snapshot.height, snapshot.nav_height)
            self._nav_bar(canvas, snapshot, ctx)
            if snapshot.toast:
                self._toast(canvas, snapshot, ctx)
        return image

    # -- system bars ---------------------------------------------------------------------------

    def _status_bar(self, canvas: Canvas, snap: Snapshot, ctx: _Frame) -> None:
        bar = Rect(0, 0, snap.width, snap.status_height)
        colour = snap.background or ctx.palette.toolbar
        canvas.rect(bar, fill=colour)
        ink = ctx.palette.status_text
        size = ctx.px(36)
        paint.draw_text(canvas, Rect(ctx.px(48), 0, snap.width // 2, bar.bottom), snap.status.time, size, ink)
        right = snap.width - ctx.px(48)
        mid = bar.center[1]
        body = Rect(right - ctx.px(50), mid - ctx.px(15), right - ctx.px(6), mid + ctx.px(15))
        canvas.rect(body, outline=ink, width=max(2, ctx.px(3)), radius=ctx.px(5))
        level = Rect(body.left + ctx.px(5), body.top + ctx.px(5),
                     body.left + ctx.px(5) + round((body.width - ctx.px(10)) * snap.status.battery / 100),
                     body.bottom - ctx.px(5))
        canvas.rect(level, fill=ink)
        canvas.rect(Rect(right - ctx.px(6), mid - ctx.px(6), right, mid + ctx.px(6)), fill=ink)
        label = f"{snap.status.battery}%"
        width = canvas.fonts.width(size, label)
        x = body.left - ctx.px(16) - width
        paint.draw_text(canvas, Rect(x, 0, x + width + 2, bar.bottom), label, size, ink)
        x -= ctx.px(72)
        if snap.status.wifi:
            self._wifi_icon(canvas, x, bar.center[1], ctx, ink)
            x -= ctx.px(60)
        if snap.status.bluetooth:
            paint.draw_text(canvas, Rect(x, 0, x + ctx.px(40), bar.bottom), "B", size, ink, align="center")

    @staticmethod
    def _wifi_icon(canvas: Canvas, x: int, y: int, ctx: _Frame, ink: str) -> None:
        radius = ctx.px(26)
        top = y - radius // 2
        cx = x + radius
        canvas.draw.pieslice((cx - radius - canvas.ox, top - canvas.oy, cx + radius - canvas.ox,
                              top + 2 * radius - canvas.oy), 225, 315, fill=ink)

    def _nav_bar(self, canvas: Canvas, snap: Snapshot, ctx: _Frame) -> None:
        centre = snap.height - snap.nav_height // 2
        half = ctx.px(108)
        pill = Rect(snap.width // 2 - half, centre - ctx.px(6), snap.width // 2 + half, centre + ctx.px(6))
        canvas.rect(pill, fill=ctx.palette.secondary, radius=ctx.px(6))

    def _toast(self, canvas: Canvas, snap: Snapshot, ctx: _Frame) -> None:
        size = ctx.px(40)
        width = canvas.fonts.width(size, snap.toast) + ctx.px(96)
        bottom = snap.height - snap.nav_height - ctx.px(160)
        box = Rect((snap.width - width) // 2, bottom - ctx.px(110), (snap.width + width) // 2, bottom)
        canvas.rect(box, fill="#323232", radius=ctx.px(55))
        paint.draw_text(canvas, box, snap.toast, size, "#FFFFFF", align="center", max_lines=1)

    # -- views ---------------------------------------------------------------------------------

    def _view(self, canvas: Canvas, view: View, parent: View | None, ctx: _Frame) -> None:
        self._paint(canvas, view, ctx)
        if parent is not None and parent.spec is not None and parent.spec.scrollable and view.clickable:
            y = view.frame.bottom - 1
            canvas.line([(view.frame.left + ctx.px(48), y), (view.frame.right, y)], ctx.palette.divider,
                        max(1, ctx.px(2)))
        if not view.children:
            return
        if view.spec is not None and view.spec.scrollable:
            self._scroll_layer(canvas, view, ctx)
            return
        for child in view.children:
            self._view(canvas, child, view, ctx)

    def _scroll_layer(self, outer: Canvas, view: View, ctx: _Frame) -> None:
        """Draw a scroll container's content into a layer clipped to its visible bounds."""
        box = view.bounds
        layer = Image.new("RGB", (box.width, box.height), ctx.background)
        canvas = Canvas(ImageDraw.Draw(layer), self._fonts, box.left, box.top)
        inner = _Frame(layer, ctx.palette, ctx.scale, ctx.background)
        for child in view.children:
            self._view(canvas, child, view, inner)
        ctx.image.paste(layer, (box.left - outer.ox, box.top - outer.oy))

    def _paint(self, canvas: Canvas, view: View, ctx: _Frame) -> None:
        pal = ctx.palette
        short = theme.short_class(view.cls)
        frame = view.frame.inset(*view.padding) if not view.children else view.frame
        if view.resource_id.endswith(":id/toolbar"):
            canvas.rect(frame, fill=pal.toolbar)
        if view.selected:
            canvas.rect(frame, fill=pal.surface)
        ink = pal.text if view.enabled else pal.secondary
        if short in ("SurfaceView", "TextureView", "VideoView"):  # a video frame
            canvas.rect(frame, fill="#000000")
        elif view.kind == "field":
            self._field(canvas, view, ctx)
        elif view.kind == "seekbar":
            fraction = (view.value - view.vmin) / max(1, view.vmax - view.vmin)
            paint.draw_seekbar(canvas, frame, fraction, pal.accent, pal.divider, ctx.scale)
        elif short in ("Switch", "SwitchCompat", "SwitchMaterial", "ToggleButton"):
            paint.draw_switch(canvas, frame, view.checked, pal.accent, pal.divider, "#FFFFFF", ctx.scale)
            text_box = Rect(frame.left + ctx.px(48), frame.top, frame.right - ctx.px(180), frame.bottom)
            paint.draw_text(canvas, text_box, view.text, view.size or ctx.px(48), ink, max_lines=1)
        elif short in ("CheckBox", "RadioButton", "CheckedTextView"):
            rest = paint.draw_checkbox(canvas, frame, view.checked, pal.accent, pal.secondary, ctx.scale,
                                       round_mark=short == "RadioButton")
            paint.draw_text(canvas, rest, view.text, view.size or ctx.px(44), ink, max_lines=1)
        elif short in theme.BUTTON_CLASSES or view.style == "fab":
            self._button(canvas, view, ctx)
        elif view.style == "app_icon":
            self._app_icon(canvas, view, ctx)
        elif view.style == "avatar":
            self._avatar(canvas, view, ctx)
        elif view.style in theme.BUBBLE_STYLES:
            self._bubble(canvas, view, ctx)
        elif view.icon:
            paint.draw_icon(canvas, frame, view.icon, ink)
        elif view.text:
            role = _TEXT_COLOURS.get(view.style or "", "text") if view.enabled else "secondary"
            colour = getattr(pal, role)
            lines = view.spec.lines if view.spec is not None else None
            single = (view.style or "body") not in theme.MULTILINE_STYLES and lines is None  # as layout measures
            paint.draw_text(canvas, frame, view.text, view.size or ctx.px(44), colour,
                            align=view.align or "left", max_lines=1 if single else lines, clip=view.bounds)

    def _field(self, canvas: Canvas, view: View, ctx: _Frame) -> None:
        pal = ctx.palette
        box = view.frame.inset(ctx.px(12), ctx.px(12))
        canvas.rect(box, fill=pal.field, outline=pal.accent if view.focused else pal.divider,
                    width=ctx.px(5) if view.focused else ctx.px(2), radius=ctx.px(28))
        inner = box.inset(ctx.px(36), ctx.px(16))
        multiline = view.spec is not None and view.spec.multiline
        size = view.size or ctx.px(44)
        text = view.shown_text if view.text else view.hint
        colour = pal.text if view.text else pal.secondary
        paint.draw_text(canvas, inner, text, size, colour, max_lines=None if multiline else 1,
                        valign="top" if multiline else "center", clip=view.bounds)
        if view.focused:
            wrapped = paint.wrap(view.shown_text, canvas.fonts, size, inner.width) if view.text else [""]
            lines = len(wrapped) if multiline else 1
            typed = (wrapped[-1] if multiline else view.shown_text) if view.text else ""
            x = min(inner.right, inner.left + canvas.fonts.width(size, typed) + ctx.px(4))
            step = theme.line_height(size)
            top = inner.top + (lines - 1) * step if multiline else inner.center[1] - step // 2
            canvas.line([(x, top + ctx.px(6)), (x, top + step - ctx.px(6))], pal.accent, max(2, ctx.px(4)))

    def _button(self, canvas: Canvas, view: View, ctx: _Frame) -> None:
        pal = ctx.palette
        short = theme.short_class(view.cls)
        filled = short != "ImageButton" or view.style == "fab"
        box = view.frame.inset(ctx.px(12), ctx.px(12))
        if filled:
            radius = ctx.px(40) if "Floating" in short or view.style == "fab" else box.height // 2
            canvas.rect(box, fill=pal.accent if view.enabled else pal.divider, radius=radius)
        ink = pal.on_accent if filled else pal.text
        if view.icon and view.text:
            icon_box = Rect(box.left + ctx.px(24), box.top, box.left + ctx.px(24) + box.height, box.bottom)
            paint.draw_icon(canvas, icon_box, view.icon, ink)
            rest = Rect(icon_box.right, box.top, box.right - ctx.px(24), box.bottom)
            paint.draw_text(canvas, rest, view.text, view.size or ctx.px(42), ink, align="center",
                            max_lines=1)
        elif view.icon:
            paint.draw_icon(canvas, box, view.icon, ink)
        else:
            paint.draw_text(canvas, box.inset(ctx.px(24), 0), view.text or view.desc, view.size or ctx.px(42),
                            ink, align="center", max_lines=1)

    def _app_icon(self, canvas: Canvas, view: View, ctx: _Frame) -> None:
        frame = view.frame
        size = min(round(frame.width * 0.6), ctx.px(150))
        left = frame.left + (frame.width - size) // 2
        top = frame.top + ctx.px(24)
        icon = Rect(left, top, left + size, top + size)
        canvas.rect(icon, fill=view.color or theme.colour_for(view.text), radius=size // 4)
        paint.draw_text(canvas, icon, theme.initials(view.text), size * 2 // 5, "#FFFFFF", align="center",
                        max_lines=1)
        label = Rect(frame.left + ctx.px(8), icon.bottom + ctx.px(12), frame.right - ctx.px(8), frame.bottom)
        paint.draw_text(canvas, label, view.text, view.size or ctx.px(36), ctx.palette.text, align="center",
                        max_lines=1, valign="top")

    def _avatar(self, canvas: Canvas, view: View, ctx: _Frame) -> None:
        frame = view.frame
        size = min(frame.width, frame.height) - ctx.px(24)
        left, top = frame.center[0] - size // 2, frame.center[1] - size // 2
        circle = Rect(left, top, left + size, top + size)
        name = view.icon or view.text or view.desc
        canvas.ellipse(circle, fill=view.color or theme.colour_for(name))
        paint.draw_text(canvas, circle, theme.initials(name)[:1], size // 2, "#FFFFFF", align="center",
                        max_lines=1)

    def _bubble(self, canvas: Canvas, view: View, ctx: _Frame) -> None:
        pal = ctx.palette
        outgoing = view.style == "bubble_out"
        size = view.size or ctx.px(44)
        pad = ctx.px(theme.BUBBLE_PAD)
        wrap_width = theme.bubble_text_width(view.frame.width, ctx.scale)
        lines = paint.wrap(view.text, canvas.fonts, size, wrap_width)
        width = max(canvas.fonts.width(size, line) for line in lines) + 2 * pad
        height = len(lines) * theme.line_height(size) + 2 * pad
        margin = ctx.px(theme.BUBBLE_MARGIN)
        left = view.frame.right - margin - width if outgoing else view.frame.left + margin
        top = view.frame.top + ctx.px(theme.BUBBLE_GAP) // 2
        canvas.rect(Rect(left, top, left + width, top + height),
                    fill=pal.accent if outgoing else pal.bubble_in, radius=ctx.px(40))
        paint.draw_lines(canvas, left + pad, top + pad, lines, size, pal.on_accent if outgoing else pal.text,
                         clip=view.bounds)
