"""The report's fonts: the machine's faces (``ui/fonts.py``) the page's text needs, each cut down to
the characters the page uses and embedded as an ``@font-face`` data URI, so text in any script
(Latin, Cyrillic, CJK, Arabic, emoji) draws the same on any machine, with no network. A face whose
licence forbids embedding (OpenType ``fsType``: restricted, or bitmap only) is left out: the viewer's
own fonts draw those characters.

WOFF2 when ``brotli`` is there, WOFF otherwise. Variable faces are pinned to their regular weight
(bold text is synthesised by the browser); Noto Sans CJK stays CFF2 outlines, which browsers read.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import logging
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

from ufo_mobile.core.ui.fonts import FontFace, faces_for

_LOG = logging.getLogger(__name__)
FAMILY_PREFIX = "report-font-"


# The page is our own markup: every attribute value is escaped (no ``>`` inside a tag), so the text
# is what is left without the style and script elements and the tags, references resolved. A
# regular expression does this in C; an HTML parser would walk the megabytes of image data too.
_HIDDEN = re.compile(r"<(style|script)\b.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")


def page_text(markup: str) -> str:
    """Every character of text ``markup`` (our own page) shows, each once."""
    return "".join(sorted(set(html.unescape(_TAG.sub("", _HIDDEN.sub("", markup))))))


def _flavor() -> str:
    try:
        import brotli  # noqa: F401  (fontTools needs it for WOFF2)
    except ImportError:
        return "woff"
    return "woff2"


_RESTRICTED, _BITMAP_ONLY = 0x0002, 0x0200  # OpenType OS/2 fsType bits


@lru_cache(maxsize=256)
def embeddable(face: FontFace) -> bool:
    """Whether ``face``'s licence lets a document embed it (OS/2 ``fsType``; no OS/2 table: yes)."""
    from fontTools.ttLib import TTFont

    try:
        with TTFont(str(face.path), fontNumber=face.index, lazy=True) as font:
            fs_type = int(font["OS/2"].fsType) if "OS/2" in font else 0
    except Exception as exc:  # a font problem must not cost the whole report
        _LOG.warning("cannot read %s: %s", face.path, exc)
        return False
    return not fs_type & (_RESTRICTED | _BITMAP_ONLY)


def subset_face(face: FontFace, chars: str, flavor: str | None = None) -> bytes:
    """``face`` with only the glyphs ``chars`` need (their shaping forms included), as a web font."""
    from fontTools import subset
    from fontTools.ttLib import TTFont
    from fontTools.varLib import instancer

    options = subset.Options()
    options.flavor = None
    options.ignore_missing_glyphs = True
    options.ignore_missing_unicodes = True
    with TTFont(str(face.path), fontNumber=face.index, lazy=True) as font:
        subsetter = subset.Subsetter(options)
        subsetter.populate(text=chars)
        subsetter.subset(font)
        if "fvar" in font and face.weight is not None:
            axes = {a.axisTag: a for a in font["fvar"].axes}
            pins = {tag: (face.weight if tag == "wght" else a.defaultValue) for tag, a in axes.items()}
            if "wght" in pins:
                pins["wght"] = min(max(pins["wght"], axes["wght"].minValue), axes["wght"].maxValue)
            instancer.instantiateVariableFont(font, pins, inplace=True)  # CJK stays CFF2, static
        font.flavor = flavor or _flavor()
        out = io.BytesIO()
        font.save(out)
    return out.getvalue()


# The characters most pages need from the Latin face: a page whose text is all within them gets the
# same subset every time, made once per machine and kept on disk, instead of a new one per page.
_COMMON_RANGES = ((0x20, 0x7E), (0xA0, 0x17F), (0x391, 0x3C9), (0x400, 0x45F), (0x2010, 0x2027), (0x2030, 0x2044),
                  (0x2190, 0x2199), (0x2022, 0x2022), (0x2713, 0x2717))
COMMON = "".join(chr(c) for a, b in _COMMON_RANGES for c in range(a, b + 1))
_MEMORY: dict[str, bytes] = {}


def cache_dir() -> Path:
    """Where made subsets are kept: ``$XDG_CACHE_HOME/ufo_mobile/fonts`` (``~/.cache`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ufo_mobile" / "fonts"


def cached_subset(face: FontFace, chars: str, flavor: str) -> bytes:
    """``subset_face``, remembered in memory and on disk by face, characters and format; a page
    whose characters are all in ``COMMON`` asks for the ``COMMON`` subset, so it is made once."""
    if set(chars) <= set(COMMON):
        chars = COMMON
    from fontTools import version as fonttools_version

    key = hashlib.sha256(f"{face.path.name}|{face.index}|{face.weight}|{flavor}|{fonttools_version}|{chars}"
                         .encode()).hexdigest()[:32]
    if key in _MEMORY:
        return _MEMORY[key]
    path = cache_dir() / f"{key}.{flavor}"
    try:
        data = path.read_bytes()
    except OSError:
        data = subset_face(face, chars, flavor)
        _store(path, data)
    _MEMORY[key] = data
    return data


def _store(path: Path, data: bytes) -> None:
    """Keep a subset for next time (atomically; a cache that cannot be written is no error)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".font-")
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        _LOG.info("font cache not written: %s", exc)


def font_faces_css(text: str) -> tuple[str, list[str]]:
    """``@font-face`` rules for the faces ``text`` needs, and their family names in fallback order
    (for ``font-family``). A face that cannot be subset is left out (the browser falls back)."""
    flavor = _flavor()
    rules: list[str] = []
    families: list[str] = []
    for face, chars in faces_for(text):
        if not embeddable(face):
            continue
        try:
            data = cached_subset(face, chars, flavor)
        except Exception as exc:  # a font problem must not cost the whole report
            _LOG.warning("cannot embed %s: %s", face.family, exc)
            continue
        family = f"{FAMILY_PREFIX}{len(families)}"
        uri = f"data:font/{flavor};base64,{base64.b64encode(data).decode('ascii')}"
        rules.append(f'@font-face{{font-family:"{family}";src:url({uri}) format("{flavor}");'
                     "font-style:normal;font-display:block}")
        families.append(f'"{family}"')
    return "\n".join(rules), families
