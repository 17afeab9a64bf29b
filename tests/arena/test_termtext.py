"""``arena.termtext``: every control character shown as an escape, or removed at the last."""

from __future__ import annotations

import io

import pytest
from rich.table import Table

from arena.termtext import clean, console, markup, text

FAMILIES = {
    "OSC 52 clipboard": ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
    "OSC title": ("\x1b]0;t\x1b\\", "\\x1b]0;t\\x1b\\"),
    "CSI clear screen": ("\x1b[2J", "\\x1b[2J"),
    "CSI hidden text": ("\x1b[8m", "\\x1b[8m"),
    "DCS": ("\x1bP+q544e\x1b\\", "\\x1bP+q544e\\x1b\\"),
    "C1 CSI": ("\x9b2J", "\\x9b2J"),
    "C1 OSC and ST": ("\x9d0;t\x9c", "\\x9d0;t\\x9c"),
    "C1 DCS": ("\x90q\x9c", "\\x90q\\x9c"),
    "BEL": ("\x07", "\\x07"),
    "backspace, CR, DEL": ("\b\r\x7f", "\\x08\\r\\x7f"),
    "bidi override": ("\u202eevil\u202c", "\\u202eevil\\u202c"),
    "bidi isolate": ("\u2067x\u2069", "\\u2067x\\u2069"),
    "line separator": ("\u2028", "\\u2028"),
    "lone surrogate": ("\udc9b", "\\udc9b"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_is_shown_as_escapes(family: str) -> None:
    raw, shown = FAMILIES[family]
    assert clean(f"a{raw}b") == f"a{shown}b"


def test_newlines_are_kept_only_in_logs_and_tabs_always() -> None:
    assert clean("a\n\tb") == "a\\n\tb"
    assert clean("a\n\tb\x1b", lines=True) == "a\n\tb\\x1b"


def test_ordinary_text_is_left_alone() -> None:
    words = "Ж♠ 10♥ [x] naïve 漢字 👨‍👩‍👧"
    assert clean(words) == words


def test_markup_is_escaped_as_well() -> None:
    assert markup("[link=http://x/]\x1b") == "\\[link=http://x/]\\x1b"
    assert text("[bold]\x07").plain == "[bold]\\x07"


def test_the_console_removes_what_reaches_it_raw_and_keeps_its_own_colours() -> None:
    out = io.StringIO()
    terminal = console(file=out, force_terminal=True, width=60, color_system="standard")
    table = Table()
    table.add_column("name")
    table.add_row("x\x1b]52;c;aGk=\x07y\u202e")
    terminal.print(table)
    terminal.print("[red]red[/] \x9b2J", "\x1b[2J")
    written = out.getvalue()
    assert "x]52;c;aGk=y" in written and "2J" in written
    leftover = written.replace("\x1b[31m", "").replace("\x1b[0m", "").replace("\x1b[1m", "")
    assert not any(c in leftover for c in "\x1b\x07\x9b\u202e"), repr(leftover)
