"""The languages a bot is written in with a starter kit: one table, and what each backend has.

``LANGUAGES`` is the one place that says, per language: the ``language`` of ``bot.toml``, the
programs its bots' ``build`` and ``run`` call, the Debian packages that bring them (the runner
image installs exactly these: ``runner-packages.txt``), and the folder of its sample bot.
``language_status(backend)`` turns the probe of ``sandbox.runtimes`` into, per language: its
version there, or what is missing and the command that installs it.
Nothing here imports flask, sqlalchemy, celery or ``web``.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PACKAGES_FILE = Path(__file__).with_name("runner-packages.txt")
"""The runner image's Debian packages (``scripts/ci-docker.sh`` and ``runner.Dockerfile``)."""


@dataclass(frozen=True)
class Language:
    """One language with a starter kit and a sample bot."""

    id: str
    """What ``language`` in ``bot.toml`` says."""
    name: str
    commands: tuple[str, ...]
    """The programs its bots call, the one whose version is shown first."""
    packages: tuple[str, ...]
    """The Debian packages that bring ``commands``."""
    sample: str
    """The sample bot's folder, relative to the checkout (it plays every game)."""

    @property
    def version_command(self) -> str:
        return self.commands[0]


LANGUAGES = (
    Language("python", "Python", ("python3",), ("python3",), "sample_bots/python/any-game-random"),
    Language("javascript", "JavaScript", ("node",), ("nodejs",), "sample_bots/js/any-game-random"),
    Language(
        "typescript",
        "TypeScript",
        ("tsc", "node"),
        ("node-typescript", "nodejs"),
        "sample_bots/typescript/any-game-random",
    ),
    Language(
        "java",
        "Java",
        ("javac", "java"),
        ("default-jdk-headless",),
        "sample_bots/java/any-game-random",
    ),
    Language(
        "csharp",
        "C# (Mono)",
        ("mcs", "mono"),
        ("mono-mcs", "mono-runtime"),
        "sample_bots/csharp/any-game-random",
    ),
    Language("c", "C", ("gcc",), ("gcc", "libc6-dev"), "sample_bots/c/any-game-random"),
    Language("cpp", "C++", ("g++",), ("g++", "libc6-dev"), "sample_bots/cpp/any-game-random"),
    Language("go", "Go", ("go",), ("golang-go",), "sample_bots/go/any-game-random"),
    Language("rust", "Rust", ("rustc",), ("rustc", "gcc"), "sample_bots/rust/any-game-random"),
    Language("ruby", "Ruby", ("ruby",), ("ruby",), "sample_bots/ruby/any-game-random"),
    Language("php", "PHP", ("php",), ("php-cli",), "sample_bots/php/any-game-random"),
)
"""The languages with a kit, in the order pages and tables show them."""

BY_ID = {language.id: language for language in LANGUAGES}


def debian_packages(languages: Iterable[Language] = LANGUAGES) -> list[str]:
    """The Debian packages of ``languages``, each once, in table order."""
    return list(dict.fromkeys(p for language in languages for p in language.packages))


def runner_packages() -> list[str]:
    """The packages ``runner-packages.txt`` lists (comments and blank lines left out)."""
    lines = PACKAGES_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def packages_tag() -> str:
    """The tag of the toolchain images: a hash of ``runner-packages.txt``, as
    ``scripts/ci-docker.sh`` computes it (a changed package list is a new image name)."""
    return hashlib.sha256(PACKAGES_FILE.read_bytes()).hexdigest()[:12]


def folded(command: str, width: int = 78) -> str:
    """``command`` on lines of at most ``width`` characters, continued with a backslash (a
    shell reads it back as the one command)."""
    lines: list[str] = []
    line = ""
    for word in command.split():
        if line and len(line) + 1 + len(word) > width - 2:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def install_command(languages: Sequence[Language]) -> str:
    """The one command that installs ``languages``' toolchains on a Debian or Ubuntu machine."""
    packages = " ".join(debian_packages(languages))
    return f"sudo apt-get install --no-install-recommends {packages}"


_RELEASE = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*)")


def release(version: str | None) -> str | None:
    """The release number in a version line (``go version go1.19.8 linux/amd64`` is
    ``1.19.8``), or the line itself when it holds none."""
    if not version:
        return version
    found = _RELEASE.search(version) or re.search(r"(\d+\.\d+(?:\.\d+)*)", version)
    return found.group(1) if found else version


@dataclass(frozen=True)
class LanguageStatus:
    """A language in one backend: its version there, or what it lacks and how to add it."""

    id: str
    name: str
    available: bool
    version: str | None
    missing: tuple[str, ...]
    reason: str | None
    install: str | None

    @property
    def release(self) -> str | None:
        """The version's release number alone (``17.0.15``)."""
        return release(self.version)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["missing"] = list(self.missing)
        data["release"] = self.release
        return data


def status_of(
    language: Language,
    versions: dict[str, str],
    backend: str,
    host: dict[str, str] | None = None,
) -> LanguageStatus:
    """``language`` given ``versions`` (command -> first line of its version) of ``backend``;
    ``host``, the versions on the machine itself, tells a program that is installed but does
    not start inside the sandbox from one that is not installed."""
    missing = tuple(c for c in language.commands if c not in versions)
    if not missing:
        version = versions[language.version_command] or "(version unknown)"
        return LanguageStatus(language.id, language.name, True, version, (), None, None)
    reason, remedy = _why_missing(language, missing, backend, host)
    return LanguageStatus(language.id, language.name, False, None, missing, reason, remedy)


def _why_missing(
    language: Language, missing: tuple[str, ...], backend: str, host: dict[str, str] | None
) -> tuple[str, str]:
    names = ", ".join(missing)
    if backend == "docker":
        return f"{names}: not in the runner image", "rebuild it: bash scripts/ci-docker.sh"
    if host is not None and all(c in host for c in missing):
        why = f"{names}: installed, but does not start inside {backend}"
        return why, install_command([language]) + " (Debian's own, under /usr)"
    return f"{names}: not found on this machine", install_command([language])


def language_status(
    versions: dict[str, str],
    backend: str,
    host: dict[str, str] | None = None,
    languages: Iterable[Language] = LANGUAGES,
) -> list[LanguageStatus]:
    """Every language of the table in ``backend``, whose probe found ``versions`` (``host``:
    see ``status_of``)."""
    return [status_of(language, versions, backend, host) for language in languages]


def missing_install_command(statuses: Iterable[LanguageStatus]) -> str | None:
    """The one command installing every missing language's toolchain (None if none is)."""
    missing = [BY_ID[s.id] for s in statuses if not s.available]
    return install_command(missing) if missing else None


def missing_here() -> list[Language]:
    """The languages some of whose programs are not on this machine's ``PATH``."""
    return [lang for lang in LANGUAGES if not all(shutil.which(c) for c in lang.commands)]


def summary(missing: Sequence[Language]) -> str:
    """Which languages this machine lacks and the one command that adds them ("" if none)."""
    if not missing:
        return ""
    names = ", ".join(language.id for language in missing)
    return (
        f"bot languages missing here ({len(missing)} of {len(LANGUAGES)}): {names}\n"
        f"install them with:\n{folded(install_command(missing))}\n"
        "(`arena doctor` checks them as sandboxed bots see them)"
    )


def main(argv: Sequence[str]) -> int:
    """``python3 sandbox/languages.py --missing-packages``: the Debian packages of the
    languages this machine lacks, one a line; ``--summary``: which ones, and the command that
    installs them (nothing if none is missing). For install scripts: needs no virtualenv."""
    if list(argv) == ["--missing-packages"]:
        for package in debian_packages(missing_here()):
            print(package)
        return 0
    if list(argv) == ["--summary"]:
        text = summary(missing_here())
        if text:
            print(text)
        return 0
    print("usage: python3 sandbox/languages.py --missing-packages | --summary", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
