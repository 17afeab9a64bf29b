"""How the ``arena`` subcommands report a refused input: one unwrapped line."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape


def print_error(console: Console, problem: object, label: str = "error") -> None:
    """Print ``label: problem`` on one line, however wide; brackets in ``problem`` stay literal."""
    colour = "red" if label == "error" else "yellow"
    console.print(f"[{colour}]{label}:[/] {escape(str(problem))}", soft_wrap=True)
