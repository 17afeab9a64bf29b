"""How the ``arena`` subcommands report a refused input: one unwrapped line."""

from __future__ import annotations

from rich.console import Console

from arena.termtext import markup


def print_error(console: Console, problem: object, label: str = "error") -> None:
    """Print ``label: problem`` unwrapped, however wide; brackets in ``problem`` stay literal
    and its control characters show as escapes (``arena.termtext``)."""
    colour = "red" if label == "error" else "yellow"
    console.print(f"[{colour}]{label}:[/] {markup(problem, lines=True)}", soft_wrap=True)
