"""The report's fonts: the packaged Noto faces (``ui/fonts.py``) the page's text needs, each cut
down to the characters the page uses and embedded as an ``@font-face`` data URI, so text in any
script (Latin, Cyrillic, CJK, Arabic, emoji) draws the same on any machine, with no network.

WOFF2 when ``brotli`` is there, WOFF otherwise. Variable faces are pinned to their regular weight
(bold text is synthesised by the browser); Noto Sans CJK stays CFF2 outlines, which browsers read.
"""

from __future__ import annotations

import base64
import io
import logging
from html.parser import HTMLParser

from ufo_mobile.ui.fonts import FontFace, faces_for

_LOG = logging.getLogger(__name__)
FAMILY_PREFIX = "report-font-"


class _Text(HTMLParser):
    """The text a page shows (character references resolved; style and script left out)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def page_text(markup: str) -> str:
    """Every character of text ``markup`` shows, each once."""
    parser = _Text()
    parser.feed(markup)
    parser.close()
    return "".join(sorted(set("".join(parser.parts))))


def _flavor() -> str:
    try:
        import brotli  # noqa: F401  (fontTools needs it for WOFF2)
    except ImportError:
        return "woff"
    return "woff2"


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


def font_faces_css(text: str) -> tuple[str, list[str]]:
    """``@font-face`` rules for the faces ``text`` needs, and their family names in fallback order
    (for ``font-family``). A face that cannot be subset is left out (the browser falls back)."""
    flavor = _flavor()
    rules: list[str] = []
    families: list[str] = []
    for face, chars in faces_for(text):
        try:
            data = subset_face(face, chars, flavor)
        except Exception as exc:  # a font problem must not cost the whole report
            _LOG.warning("cannot embed %s: %s", face.family, exc)
            continue
        family = f"{FAMILY_PREFIX}{len(families)}"
        uri = f"data:font/{flavor};base64,{base64.b64encode(data).decode('ascii')}"
        rules.append(f'@font-face{{font-family:"{family}";src:url({uri}) format("{flavor}");'
                     "font-style:normal;font-display:block}")
        families.append(f'"{family}"')
    return "\n".join(rules), families
