"""A step's screens in the report: the screenshot before the action (the annotated one, the action's
target marked) beside the screen after it, with what changed boxed, each a click away from its
full-size file; and the legend of the colours drawn on them.

The screen after step N's action is the screenshot of the next step that looked at the phone
again (a step that reused N's observation saw the screen before the action); after the last step,
it is ``final.png``, which a run keeps when it ends (``core/agents/mobile.py``). A run cut off or
still going may have none, and the page says so.

The pictures are the small copies of each screenshot that the run keeps in memory
(``RunWriter.thumbnails``: the annotated one's for the before figure, the clean one's for the
after figure), embedded as the JPEGs they are while their files are unchanged; the action's target
and the change boxes are an SVG laid over each picture (``overlay.py``), so nothing is drawn into
pixels or encoded again. Only the comparison of the screens before and after decodes the clean
copies (at a reduced scale). A report made later from the run directory alone decodes and shrinks
the files instead, with the same marks over them.

Full-size images are links to the run directory's own files, relative to the page (``report.html``
sits in the run directory): the page stays small, and a browser opens them offline from there.
They are not embedded as data URIs: a full-size image is hundreds of kilobytes, times every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from ufo_mobile.core.trace.writer import Thumbnail
from ufo_mobile.core.ui.annotate import KIND_COLORS
from ufo_mobile.core.ui.screen_images import CLEAN_SIDE, clean_copy
from ufo_mobile.core.ui.screenshot import shrink
from ufo_mobile.report import markup as m
from ufo_mobile.report.diff import COMPARE_SIDE, Change, changed_boxes
from ufo_mobile.report.images import (
    CHANGED,
    HIGHLIGHT,
    Mark,
    Picture,
    kept_copy,
    kept_picture,
    open_rgb,
    picture,
    small_picture,
)
from ufo_mobile.report.load import ANNOTATED, RunView, StepView
from ufo_mobile.report.overlay import Marks, change_marks, framed, target_marks

AFTER_SIDE = CLEAN_SIDE  # 540: the after screen is smaller than the before one (both are shown 240 px wide)


@dataclass(frozen=True)
class After:
    """The screen after a step's action: ``path`` (None when there is none, ``note`` says why) and
    where it comes from (``source``: a later step's screenshot or ``final.png``)."""

    path: Path | None
    source: str = ""
    note: str = ""


def acted(step: StepView) -> bool:
    """Whether the step carried an action (one or several) for the phone."""
    return step.action is not None or bool(step.get("outcomes"))


def after_screens(run: RunView) -> dict[int, After]:
    """The screen after every step that carried an action, by step number."""
    found: dict[int, After] = {}
    for i, step in enumerate(run.steps):
        if not acted(step):
            continue
        seen = step.get("observation_id")
        later = next((s for s in run.steps[i + 1:] if s.screenshot is not None
                      and (seen is None or s.get("observation_id") != seen)), None)
        if later is not None and later.screenshot is not None:
            found[step.number] = After(later.screenshot, f"step {later.number}'s screenshot")
        elif run.final_png is not None:
            found[step.number] = After(run.final_png, "final.png, the screen when the run ended")
        else:
            found[step.number] = After(None, note=_no_after(run))
    return found


def _no_after(run: RunView) -> str:
    if run.running:
        return "the run is still going: the screen after this action is not recorded yet"
    if run.data.get("cut_off") or run.data.get("signal") or run.data.get("interrupted"):
        return "the run stopped before the screen after this action was recorded"
    return "no screen after this action was recorded (there is no later screenshot and no final.png)"


class Screens:
    """Screenshots read once for the page (each is the after of one step and the before of the
    next): the small clean copy the run kept (``kept``) while the file is unchanged, else the file."""

    def __init__(self, keep: int = 3) -> None:
        self._keep = keep
        self._images: dict[Path, Image.Image | None] = {}
        self._sizes: dict[Path, tuple[int, int]] = {}

    def get(self, path: Path, kept: Thumbnail | None = None) -> Image.Image | None:
        if path not in self._images:
            if len(self._images) >= self._keep:
                self._sizes.pop(next(iter(self._images)), None)
                self._images.pop(next(iter(self._images)))
            image = kept_copy(path, kept, AFTER_SIDE, at_least=COMPARE_SIDE) if kept is not None else None
            if image is not None and kept is not None:
                self._sizes[path] = kept.source_size
            else:
                image = open_rgb(path)
            self._images[path] = image
        return self._images[path]

    def size(self, path: Path, image: Image.Image) -> tuple[int, int]:
        """The screenshot's own size (``image`` may be its small copy)."""
        return self._sizes.get(path, image.size)


def render_figures(run: RunView, step: StepView, mark: Mark | None, after: After | None, screens: Screens) -> str:
    """The before figure, and for a step that acted the after figure beside it."""
    before = _before(run, step, mark, run.thumbnail(step.image))
    if after is None:
        return f'<div class="pair">{before}</div>'
    return f'<div class="pair acted">{before}{_after(run, step, after, screens)}</div>'


def _before(run: RunView, step: StepView, mark: Mark | None, thumbnail: Thumbnail | None) -> str:
    path = step.image
    shot = picture(path, screen_size=step.screen_size, thumbnail=thumbnail) if path is not None else None
    if path is None or shot is None:
        why = ("<figcaption>this run read the UI dump alone (perception.source: dump): the screen is in "
               "its screen text below</figcaption>" if run.sees_dump_alone else "")
        return f'<figure class="shot none"><div class="noimage">no screenshot</div>{why}</figure>'
    marks = target_marks(mark, shot.scale, (shot.width, shot.height)) if mark is not None else Marks()
    what = "annotated screenshot" if path.name in ANNOTATED else "screenshot"
    caption = what + ("; the magenta box is the target of the action" if marks.box is not None else
                      "; magenta: where the action touched" if mark is not None else "")
    box = ",".join(str(v) for v in marks.box) if marks.box is not None else ""
    image = (f'<img class="before" src="{shot.uri}" width="{shot.width}" height="{shot.height}" '
             f'alt="step {step.number}: {what}" data-highlight="{box}">')
    image = framed(image, (shot.width, shot.height), marks)
    return (f'<figure class="shot">{_linked(run, path, image)}<figcaption><b>Before</b>: {caption}'
            f"{_full_size(run, path)}</figcaption></figure>")


def _clean_picture(image: Image.Image) -> Picture:
    """The after figure made from the file: the clean copy a run keeps (``clean_copy``), as it is."""
    copy = clean_copy(image)
    return small_picture(copy, max(copy.size))


def _after(run: RunView, step: StepView, after: After, screens: Screens) -> str:
    if after.path is None:
        return (f'<figure class="shot after none" data-after=""><div class="noimage">no screen after</div>'
                f"<figcaption><b>After</b>: {m.text(after.note)}</figcaption></figure>")
    kept = run.thumbnail(after.path)
    image = screens.get(after.path, kept)
    if image is None:
        return (f'<figure class="shot after none" data-after=""><div class="noimage">unreadable</div>'
                f"<figcaption><b>After</b>: {m.text(after.path.name)} could not be read</figcaption></figure>")
    change = _change(run, screens, step.screenshot, (after.path, image))
    shot = kept_picture(after.path, kept, AFTER_SIDE) or _clean_picture(image)
    scale = shot.width / change.size[0] if change.size[0] else 1.0
    count = len(change.boxes)
    said = (m.text(change.note) if not change.compared else "nothing changed on the screen" if not count
            else f"the cyan box{'es mark' if count != 1 else ' marks'} what changed")
    tag = (f'<img class="after" src="{shot.uri}" width="{shot.width}" height="{shot.height}" '
           f'alt="step {step.number}: the screen after the action">')
    tag = framed(tag, (shot.width, shot.height), change_marks(change.boxes, scale, (shot.width, shot.height)))
    changes = str(count) if change.compared else ""
    return (f'<figure class="shot after" data-after="{m.text(_relative(run, after.path) or "")}" '
            f'data-changes="{changes}">{_linked(run, after.path, tag)}<figcaption><b>After</b> '
            f"({m.text(after.source)}): {said}{_full_size(run, after.path)}</figcaption></figure>")


def _change(run: RunView, screens: Screens, before: Path | None, after: tuple[Path, Image.Image]) -> Change:
    """What changed from ``before`` to ``after`` (a small copy and a decoded file are brought to the
    smaller one's size first; the boxes are in that size's pixels, ``Change.size``)."""
    path, image = after
    first = screens.get(before, run.thumbnail(before)) if before is not None else None
    if first is None or before is None:
        return Change(note="no raw screenshot before the action: not compared")
    pair = _alike(first, image)
    boxes = changed_boxes(*pair) if pair is not None else None
    if pair is None or boxes is None:
        (w0, h0), (w1, h1) = screens.size(before, first), screens.size(path, image)
        return Change(note=f"the screens differ in size ({w0}x{h0} before, {w1}x{h1} after: rotated?): "
                           "not compared")
    return Change(boxes=tuple(boxes), size=pair[0].size)


def _alike(first: Image.Image, second: Image.Image) -> tuple[Image.Image, Image.Image] | None:
    """The two at one size: the larger shrunk to the smaller when they have the same proportions
    (a kept small copy beside a decoded file); None when they do not (the phone rotated)."""
    if first.size == second.size:
        return first, second
    small, large = sorted((first, second), key=lambda i: i.width)
    across, down = large.width / small.width, large.height / small.height
    if abs(across - down) > 0.02 * across:
        return None
    shrunk = shrink(large, small.size)
    return (shrunk, small) if large is first else (small, shrunk)


def _relative(run: RunView, path: Path) -> str | None:
    try:
        return path.relative_to(run.run_dir).as_posix()
    except ValueError:
        return None


def _linked(run: RunView, path: Path, inner: str) -> str:
    href = _relative(run, path)
    return f'<a class="full" href="{m.text(href)}" title="open the full-size image">{inner}</a>' if href else inner


def _full_size(run: RunView, path: Path) -> str:
    href = _relative(run, path)
    return f' &middot; <a class="full-size" href="{m.text(href)}">full size</a>' if href else ""


def legend() -> str:
    """What each colour on the screenshots means."""
    items = [(HIGHLIGHT, "the action's target (box) or touch points (circles)"),
             (CHANGED, "what changed on the screen after the action")]
    items += [(color, f"a control of kind {kind.value} (its number is the index the model uses)")
              for kind, color in KIND_COLORS.items()]
    rows = "".join(f'<li><span class="swatch" style="border-color: rgb{color}"></span>{m.text(words)}</li>'
                   for color, words in items)
    return (f'<details id="legend" class="legend" open><summary>Colours on the screenshots</summary>'
            f"<ul>{rows}</ul><p class=\"muted\">Click a screenshot to open it at full size (a file of the run "
            "directory, next to this page).</p></details>")
