"""The fonts text is drawn in: the machine's own, found by family name, in fallback order.

Pillow's bundled font covers Latin only; a label in Cyrillic, Chinese or Arabic drawn with it is a
row of empty boxes. So the wireframes (``annotate``) and the HTML report (``report/webfonts``)
draw with the fonts installed on the machine, picked by family, first installed wins:

- Latin, Greek and Cyrillic: Noto Sans, else DejaVu Sans, Liberation Sans, Arial, Helvetica, ...
- symbols (arrows and the like; before CJK, whose are full width): Noto Sans Symbols and Symbols 2,
  Noto Sans Math;
- Chinese, Japanese and Korean: Noto Sans CJK SC, else Source Han Sans, WenQuanYi, Droid Sans
  Fallback, PingFang, Microsoft YaHei, ...;
- every other script: each installed ``Noto Sans <script>`` family;
- emoji: Noto Emoji (an outline font; colour bitmap emoji cannot be drawn at any size);
- last, fonts of wide coverage for whatever is left: DejaVu Sans, Segoe UI Symbol, Arial Unicode MS.

A character is drawn by the first face that has it. Where the fonts come from: the folders and
files in ``$UFO_MOBILE_FONTS`` (separated by ``os.pathsep``) when it is set, instead of the
system's; else fontconfig's list (``fc-list``: Linux, BSD); else the system's font folders
(macOS, Windows). On Debian and Ubuntu, ``apt-get install fonts-noto-core fonts-noto-cjk`` gives
every script. Without a font for some text, ``missing_note`` says so in one line; the text is then
drawn as boxes (Pillow's own font stands in when no face is found at all).

``faces_for`` says which faces a text needs (the HTML report embeds just those, subset);
``pillow_font`` loads one face for Pillow (cached), ``draw_text`` draws mixed-script text run by
run. Nothing is read at import; the list of faces is made once per process (``reset`` forgets it).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import ImageDraw, ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

_LOG = logging.getLogger(__name__)
FONTS_ENV = "UFO_MOBILE_FONTS"
_REGULAR = 400.0
_REGULAR_STYLES = ("regular", "book", "normal", "roman", "")
_FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")
_MAX_FONT_FILES = 20_000  # a folder scan stops here (a font folder is never that large)
_FC_LIST_SECONDS = 20.0

LATIN = ("Noto Sans", "DejaVu Sans", "Liberation Sans", "Arial", "Helvetica", "Helvetica Neue", "Segoe UI",
         "Roboto", "Open Sans", "FreeSans")
SYMBOLS = ("Noto Sans Symbols", "Noto Sans Symbols2", "Noto Sans Symbols 2", "Noto Sans Math")
CJK = ("Noto Sans CJK SC", "Source Han Sans SC", "Noto Sans SC", "Source Han Sans CN", "Noto Sans CJK JP",
       "Source Han Sans", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "PingFang SC",
       "Hiragino Sans GB", "Microsoft YaHei", "SimHei", "Arial Unicode MS")
EMOJI = ("Noto Emoji",)
LAST_RESORT = ("DejaVu Sans", "Segoe UI Symbol", "Arial Unicode MS")  # wide coverage, after the script fonts
_NOT_A_SCRIPT = ("CJK", "Mono", "Display", "Symbols", "Math", " UI", "Unjoined", "Looped")
INSTALL_HINT = ("install Noto fonts (Debian/Ubuntu: apt-get install fonts-noto-core fonts-noto-cjk) or set "
                f"{FONTS_ENV} to a folder of fonts")


@dataclass(frozen=True)
class FontFace:
    """One face of a font file: ``path`` and, for a collection (``.ttc``), the face ``index``.
    ``weight`` pins the weight axis of a variable font (Noto Sans CJK's default is its thinnest)."""

    family: str
    path: Path
    index: int = 0
    weight: float | None = _REGULAR


@dataclass(frozen=True)
class InstalledFont:
    """A face the machine has: its family and style names, file and index in the file."""

    family: str
    style: str
    path: Path
    index: int = 0


# --- what the machine has ---------------------------------------------------------------------------------


def installed_fonts() -> tuple[InstalledFont, ...]:
    """Every face found: ``$UFO_MOBILE_FONTS`` when set, else ``fc-list``, else the system's folders."""
    spec = os.environ.get(FONTS_ENV)
    if spec is not None:
        return tuple(scan_fonts(Path(part).expanduser() for part in spec.split(os.pathsep) if part.strip()))
    listed = _fc_list()
    if listed is not None:
        return listed
    return tuple(scan_fonts(_system_font_dirs()))


def _fc_list() -> tuple[InstalledFont, ...] | None:
    """fontconfig's list of faces; None without fontconfig (or when it fails)."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    try:
        done = subprocess.run([fc_list, "--format", "%{family[0]}\t%{style[0]}\t%{index}\t%{file}\n"],
                              capture_output=True, timeout=_FC_LIST_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        _LOG.warning("fc-list failed: %s", exc)
        return None
    if done.returncode != 0:
        return None
    fonts: list[InstalledFont] = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        family, style, index, path = (line.split("\t", 3) + ["", "", "", ""])[:4]
        if family and path and index.isdigit():
            fonts.append(InstalledFont(family.strip(), style.strip(), Path(path), int(index)))
    return tuple(fonts)


def _system_font_dirs() -> list[Path]:
    home = Path.home()
    if sys.platform == "darwin":
        return [Path("/System/Library/Fonts"), Path("/Library/Fonts"), home / "Library" / "Fonts"]
    if sys.platform == "win32":
        windir = Path(os.environ.get("WINDIR", r"C:\Windows"))
        local = Path(os.environ.get("LOCALAPPDATA", str(home)))
        return [windir / "Fonts", local / "Microsoft" / "Windows" / "Fonts"]
    data = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path(data) / "fonts", home / ".fonts"]


def scan_fonts(places: Iterable[Path]) -> Iterator[InstalledFont]:
    """The faces of the font files at ``places`` (files, or folders searched recursively), with their
    names read from the fonts themselves."""
    count = 0
    for place in places:
        files = [place] if place.is_file() else sorted(p for p in place.rglob("*") if p.suffix.lower()
                                                      in _FONT_SUFFIXES) if place.is_dir() else []
        for path in files:
            count += 1
            if count > _MAX_FONT_FILES:
                return
            yield from _faces_in(path)


def _faces_in(path: Path) -> Iterator[InstalledFont]:
    from fontTools.ttLib import TTCollection, TTFont

    try:
        with path.open("rb") as file:  # closed here, also when the file is no font at all
            if path.suffix.lower() in (".ttc", ".otc"):
                names = [_names(face) for face in TTCollection(file, lazy=True).fonts]
            else:
                names = [_names(TTFont(file, lazy=True))]
    except Exception as exc:  # a broken or foreign file among the fonts must not stop anything
        _LOG.info("not a font: %s (%s)", path, exc)
        return
    for index, (family, style) in enumerate(names):
        if family:
            yield InstalledFont(family, style, path, index)


def _names(font: object) -> tuple[str, str]:
    table = font["name"]  # type: ignore[index]
    family = table.getDebugName(16) or table.getDebugName(1) or ""
    style = table.getDebugName(17) or table.getDebugName(2) or ""
    return str(family), str(style)


# --- the faces text is drawn with ---------------------------------------------------------------------------


def _regular(fonts: Iterable[InstalledFont]) -> dict[str, InstalledFont]:
    """The regular face of each family (a family with no regular face is left out)."""
    found: dict[str, InstalledFont] = {}
    for font in fonts:
        if font.style.lower() in _REGULAR_STYLES and font.family not in found:
            found[font.family] = font
    return found


def _face(font: InstalledFont) -> FontFace:
    return FontFace(font.family, font.path, font.index)


@lru_cache(maxsize=1)
def font_faces() -> tuple[FontFace, ...]:
    """The faces text is drawn with, in fallback order (module docstring); empty when none is found."""
    regular = _regular(installed_fonts())
    chosen: list[str] = []

    def take(families: Iterable[str], *, first_only: bool) -> None:
        for family in families:
            if family in regular and family not in chosen:
                chosen.append(family)
                if first_only:
                    return

    take(LATIN, first_only=True)
    take(SYMBOLS, first_only=False)
    take(CJK, first_only=True)
    take(sorted(f for f in regular if f.startswith("Noto Sans ") and not any(w in f for w in _NOT_A_SCRIPT)),
         first_only=False)
    take(EMOJI, first_only=True)
    take(LAST_RESORT, first_only=False)
    return tuple(_face(regular[family]) for family in chosen)


def reset() -> None:
    """Forget the faces found and what they cover (after installing fonts, or changing ``$UFO_MOBILE_FONTS``)."""
    font_faces.cache_clear()
    coverage.cache_clear()
    _face_for_code.cache_clear()
    pillow_font.cache_clear()
    _noted.clear()


@lru_cache(maxsize=512)
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
    """The first face that has ``char``; None when none has it."""
    return _face_for_code(ord(char))


def _drawable(code: int) -> bool:
    """Not a control or a format character: no font draws those, and looking costs every cmap."""
    return not (code < 0x20 or 0x7F <= code < 0xA0) and unicodedata.category(chr(code)) not in ("Cc", "Cf", "Zl",
                                                                                                "Zp")


@lru_cache(maxsize=8192)
def _face_for_code(code: int) -> FontFace | None:
    if not _drawable(code):
        return None
    for face in font_faces():
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
    order = {face: i for i, face in enumerate(font_faces())}
    return [(face, "".join(sorted(chars))) for face, chars in sorted(drawn.items(), key=lambda kv: order[kv[0]])]


# --- saying what is missing ---------------------------------------------------------------------------------

_SCRIPT_GROUPS = {"CJK": "Chinese/Japanese/Korean", "HIRAGANA": "Chinese/Japanese/Korean",
                  "KATAKANA": "Chinese/Japanese/Korean", "HANGUL": "Chinese/Japanese/Korean",
                  "IDEOGRAPHIC": "Chinese/Japanese/Korean", "BOPOMOFO": "Chinese/Japanese/Korean",
                  "FULLWIDTH": "Chinese/Japanese/Korean", "HALFWIDTH": "Chinese/Japanese/Korean"}
_noted: set[str] = set()


def _script_of(char: str) -> str:
    """A name for the kind of writing ``char`` belongs to, for people: Latin, Cyrillic, Thai, ..."""
    code, category = ord(char), unicodedata.category(char)
    if code < 0x250:  # ASCII, Latin-1 and Latin Extended, their digits and punctuation included
        return "Latin"
    if category.startswith("S"):
        return "emoji and symbols"
    if category.startswith("P"):
        return "punctuation"
    name = unicodedata.name(char, "")
    first = name.split()[0] if name else "other"
    return _SCRIPT_GROUPS.get(first, first.capitalize())


def missing(text: str) -> dict[str, int]:
    """The scripts of ``text`` that no face draws, each with its number of distinct characters."""
    groups: dict[str, int] = {}
    for char in set(text):
        if char.isspace() or not _drawable(ord(char)) or unicodedata.category(char) in ("Co", "Cn", "Cs"):
            continue  # private use, unassigned: nothing is expected to draw them
        if face_for(char) is None:
            script = _script_of(char)
            groups[script] = groups.get(script, 0) + 1
    return dict(sorted(groups.items()))


def missing_note(text: str) -> str | None:
    """One line naming the scripts of ``text`` that no font on this machine draws, and how to get them;
    None when every character can be drawn."""
    groups = missing(text)
    if not groups:
        return None
    scripts = ", ".join(f"{script} ({count} character{'s' if count > 1 else ''})" for script, count in groups.items())
    return f"fonts: no font on this machine draws {scripts}: drawn as boxes; {INSTALL_HINT}"


def note_once(text: str) -> str | None:
    """``missing_note``, logged as a warning the first time each note comes up in this process."""
    note = missing_note(text)
    if note is not None and note not in _noted:
        _noted.add(note)
        _LOG.warning("%s", note)
    return note


# --- drawing with Pillow ------------------------------------------------------------------------------------


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
    """The font of numbers and Latin text: the first face (the Latin one) or Pillow's own."""
    faces = font_faces()
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
