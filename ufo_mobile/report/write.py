"""``write_report``: a run directory -> ``report.html`` beside it, one self-contained file."""

from __future__ import annotations

from pathlib import Path

from ufo_mobile.report.load import load_run
from ufo_mobile.report.page import render_body, render_document
from ufo_mobile.report.webfonts import font_faces_css, page_text
from ufo_mobile.trace.files import write_atomic

REPORT_NAME = "report.html"


def render_report(run_dir: Path) -> str:
    """The report of ``run_dir`` as HTML text (nothing written)."""
    run = load_run(run_dir)
    body = render_body(run)
    font_css, families = font_faces_css(page_text(body))
    return render_document(run, body, font_css, families)


def write_report(run_dir: Path) -> Path:
    """Write ``run_dir/report.html`` (atomically) and return its path.

    Works on any run directory, also one cut off, interrupted or still running; files that are
    missing or torn are skipped and named in the page. Reads nothing outside ``run_dir`` but the
    packaged fonts.

    Raises:
        RunWriteError: the file cannot be written (a read-only or full disk).
    """
    path = run_dir / REPORT_NAME
    write_atomic(path, render_report(run_dir).encode("utf-8"))
    return path
