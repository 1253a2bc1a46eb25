"""The fonts text is drawn in: Noto, shipped by pip packages, so every machine draws the same.

Pillow's bundled font covers Latin only; a label in Cyrillic, Chinese or Arabic drawn with it is a
row of empty boxes. The faces here come from the ``manimgx-fonts`` and ``manimgx-fonts-cjk``
packages (Noto Sans and its script companions, Noto Sans Symbols, Noto Sans CJK, Noto Emoji, as
Noto publishes them, SIL OFL), in fallback order: a character is drawn by the first face that has
it. ``faces_for`` says which faces a text needs (the HTML report embeds just those, subset);
``pillow_font`` loads one face for Pillow (cached), ``draw_text`` draws mixed-script text run by
run. Nothing is read at import; without the packages everything falls back to Pillow's font.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from PIL import ImageDraw, ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

_LOG = logging.getLogger(__name__)
_LATIN_PACKAGE, _CJK_PACKAGE = "manimgx_fonts", "manimgx_fonts_cjk"
_CJK_FILE, _CJK_FAMILY = "NotoSansCJK-VF.otf.ttc", "Noto Sans CJK SC"
_REGULAR = 400.0


@dataclass(frozen=True)
class FontFace:
    """One face of a font file: ``path`` and, for a collection (``.ttc``), the face ``index``.
    ``weight`` pins the weight axis of a variable font (Noto Sans CJK's default is its thinnest)."""

    family: str
    path: Path
    index: int = 0
    weight: float | None = _REGULAR


def _package_dir(package: str) -> Path | None:
    try:
        return Path(str(resources.files(package)))
    except ModuleNotFoundError:
        return None


def _family_of(path: Path) -> str:
    """``NotoSansArabic[wght].ttf`` -> ``Noto Sans Arabic``."""
    stem = path.name.split("[")[0].removesuffix(".ttf")
    words = stem.replace("NotoSans", "Noto Sans ").replace("NotoEmoji", "Noto Emoji").split()
    return " ".join(words)


def _cjk_index(path: Path) -> int:
    """The Simplified Chinese face of the Noto Sans CJK collection (any face covers the same
    characters; they differ in the regional shapes of some Han characters)."""
    from fontTools.ttLib import TTCollection

    try:
        with TTCollection(str(path), lazy=True) as collection:
            names = [face["name"].getDebugName(1) for face in collection.fonts]
    except Exception as exc:  # a broken install must not stop a report or a wireframe
        _LOG.warning("cannot read %s: %s", path, exc)
        return 0
    return names.index(_CJK_FAMILY) if _CJK_FAMILY in names else 0


@lru_cache(maxsize=1)
def packaged_faces() -> tuple[FontFace, ...]:
    """Every packaged face in fallback order: Noto Sans (Latin, Greek, Cyrillic), the other
    scripts' Noto Sans, Noto Sans Symbols (arrows and the like: before CJK, whose are full width),
    Noto Sans CJK, Noto Emoji. Empty without the packages."""
    faces: list[FontFace] = []
    latin = _package_dir(_LATIN_PACKAGE)
    if latin is not None:
        files = sorted(latin.glob("Noto*.ttf"))
        head = [p for p in files if p.name.startswith("NotoSans[")]
        scripts = [p for p in files if p.name.startswith("NotoSans") and "[" in p.name
                   and p not in head and "Italic" not in p.name and "Symbols" not in p.name]
        faces += [FontFace(_family_of(p), p) for p in head + scripts]
        faces += [FontFace(_family_of(p), p) for p in sorted(latin.glob("NotoSansSymbols*.ttf"))]
    cjk = _package_dir(_CJK_PACKAGE)
    if cjk is not None and (cjk / _CJK_FILE).is_file():
        faces.append(FontFace(_CJK_FAMILY, cjk / _CJK_FILE, _cjk_index(cjk / _CJK_FILE)))
    if latin is not None:
        faces += [FontFace(_family_of(p), p) for p in sorted(latin.glob("NotoEmoji*.ttf"))]
    return tuple(faces)


@lru_cache(maxsize=64)
def coverage(face: FontFace) -> frozenset[int]:
    """The code points ``face`` has a glyph for (read once per process)."""
    from fontTools.ttLib import TTFont

    try:
        with TTFont(str(face.path), fontNumber=face.index, lazy=True) as font:
            return frozenset(font.getBestCmap() or ())
    except Exception as exc:  # a broken install must not stop a report or a wireframe
        _LOG.warning("cannot read %s: %s", face.path, exc)
        return frozenset()


def face_for(char: str) -> FontFace | None:
    """The first packaged face that has ``char``; None when none has it."""
    return _face_for_code(ord(char))


@lru_cache(maxsize=8192)
def _face_for_code(code: int) -> FontFace | None:
    if code < 0x20 or 0x7F <= code < 0xA0:
        return None  # control characters: no font draws them (and looking costs every cmap)
    for face in packaged_faces():
        if code in coverage(face):
            return face
    return None


def faces_for(text: str) -> list[tuple[FontFace, str]]:
    """The faces that draw ``text``, each with the characters it draws (sorted, no repeats), in
    fallback order. Characters no face has (controls, unassigned) are left out."""
    drawn: dict[FontFace, set[str]] = {}
    for char in set(text):
        face = face_for(char)
        if face is not None:
            drawn.setdefault(face, set()).add(char)
    order = {face: i for i, face in enumerate(packaged_faces())}
    return [(face, "".join(sorted(chars))) for face, chars in sorted(drawn.items(), key=lambda kv: order[kv[0]])]


def font_runs(text: str) -> Iterator[tuple[FontFace | None, str]]:
    """``text`` cut into runs drawn by one face each; a character no face has stays in its run."""
    current: FontFace | None = None
    run = ""
    for char in text:
        face = face_for(char)
        if run and face is not None and face != current:
            yield current, run
            run = ""
        if face is not None:
            current = face
        run += char
    if run:
        yield current, run


@lru_cache(maxsize=128)
def pillow_font(face: FontFace | None, size: int, *, simple: bool = False) -> Font:
    """``face`` loaded at ``size`` pixels for Pillow (cached: loading is the slow part); Pillow's
    own font for None or a face that cannot be loaded. ``simple`` text (ASCII: numbers, Latin
    labels) is laid out without the shaping engine, which only slows it down (twice as fast)."""
    if face is not None:
        layout = ImageFont.Layout.BASIC if simple else None
        try:
            font = ImageFont.truetype(str(face.path), size, index=face.index, layout_engine=layout)
        except OSError as exc:
            _LOG.warning("cannot load %s: %s", face.path, exc)
        else:
            if face.weight is not None:
                _set_weight(font, face.weight)
            return font
    return ImageFont.load_default(size=size)


def _set_weight(font: ImageFont.FreeTypeFont, weight: float) -> None:
    try:
        axes = font.get_variation_axes()
    except OSError:
        return  # not a variable font
    values = [min(max(weight, float(a.get("minimum") or 0)), float(a.get("maximum") or weight))
              if a.get("name") == b"Weight" else float(a.get("default") or 0) for a in axes]
    font.set_variation_by_axes(values)


def label_font(size: int) -> Font:
    """The font of numbers and Latin text: the first packaged face (Noto Sans) or Pillow's own."""
    faces = packaged_faces()
    return pillow_font(faces[0] if faces else None, size, simple=True)


def text_width(draw: ImageDraw.ImageDraw, text: str, size: int) -> float:
    """How wide ``draw_text`` draws ``text`` at ``size`` pixels."""
    return sum(draw.textlength(run, font=pillow_font(face, size, simple=run.isascii()))
               for face, run in font_runs(text))


def draw_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int,
              fill: tuple[int, int, int]) -> float:
    """Draw ``text`` left-aligned, vertically centred on ``xy``, each run in the face that has its
    characters; returns the width drawn."""
    x, y = xy
    for face, run in font_runs(text):
        font = pillow_font(face, size, simple=run.isascii())
        draw.text((x, y), run, fill=fill, font=font, anchor="lm")
        x += draw.textlength(run, font=font)
    return x - xy[0]
