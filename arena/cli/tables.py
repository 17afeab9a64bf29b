"""How the ``arena`` subcommands draw tables: nothing a user must type is ever cut."""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text


def uncut(table: Table, *keep: str) -> Table:
    """Cut nothing with an ellipsis. The columns named in ``keep`` (what a user copies: bot
    names, game ids, parameter names) hold each cell on one line; the others give way, wrapping
    between words and splitting a word only when the screen leaves no other way."""
    table.box, table.show_edge, table.pad_edge = box.SIMPLE_HEAD, False, False
    for column in table.columns:
        column.overflow = "fold"
        if column.header in keep:
            lines = [line for cell in column.cells for line in _plain(cell).splitlines()]
            column.min_width = max((cell_len(line) for line in lines), default=0)
            column.no_wrap = True
    return table


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else ""


def fitted(console: Console, table: Table, *optional: str) -> Table:
    """``table`` without as many of its ``optional`` columns (dropped in the order given) as it
    takes for every other column to fit ``console``'s width without splitting a word."""
    for header in optional:
        if _least_width(table) <= console.width:
            break
        table.columns[:] = [c for c in table.columns if c.header != header]
    return table


def _least_width(table: Table) -> int:
    """The width of ``table`` (as ``uncut`` draws it) with no word split: the longest word of
    each column, or its whole header (a header such as ``strikes`` split over two lines reads
    as two words), and three characters between columns."""
    widths = [
        max(
            cell_len(_plain(column.header)),
            *(cell_len(word) for cell in column.cells for word in _words(cell)),
        )
        for column in table.columns
    ]
    return sum(widths) + 3 * (len(widths) - 1)


def _words(cell: object) -> list[str]:
    return _plain(cell).split() or [""]
