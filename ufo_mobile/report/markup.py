"""HTML pieces for the report. Every text from the run directory (the model's words, the screen's
labels, file contents) goes through ``text`` or ``block``: made printable first (control and bidi
characters shown escaped, long text cut), then HTML-escaped, quotes included."""

from __future__ import annotations

import html
import json
from typing import Any

from ufo_mobile.safe_text import printable, printable_block

LINE_LIMIT = 2_000  # characters of one line of text shown (a reason, a summary)
BLOCK_LIMIT = 101_000  # characters of a block shown (a reply file is cut at 100_000 when read, with a note)


def text(value: Any, limit: int = LINE_LIMIT) -> str:
    """One line of untrusted text, safe inside an element or a quoted attribute."""
    return html.escape(printable(str(value), limit), quote=True)


def block(value: Any, limit: int = BLOCK_LIMIT) -> str:
    """Multi-line untrusted text (line breaks and tabs kept) for a ``<pre>``."""
    return html.escape(printable_block(str(value), limit), quote=True)


def pre(value: Any, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<pre{attr}>{block(value)}</pre>"


def pretty_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def details(summary: str, body: str, *, cls: str = "", open_: bool = False) -> str:
    """A collapsed section; ``summary`` and ``body`` are HTML already."""
    attrs = (f' class="{cls}"' if cls else "") + (" open" if open_ else "")
    return f"<details{attrs}><summary>{summary}</summary>{body}</details>"


def rows(pairs: list[tuple[str, str]], cls: str = "facts") -> str:
    """A two-column table; names and values are HTML already."""
    body = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in pairs)
    return f'<table class="{cls}">{body}</table>'


def seconds(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "?"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def count(value: Any) -> str:
    return str(int(value)) if isinstance(value, int | float) and not isinstance(value, bool) else "?"


def cost(value: Any) -> str:
    """Dollars, or "unknown" when the model had no price (a null cost)."""
    if value is None:
        return "unknown (no price for this model)"
    return f"${float(value):.4f}" if isinstance(value, int | float) else "?"


def status_class(status: str) -> str:
    """A CSS class for a status word (only known words; anything else is ``other``)."""
    known = {"FINISH": "ok", "FAIL": "fail", "RUNNING": "running", "CONTINUE": "go", "ASSIGN": "go"}
    return known.get(status, "other")
