"""``write_report``: a run directory -> ``report.html`` beside it, one self-contained file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ufo_mobile.report.load import load_run
from ufo_mobile.report.page import render_body, render_document
from ufo_mobile.report.webfonts import font_faces_css, page_text
from ufo_mobile.trace.files import write_atomic
from ufo_mobile.trace.writer import Thumbnail

REPORT_NAME = "report.html"


def render_report(run_dir: Path, *, thumbnails: Mapping[str, Thumbnail] | None = None) -> str:
    """The report of ``run_dir`` as HTML text (nothing written). ``thumbnails``: small copies of
    the run's images that the run kept (``RunWriter.thumbnails``), used while their files are
    unchanged instead of decoding them again; the page is the same either way."""
    run = load_run(run_dir)
    if thumbnails:
        run.thumbnails = thumbnails
    body = render_body(run)
    font_css, families = font_faces_css(page_text(body))
    return render_document(run, body, font_css, families)


def write_report(run_dir: Path, *, thumbnails: Mapping[str, Thumbnail] | None = None) -> Path:
    """Write ``run_dir/report.html`` (atomically) and return its path.

    Works on any run directory, also one cut off, interrupted or still running; files that are
    missing or torn are skipped and named in the page. Reads nothing outside ``run_dir`` but the
    packaged fonts.

    Raises:
        RunWriteError: the file cannot be written (a read-only or full disk).
    """
    path = run_dir / REPORT_NAME
    write_atomic(path, render_report(run_dir, thumbnails=thumbnails).encode("utf-8"))
    return path
