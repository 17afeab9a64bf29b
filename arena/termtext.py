"""Text from bots, replays and servers made safe to show on a terminal.

A bot's self-reported name, its stderr and ``debug`` text, a replay read from a file and a
server's answers are written by someone else. Printed raw, a control sequence in them would
be run by the operator's terminal: an OSC 52 clipboard write, a new window title, a cleared
screen, hidden text, a right-to-left override that makes a line read other than it is. Every
``arena`` subcommand shows such text through this module:

* ``clean`` makes each control character visible as an escape (``\\x1b``, ``\\x9b``,
  ``\\u202e``), so the rest of a sequence prints as harmless letters;
* ``markup`` also escapes rich markup (a name such as ``[link=...]`` would otherwise make rich
  itself write a hyperlink sequence);
* ``console`` is a rich console that removes whatever control character still reaches it in
  text (rich's own styling is added after, and stays).

Plain ``print`` paths use ``clean`` (or ``echo``) on every piece of text they did not write.
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Characters that reorder the text around them (right-to-left overrides and isolates)."""

_UNSAFE = (
    "\x00-\x08\x0b-\x1f"  # C0 controls but tab and newline: ESC, BEL, CR, backspace...
    "\x7f-\x9f"  # DEL and the C1 controls (0x9b is a one-byte CSI, 0x9d an OSC, 0x90 a DCS)
    "\u2028\u2029"  # line and paragraph separators
    f"{BIDI_CONTROLS}"
    "\ud800-\udfff"  # lone surrogates (undecodable bytes kept by ``surrogateescape``)
)
_UNSAFE_INLINE = re.compile(f"[\n{_UNSAFE}]")
_UNSAFE_LINES = re.compile(f"[{_UNSAFE}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b", "\x07": "\\x07"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def clean(value: object, *, lines: bool = False) -> str:
    """``str(value)`` with every control character shown as an escape such as ``\\x1b``.

    Newlines are kept only when ``lines`` is true (a log); in a name or a one-line message they
    are shown as ``\\n``, so that text cannot forge lines of its own. Tabs are kept.
    """
    text = str(value)
    pattern = _UNSAFE_LINES if lines else _UNSAFE_INLINE
    return pattern.sub(_visible, text) if pattern.search(text) else text


def markup(value: object, *, lines: bool = False) -> str:
    """``clean(value)``, also escaped for rich markup (to put into a markup string)."""
    return escape(clean(value, lines=lines))


def text(value: object, style: str = "", *, lines: bool = False) -> Text:
    """``clean(value)`` as a rich ``Text`` (never read as markup)."""
    return Text(clean(value, lines=lines), style=style)


def echo(message: str, *, file: IO[str] | None = None) -> None:
    """``print`` a message made of text not all of our own (its lines kept)."""
    print(clean(message, lines=True), file=file or sys.stdout, flush=True)


class _Scrubbed:
    """A renderable drawn as ``inner`` with control characters taken out of its text."""

    def __init__(self, inner: ConsoleRenderable) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            if segment.control or not _UNSAFE_LINES.search(segment.text):
                yield segment
            else:  # removed, not escaped: rich has laid the line out with them taking no room
                yield Segment(_UNSAFE_LINES.sub("", segment.text), segment.style)


class _ScrubHook(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Scrubbed(renderable) for renderable in renderables]


def console(**options: Any) -> Console:
    """A rich ``Console`` (``options`` as rich takes them) that never writes a control
    character found in the text it is given: a last guard behind ``clean`` and ``markup``."""
    made = Console(**options)
    made.push_render_hook(_ScrubHook())
    return made
