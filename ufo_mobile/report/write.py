"""``write_report``: a run directory -> ``report.html`` beside it, one self-contained file."""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

from ufo_mobile.core.trace.files import write_atomic
from ufo_mobile.core.trace.writer import Thumbnail
from ufo_mobile.core.ui.fonts import missing_note
from ufo_mobile.report.load import load_run
from ufo_mobile.report.page import render_body, render_document
from ufo_mobile.report.webfonts import font_faces_css, page_text

REPORT_NAME = "report.html"


def render_report(run_dir: Path, *, thumbnails: Mapping[str, Thumbnail] | None = None,
                  notes: list[str] | None = None) -> str:
    """The report of ``run_dir`` as HTML text (nothing written). ``thumbnails``: small copies of
    the run's images that the run kept (``RunWriter.thumbnails``: the annotated screenshots' and
    the clean screenshots'), used while their files are unchanged instead of decoding them again;
    the page shows the same figures either way (their JPEG bytes differ a little). When no font on
    this machine draws some of the page's text, the page ends with a line that says so, and the
    line is added to ``notes`` (when given)."""
    run = load_run(run_dir)
    if thumbnails:
        run.thumbnails = thumbnails
    body = render_body(run)
    text = page_text(body)
    note = missing_note(text)
    if note is not None:
        body += f'\n<footer><p id="fonts-note" class="warn">{html.escape(note)}</p></footer>'
        if notes is not None:
            notes.append(note)
    font_css, families = font_faces_css(text)
    return render_document(run, body, font_css, families)


def write_report(run_dir: Path, *, thumbnails: Mapping[str, Thumbnail] | None = None,
                 notes: list[str] | None = None) -> Path:
    """Write ``run_dir/report.html`` (atomically) and return its path; ``notes`` as for
    ``render_report``.

    Works on any run directory, also one cut off, interrupted or still running; files that are
    missing or torn are skipped and named in the page. Reads nothing outside ``run_dir`` but the
    machine's fonts.

    Raises:
        RunWriteError: the file cannot be written (a read-only or full disk).
    """
    path = run_dir / REPORT_NAME
    write_atomic(path, render_report(run_dir, thumbnails=thumbnails, notes=notes).encode("utf-8"))
    return path
