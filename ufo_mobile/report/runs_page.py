"""A page over many runs: an evaluation's ``eval.html``, a batch's ``batch.html``, two evaluations
compared. One shape for all of them: the score first, then the facts (what ran, on what, with which
model), then the table of runs with the failures first, each row linking its run's ``report.html``.

The page is one self-contained file: its CSS is inline, it has no script and loads nothing (its
Content-Security-Policy says so), and its links are relative paths to files that exist when it is
written (a run without a report names its directory instead), so the folder can be moved or copied
as a whole. Every text from a run (a reason, an answer, a task's name) goes through
``report.markup`` (made printable, then escaped). The callers (``ufo_mobile/eval/page.py``,
``ufo_mobile/fleet/results.py``) build a ``RunsPage``; ``render`` makes the HTML, ``write`` the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ufo_mobile.core.trace.files import write_atomic
from ufo_mobile.report import markup as m

#: The row tones, in the order rows are shown: what failed, then what neither passed nor failed
#: (interrupted, not run), then what passed.
FAIL, OTHER, OK = "fail", "other", "ok"
_RANK = {FAIL: 0, OTHER: 1, OK: 2}


@dataclass
class Row:
    """One row: its ``cells`` are HTML already (built with ``markup`` or the helpers here); ``tone``
    colours it and places it (failures first); ``rank`` overrides the place (lower first)."""

    tone: str
    cells: list[str]
    key: str = ""  # the row's task or run, as a data attribute for scripts and tests
    rank: int | None = None

    @property
    def order(self) -> int:
        return self.rank if self.rank is not None else _RANK.get(self.tone, 1)


@dataclass
class Section:
    """A table under a heading; rows are shown in ``Row.order`` (stable within a place)."""

    title: str
    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    note: str = ""  # one line of plain text under the heading
    empty: str = "nothing to show"


@dataclass
class RunsPage:
    """What a page says, as plain text (``facts``) and sections of rows."""

    title: str
    headline: str  # the score, in one line: "4/5 runs passed (80.0%)"
    tone: str  # the headline's colour
    facts: list[tuple[str, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    footer: str = ""


def badge(word: str, tone: str) -> str:
    """A coloured word (``pass``, ``FAIL``, ``interrupted``)."""
    return f'<span class="badge {tone if tone in _RANK else OTHER}">{m.text(word, 40)}</span>'


def dot(tone: str) -> str:
    """A small coloured dot (beside a link to one run)."""
    return f'<span class="dot {tone if tone in _RANK else OTHER}"></span>'


def nowrap(html: str) -> str:
    """A cell's HTML kept on one line (a number, a time, a link)."""
    return f'<span class="nowrap">{html}</span>'


def href(target: Path, page_dir: Path) -> str | None:
    """The relative, URL-quoted link from a page in ``page_dir`` to ``target``; None when the file
    does not exist (a page links only what is there)."""
    if not target.is_file():
        return None
    relative = os.path.relpath(target.resolve(), page_dir.resolve())
    return quote(Path(relative).as_posix())


def link(target: Path, page_dir: Path, label: str, missing: str) -> str:
    """``label`` linking ``target`` (relative to ``page_dir``), or ``missing`` greyed when it is not there."""
    url = href(target, page_dir)
    if url is None:
        return f'<span class="muted">{m.text(missing, 200)}</span>'
    return f'<a href="{m.text(url, 4000)}">{m.text(label, 200)}</a>'


def ordered(rows: list[Row]) -> list[Row]:
    """Failures first, then the rest, each group in its given order."""
    return sorted(rows, key=lambda row: row.order)


def _section(section: Section) -> str:
    head = "".join(f"<th>{m.text(c, 80)}</th>" for c in section.columns)
    body = "".join(f'<tr class="{row.tone}" data-tone="{m.text(row.tone, 20)}" data-key="{m.text(row.key, 200)}">'
                   + "".join(f"<td>{cell}</td>" for cell in row.cells) + "</tr>"
                   for row in ordered(section.rows))
    if not section.rows:
        body = f'<tr><td colspan="{len(section.columns)}" class="muted">{m.text(section.empty)}</td></tr>'
    note = f'<p class="muted">{m.text(section.note)}</p>' if section.note else ""
    return (f"<h2>{m.text(section.title, 200)}</h2>{note}"
            f'<table class="runs"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def render(page: RunsPage) -> str:
    """The whole page, as HTML text."""
    facts = m.rows([(m.text(name, 200), m.text(value)) for name, value in page.facts])
    footer = f"<footer>{m.text(page.footer)}</footer>" if page.footer else ""
    body = (f"<header><h1>{m.text(page.title, 300)}</h1>"
            f'<p id="score" class="score {page.tone}">{m.text(page.headline, 400)}</p></header>'
            f"{facts}{''.join(_section(s) for s in page.sections)}{footer}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{m.text(page.title, 300)}</title><style>{CSS}</style></head>"
            f"<body><main>\n{body}\n</main></body></html>\n")


def write(path: Path, page: RunsPage) -> Path:
    """Write the page at ``path`` (atomically). Raises ``RunWriteError`` when it cannot be written."""
    write_atomic(path, render(page).encode("utf-8"))
    return path


CSS = """
:root { --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --panel: #f6f8fa; --ok: #1a7f37; --fail: #cf222e;
  --other: #9a6700; --go: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font-family: system-ui, sans-serif; color: var(--ink); font-size: 15px; line-height: 1.45; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 22px; margin: 0 0 6px; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 26px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.score { font-size: 18px; font-weight: 600; margin: 4px 0 14px; }
.score.ok { color: var(--ok); } .score.fail { color: var(--fail); } .score.other { color: var(--other); }
table { border-collapse: collapse; }
table.facts th { text-align: left; vertical-align: top; padding: 3px 14px 3px 0; color: var(--muted);
  font-weight: 600; white-space: nowrap; }
table.facts td { padding: 3px 0; vertical-align: top; overflow-wrap: anywhere; }
table.runs { width: 100%; font-size: 14px; }
table.runs th { text-align: left; color: var(--muted); font-weight: 600; padding: 4px 10px 4px 0;
  border-bottom: 2px solid var(--line); white-space: nowrap; }
table.runs td { padding: 5px 10px 5px 0; border-bottom: 1px solid var(--panel); vertical-align: top;
  overflow-wrap: anywhere; }
table.runs tr.fail td:first-child { box-shadow: inset 3px 0 0 var(--fail); padding-left: 8px; }
table.runs tr.other td:first-child { box-shadow: inset 3px 0 0 var(--other); padding-left: 8px; }
table.runs tr.ok td:first-child { padding-left: 8px; }
table.runs td:first-child { min-width: 13em; }
.nowrap { white-space: nowrap; }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; background: var(--other); }
.dot.ok { background: var(--ok); } .dot.fail { background: var(--fail); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  color: #fff; background: var(--other); white-space: nowrap; }
.badge.ok { background: var(--ok); } .badge.fail { background: var(--fail); }
.muted { color: var(--muted); }
.small { font-size: 12px; }
a { color: var(--go); }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
"""
