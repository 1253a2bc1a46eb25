"""How ``eval`` prints a table (its results, ``--compare``'s tasks): never a cell cut short.

At a terminal, a ``rich`` table as wide as the terminal: the columns keep their longest word whole
and only the longer cells wrap between words; a table that cannot fit so is printed in the plain
form instead. Elsewhere (a pipe, a CI log) the plain form: one line per row, each column as wide as
its longest cell, never wrapped or cut whatever the width (``COLUMNS``) says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

#: What rich's default table adds per column (a space each side and a rule), and the last rule.
PER_COLUMN, EDGE = 3, 1


@dataclass
class Grid:
    """A table's cells, all text (already printable): a header row, the rows, an optional footer."""

    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    footer: list[str] | None = None
    right: frozenset[int] = frozenset()  # the columns aligned to the right (numbers)
    plain_only: int = 0  # how many of the last columns only the plain form shows (too wide for a table)

    def lines(self) -> list[list[str]]:
        """Every row of cells in order: the header, the rows, then the footer if any."""
        return [self.columns, *self.rows, *([self.footer] if self.footer is not None else [])]


def _padded(text: str, width: int, right: bool) -> str:
    gap = " " * (width - cell_len(text))
    return gap + text if right else text + gap


def plain_lines(grid: Grid) -> list[str]:
    """The plain form: the header, a rule, the rows (and a rule and the footer), columns two spaces apart."""
    widths = [max(cell_len(row[i]) for row in grid.lines()) for i in range(len(grid.columns))]

    def line(cells: list[str]) -> str:
        padded = (_padded(c, w, i in grid.right) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    rule = line(["-" * w for w in widths])
    body = [line(grid.columns), rule, *(line(row) for row in grid.rows)]
    if grid.footer is not None:
        body += [rule, line(grid.footer)]
    return body


def column_widths(grid: Grid, width: int) -> list[int] | None:
    """Each shown column's width in a table ``width`` wide, none narrower than its longest word;
    None when that cannot be (the table would have to cut or split a word)."""
    shown = len(grid.columns) - grid.plain_only
    lines = [row[:shown] for row in grid.lines()]
    longest = [max(cell_len(row[i]) for row in lines) for i in range(shown)]
    word = [max(max((cell_len(w) for w in row[i].split()), default=1) for row in lines) for i in range(shown)]
    room = width - PER_COLUMN * shown - EDGE
    if sum(word) > room:
        return None
    widths = longest[:]
    for _ in range(sum(widths) - room):  # narrow the column with the most to spare, one at a time
        i = max(range(shown), key=lambda j: widths[j] - word[j])
        widths[i] -= 1
    return widths


def fitted_table(grid: Grid, width: int, title: str | None = None) -> Table | None:
    """The rich table for a terminal ``width`` wide, or None when it cannot fit without cutting a cell."""
    widths = column_widths(grid, width)
    if widths is None:
        return None
    footer = grid.footer
    table = Table(title=title, title_justify="left", show_footer=footer is not None)
    for i, (name, w) in enumerate(zip(grid.columns[:len(widths)], widths, strict=True)):
        table.add_column(Text(name), footer=Text(footer[i]) if footer is not None else "", width=w,
                         justify="right" if i in grid.right else "left", overflow="fold")
    for row in grid.rows:
        table.add_row(*(Text(cell) for cell in row[:len(widths)]))
    return table


def show(console: Console, grid: Grid, title: str | None = None) -> None:
    """``grid`` on ``console``: the fitted table at a terminal, else (or when it cannot fit) the plain lines."""
    table = fitted_table(grid, console.width, title) if console.is_terminal else None
    if table is not None:
        console.print(table)
        return
    lines = ([title] if title else []) + plain_lines(grid)
    console.print(Text("\n".join(lines)), soft_wrap=True)
