"""``sandbox.languages``: the one table of kit languages, its packages, and what a machine lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.bots import LANGUAGES as MANIFEST_LANGUAGES
from arena.cli.main import main
from sandbox.docker import image_name
from sandbox.languages import (
    BY_ID,
    LANGUAGES,
    PACKAGES_FILE,
    debian_packages,
    folded,
    install_command,
    language_status,
    packages_tag,
    release,
    runner_packages,
    status_of,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "sandbox" / "languages.py"


def test_the_table_names_the_kit_languages_a_manifest_accepts() -> None:
    ids = [language.id for language in LANGUAGES]
    assert ids == list(MANIFEST_LANGUAGES[: len(ids)])
    assert len(set(ids)) == len(ids) and all(language.commands for language in LANGUAGES)
    assert all(language.sample.startswith("sample_bots/") for language in LANGUAGES)


def test_the_runner_image_installs_exactly_the_tables_packages() -> None:
    assert sorted(runner_packages()) == sorted(debian_packages())
    dockerfile = (REPO / "sandbox" / "runner.Dockerfile").read_text()
    assert "COPY runner-packages.txt" in dockerfile
    script = (REPO / "scripts" / "ci-docker.sh").read_text()
    assert 'sha256sum "$PACKAGES_FILE" | cut -c1-12' in script


def test_the_image_names_follow_the_package_list(monkeypatch: pytest.MonkeyPatch) -> None:
    done = subprocess.run(["sha256sum", str(PACKAGES_FILE)], capture_output=True, text=True)
    assert packages_tag() == done.stdout[:12]
    monkeypatch.delenv("ARENA_DOCKER_IMAGE", raising=False)
    assert image_name() == f"kozyri-arena-runner:{packages_tag()}"
    monkeypatch.setenv("ARENA_DOCKER_IMAGE", "mine:1")
    assert image_name() == "mine:1"


def test_a_missing_language_says_why_and_how_to_add_it() -> None:
    java = BY_ID["java"]
    ok = status_of(java, {"javac": "javac 17.0.15", "java": "openjdk 17"}, "bwrap")
    assert ok.available and ok.release == "17.0.15" and ok.install is None
    absent = status_of(java, {}, "none")
    assert not absent.available and absent.missing == ("javac", "java")
    assert absent.reason == "javac, java: not found on this machine"
    assert absent.install == "sudo apt-get install --no-install-recommends default-jdk-headless"
    stuck = status_of(java, {"java": "x"}, "bwrap", host={"javac": "javac 17", "java": "x"})
    assert stuck.reason == "javac: installed, but does not start inside bwrap"
    image = status_of(java, {}, "docker")
    assert image.reason == "javac, java: not in the runner image"
    assert image.install is not None and "scripts/ci-docker.sh" in image.install
    assert [s.id for s in language_status({}, "none")] == [lang.id for lang in LANGUAGES]


def test_release_numbers_and_folded_commands() -> None:
    assert release("go version go1.19.8 linux/amd64") == "1.19.8"
    assert release("gcc (Debian 12.2.0-14+deb12u1) 12.2.0") == "12.2.0"
    assert release("v20.20.2") == "20.20.2" and release("odd") == "odd"
    command = install_command(LANGUAGES)
    text = folded(command)
    assert all(len(line) <= 78 for line in text.splitlines()) and "\n" in text
    assert text.replace(" \\\n    ", " ") == command


def script(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    """The table as a plain script, with the system's Python and ``path`` as PATH."""
    env = {"PATH": path}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, check=False
    )


def test_the_script_lists_what_a_bare_machine_must_install(tmp_path: Path) -> None:
    bare = script("--missing-packages", path=str(tmp_path))
    assert bare.returncode == 0 and bare.stdout.split() == debian_packages()
    summary = script("--summary", path=str(tmp_path)).stdout
    assert summary.startswith(f"bot languages missing here ({len(LANGUAGES)} of ")
    assert "sudo apt-get install --no-install-recommends python3 nodejs" in summary
    assert script("--frobnicate", path=str(tmp_path)).returncode == 2


def test_doctor_names_the_missing_languages_and_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for tool in ("sh", "grep"):  # what the probe itself runs
        (tmp_path / tool).symlink_to(f"/bin/{tool}")
    (tmp_path / "ruby").write_text("#!/bin/sh\necho 'ruby 9.9.1 (fake)'\n")
    (tmp_path / "ruby").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    from sandbox.runtimes import list_runtimes

    list_runtimes.cache_clear()
    try:
        assert main(["doctor", "--quick"]) == 1
    finally:
        list_runtimes.cache_clear()
    out = capsys.readouterr().out
    assert "ruby        ok       9.9.1" in out
    assert f"{len(LANGUAGES) - 1} of {len(LANGUAGES)} languages missing" in out
    assert "sudo apt-get install --no-install-recommends python3 nodejs" in out
    assert " ruby " not in out.split("install them with:")[1]
    assert max(len(line) for line in out.splitlines()) <= 80, out


def test_the_docs_list_every_language_with_its_packages() -> None:
    bots = (REPO / "docs" / "bots.md").read_text()
    pinned = (REPO / "docs" / "sandbox.md").read_text()
    for language in LANGUAGES:
        row = next(line for line in bots.splitlines() if line.startswith(f"| {language.id} |"))
        assert all(package in row for package in language.packages if package != "gcc"), row
        assert f"\n| {language.id} | " in pinned, language.id
