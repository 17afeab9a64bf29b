"""``sandbox.runtimes``: what each backend offers a bot's commands, probed for real."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli.main import main
from sandbox.base import Sandbox, SandboxError
from sandbox.languages import LANGUAGES
from sandbox.runtimes import RUNTIMES, host_path, list_languages, list_runtimes, runtimes_json


@pytest.fixture(autouse=True)
def fresh_probes() -> Iterator[None]:
    list_runtimes.cache_clear()
    yield
    list_runtimes.cache_clear()


def commands(backend: str) -> list[str]:
    return [found.command for found in list_runtimes(backend)]


def test_the_host_lists_python_and_the_shell_with_versions() -> None:
    found = {item.command: item for item in list_runtimes("none")}
    assert found["python3"].version.startswith("Python 3.")
    assert found["sh"].kind == "interpreter" and found["sh"].path.startswith("/")
    order = [r.command for r in RUNTIMES]
    assert [order.index(c) for c in found] == sorted(order.index(c) for c in found)


def test_a_program_appears_once_it_is_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ruby = tmp_path / "ruby"
    ruby.write_text("#!/bin/sh\necho 'ruby 9.9.9 (test)'\n")
    ruby.chmod(0o755)
    without = os.environ["PATH"]
    if "ruby" not in commands("none"):
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{without}")
        list_runtimes.cache_clear()
    found = {item.command: item for item in list_runtimes("none")}
    assert "ruby" in found and found["ruby"].language == "Ruby"
    if found["ruby"].path == str(ruby):
        assert found["ruby"].version == "ruby 9.9.9 (test)"


def test_the_referees_virtualenv_is_not_a_bots_python() -> None:
    if sys.prefix == sys.base_prefix:
        pytest.skip("not running in a virtualenv")
    venv_bin = os.path.realpath(os.path.join(sys.prefix, "bin"))
    assert venv_bin not in [os.path.realpath(p) for p in host_path().split(os.pathsep)]
    python = next(item for item in list_runtimes("none") if item.command == "python3")
    assert not os.path.realpath(python.path).startswith(venv_bin)


def test_bwrap_lists_the_usual_runtimes_and_none_the_host_lacks(bwrap_sandbox: Sandbox) -> None:
    listed = commands("bwrap")
    assert {"python3", "node", "sh"} <= set(listed)
    assert set(listed) <= set(commands("none"))
    python = next(item for item in list_runtimes("bwrap") if item.command == "python3")
    if os.path.exists("/usr/bin/python3"):  # the one a bot's python3 means there
        assert python.path == "/usr/bin/python3" and python.version.startswith("Python 3.")


def test_the_docker_image_has_every_language(docker_sandbox: Sandbox) -> None:
    assert {"python3", "node"} <= set(commands("docker"))
    statuses = list_languages("docker")
    assert [s.id for s in statuses] == [language.id for language in LANGUAGES]
    absent = [(s.id, s.reason) for s in statuses if not s.available]
    assert absent == [], "rebuild the runner image: bash scripts/ci-docker.sh"
    assert all(s.release and s.release[0].isdigit() for s in statuses), statuses


def test_an_unknown_backend_is_refused_and_the_json_says_why() -> None:
    with pytest.raises(SandboxError, match="no sandbox 'jail'"):
        list_runtimes("jail")
    answer = runtimes_json(("none", "jail"))
    assert answer["none"]["available"] and answer["none"]["runtimes"]
    assert answer["jail"] == {"available": False, "reason": answer["jail"]["reason"],
                              "languages": [], "runtimes": []}  # fmt: skip
    assert "no sandbox 'jail'" in answer["jail"]["reason"]


def test_the_command_prints_a_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runtimes", "--sandbox", "none"]) == 0
    out = capsys.readouterr().out
    assert "sandbox none" in out and "python3" in out
    assert main(["runtimes", "--sandbox", "none", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(item["command"] == "python3" for item in data["none"]["runtimes"])
    python = next(item for item in data["none"]["languages"] if item["id"] == "python")
    assert python["available"] and python["release"].startswith("3.")


def test_the_command_shows_every_language_per_sandbox_in_80_columns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine whose PATH has no toolchain but a shell: every language but the ones the
    shell itself gives is missing, with the one command that installs them."""
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "sh").symlink_to("/bin/sh")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["runtimes", "--sandbox", "none"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    for language in LANGUAGES:
        assert f"\n{language.id} " in out, language.id
    assert "none: java: javac, java: not found on this machine" in out
    assert "sudo apt-get install --no-install-recommends python3 nodejs" in out
    assert "default-jdk-headless" in out and "php-cli" in out
