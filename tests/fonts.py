"""Fonts for tests: tiny fonts made here with fontTools (a family name, the characters they draw, each
as the same box), and the check that the machine has the Noto fonts the drawing tests need."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from ufo_mobile.core.ui import fonts

NOTO_MISSING = ("Noto Sans and Noto Sans CJK are not installed on this machine (Debian/Ubuntu: apt-get install "
                "fonts-noto-core fonts-noto-cjk; .ci/run installs them)")


def require_noto() -> None:
    """Skip the calling test, with the reason, unless the machine draws Latin, Cyrillic, Arabic and CJK with
    Noto (the fonts the drawing tests expect)."""
    families = {face.family for face in fonts.font_faces()}
    if not {"Noto Sans", "Noto Sans CJK SC", "Noto Sans Arabic"} <= families:
        pytest.skip(NOTO_MISSING)


def _box() -> Any:
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    pen = TTGlyphPen(None)
    for points in ([(80, 0), (80, 760), (520, 760), (520, 0)], [(140, 60), (460, 60), (460, 700), (140, 700)]):
        pen.moveTo(points[0])
        for point in points[1:]:
            pen.lineTo(point)
        pen.closePath()
    return pen.glyph()


def build_font(family: str, chars: str, *, style: str = "Regular", fs_type: int = 0) -> bytes:
    """A TrueType font named ``family``/``style`` with every character of ``chars`` drawn as the same
    hollow box; ``fs_type``: its OS/2 embedding bits (0: installable)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder([".notdef", "space", "box"])
    builder.setupCharacterMap({32: "space", **{ord(c): "box" for c in set(chars) if not c.isspace()}})
    builder.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "space": TTGlyphPen(None).glyph(), "box": _box()})
    builder.setupHorizontalMetrics({".notdef": (600, 0), "space": (300, 0), "box": (600, 80)})
    builder.setupHorizontalHeader(ascent=880, descent=-120)
    builder.setupNameTable({"familyName": family, "styleName": style})
    builder.setupOS2(sTypoAscender=880, sTypoDescender=-120, usWinAscent=880, usWinDescent=120, fsType=fs_type)
    builder.setupPost()
    out = io.BytesIO()
    builder.save(out)
    return out.getvalue()


def write_font(folder: Path, family: str, chars: str, **options: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{family.replace(' ', '')}-{options.get('style', 'Regular')}.ttf"
    path.write_bytes(build_font(family, chars, **options))
    return path
