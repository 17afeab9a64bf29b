"""Every command shown in the README and in docs/*.md runs as written.

Each document's shell code blocks are read in order; every ``arena`` (or ``.venv/bin/arena``)
command and every ``cp`` runs with bash, in a scratch copy of the sample bots, one folder per
document (so a bot copied by one command is there for the next), with the project's ``.venv``
where the docs expect it. Each must exit with 0, and print what the docs say it prints where
``CLAIMS`` records such a claim. Commands that need a server or stand for a family of commands
are in ``SKIPPED``, each with the reason; nothing else is left out. The listings and the quoted
error of ``docs/bots.md`` are compared with the real files and the real message.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox import default_sandbox_name

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
RUN = ("arena", "cp")
"""First words of the lines that are commands to run (after ``.venv/bin/``)."""
SHELL_BLOCKS = ("", "bash", "sh", "shell", "console")
COMMAND_TIMEOUT_S = 1800

SKIPPED = {
    "arena submit": "needs a server and an account: tests/web/site/test_cli.py (the real "
    "flow) and tests/arena/cli/test_submit.py (a failing server) cover it",
    "arena fetch": "needs a server that played the match: tests/web/site/test_cli.py",
    "arena challenge": "needs a server, an account and bots on it: "
    "tests/web/site/test_challenges.py and tests/web/test_challenge_match.py (played for real)",
    "arena replay match.json": "replays the file that `arena fetch` downloads",
    "arena verify match.json": "verifies the file that `arena fetch` downloads",
    "arena match GAME BOT_DIR...": "a synopsis of the options, not a command",
    "arena match --repeat REPLAY BOT_DIR...": "a synopsis of the options, not a command",
    "arena tournament GAME BOT_DIR...": "a synopsis of the options, not a command",
    "arena tournament --again DIR/tournament.json": "a synopsis of the options, not a command",
    "arena play svoi-kozyri --human": "waits for a person at the keyboard: "
    "tests/arena/cli/test_human.py plays it through a pseudo-terminal",
    "source .venv/bin/activate": "the test puts .venv/bin on PATH itself",
    "arena doctor": "its exit status is 1 on a machine that lacks a language: "
    "tests/sandbox/test_languages.py runs it on a machine made to lack some",
    "arena check sample_bots/": "the README's example of what docs/bots.md runs as "
    "`arena check ./my-bot` (every stage, a validation match included); the fixtures' "
    "verdicts are tests/web/services/test_check_agrees.py",
}
"""Commands not run, by the start of their text (``.venv/bin/`` removed), with the reason."""

CLAIMS = {
    "arena games svoi-kozyri": ["Parameters", "pickup_plain", "Variants", "classic"],
    "arena play challenge --seed 1 --replay r.json": [],
    "arena verify r.json": ["r.json: OK"],
    "arena runtimes": ["sandbox none", "python3", "node"],
    "arena match svoi-kozyri ./my-bot builtin:greedy --sandbox none --seed 1 --replay first.json": [
        "place",
        "score",
        "status",
        "strikes",
        "replay: first.json",
        "repeat this match:",
    ],
    "arena verify first.json": ["first.json: OK"],
    "arena check ./my-bot": ["status: active (the server would accept this bot)"],
    "arena match --repeat first.json": ["repeating first.json: seats were 0: svoi-kozyri-greedy"],
    "arena tournament svoi-kozyri": ["Standings", "svoi-kozyri-heuristic"],
    # docs/bots.md's strength table: 31 first places of 60, mean places 1.63, 2.05 and 2.32
    "arena tournament kozyr-boys": ["31/", " 1.63 ", " 2.05 ", " 2.32 "],
}
"""What the docs say a command prints, by the start of the command's text."""


@dataclass(frozen=True)
class Command:
    document: str
    line: int
    text: str

    @property
    def plain(self) -> str:
        """The command without ``.venv/bin/``, as ``SKIPPED`` and ``CLAIMS`` name it."""
        return self.text.removeprefix(".venv/bin/")

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


def code_blocks(path: Path) -> list[tuple[str, int, str]]:
    """(language, first line number, text) of every fenced block of ``path``."""
    text = path.read_text(encoding="utf-8")
    return [
        (m.group(1), text.count("\n", 0, m.start(2)) + 1, m.group(2)) for m in FENCE.finditer(text)
    ]


def commands_of(path: Path) -> list[Command]:
    """The command lines of the shell blocks of ``path``, continuations joined, comments cut."""
    found = []
    for language, first, body in code_blocks(path):
        if language not in SHELL_BLOCKS:
            continue
        lines = body.replace("\\\n", " ").splitlines()
        numbers = _line_numbers(body, first)
        for number, line in zip(numbers, lines, strict=True):
            text = re.sub(r"\s+#\s.*$", "", line).strip()
            words = text.removeprefix(".venv/bin/").split()
            if words and (words[0] in RUN or text.startswith("source ")):
                found.append(Command(path.relative_to(ROOT).as_posix(), number, " ".join(words)))
    return found


def _line_numbers(body: str, first: int) -> list[int]:
    """The file line number of each logical line of ``body`` (continuations joined)."""
    numbers, line = [], first
    for chunk in body.replace("\\\n", "\0").splitlines():
        numbers.append(line)
        line += 1 + chunk.count("\0")
    return numbers


def skip_reason(command: Command) -> str | None:
    return next((why for start, why in SKIPPED.items() if command.plain.startswith(start)), None)


def claims_of(command: Command) -> list[str]:
    return [w for start, words in CLAIMS.items() if command.plain.startswith(start) for w in words]


def needs_bwrap(command: Command) -> bool:
    words = command.plain.split()
    return words[:2] in (["arena", "match"], ["arena", "tournament"]) and "--sandbox" not in words


def scratch_copy(tmp_path: Path) -> Path:
    """A folder with a copy of the sample bots and the project's ``.venv`` beside them."""
    work = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "bot")
    shutil.copytree(ROOT / "sample_bots", work / "sample_bots", ignore=ignore)
    (work / ".venv").symlink_to(Path(sys.prefix))
    return work


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_SERVER")}
    env["PATH"] = f"{Path(sys.prefix) / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "120"
    return env


def run(command: Command, cwd: Path) -> str | None:
    """None if ``command`` exits with 0 and prints what the docs claim, else what went wrong."""
    done = subprocess.run(
        ["bash", "-c", command.text],
        cwd=cwd,
        env=environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        return f"{command}\n  exit {done.returncode}:\n{output[-3000:]}"
    missing = [words for words in claims_of(command) if words not in output]
    if missing:
        return f"{command}\n  does not print {missing}:\n{output[-3000:]}"
    return None


ALL = [command for document in DOCUMENTS for command in commands_of(document)]


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a document's tournaments take minutes on a loaded machine
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_command_of_a_document_runs_as_written(document: Path, tmp_path: Path) -> None:
    work = scratch_copy(tmp_path)
    bwrap = default_sandbox_name() is not None
    problems, skipped = [], []
    for command in commands_of(document):
        reason = skip_reason(command)
        if reason is None and needs_bwrap(command) and not bwrap:
            if os.environ.get("ARENA_REQUIRE_BWRAP") == "1":
                problems.append(f"{command}\n  ARENA_REQUIRE_BWRAP=1 but bwrap cannot run here")
                continue
            reason = "no isolating sandbox on this machine"
        if reason is not None:
            skipped.append(f"{command} ({reason})")
            continue
        problem = run(command, work)
        if problem is not None:
            problems.append(problem)
    assert not problems, "\n\n".join(problems)


def test_the_documents_show_commands_and_the_lists_name_real_ones() -> None:
    plain = [command.plain for command in ALL]
    assert len(plain) >= 20
    for start in [*SKIPPED, *CLAIMS]:
        assert any(text.startswith(start) for text in plain), f"no command starts {start!r}"


def test_commands_are_found_with_their_line_numbers() -> None:
    readme = commands_of(ROOT / "README.md")
    lines = (ROOT / "README.md").read_text().splitlines()
    for command in readme:
        assert command.plain.split()[1] in lines[command.line - 1], command


def _block_after(document: Path, marker: str) -> str:
    text = document.read_text(encoding="utf-8")
    start = text.index(marker)
    return FENCE.search(text, start).group(2)  # type: ignore[union-attr]


BOTS_MD = ROOT / "docs" / "bots.md"
GREEDY = ROOT / "sample_bots" / "python" / "svoi-kozyri-greedy"


def test_the_bot_py_listing_is_the_sample_it_names() -> None:
    listing = _block_after(BOTS_MD, "`my-bot/bot.py` is about twenty lines")
    assert listing == (GREEDY / "bot.py").read_text(encoding="utf-8")


def test_the_bot_toml_listing_is_the_sample_with_a_new_name() -> None:
    listing = _block_after(BOTS_MD, "Open `my-bot/bot.toml`")
    real = (GREEDY / "bot.toml").read_text(encoding="utf-8")
    renamed = real.replace('"svoi-kozyri-greedy"', '"my-bot"').replace('"Kozyri Arena"', '"Ada"')
    assert listing == renamed


def test_the_quoted_manifest_error_is_the_real_one(tmp_path: Path) -> None:
    quoted = _block_after(BOTS_MD, "reports every problem of the manifest at once").splitlines()
    bot = tmp_path / "my-bot"
    shutil.copytree(GREEDY, bot)
    toml = bot / "bot.toml"
    text = toml.read_text().replace('run = ["python3", "bot.py"]', 'run = "python3 bot.py"')
    toml.write_text(text + 'colour = "red"\n')
    argv = [sys.executable, "-m", "arena.cli.main", "match", "svoi-kozyri", str(bot)]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, env=environment()
    )
    assert done.returncode == 2
    real = done.stdout.splitlines()
    assert real[0].endswith("/my-bot/bot.toml: 2 problems:")
    assert quoted[0].startswith("error: /") and quoted[0].endswith("/my-bot/bot.toml: 2 problems:")
    assert real[0].split(":")[0] == quoted[0].split(":")[0] == "error"
    assert real[1:] == quoted[1:]
