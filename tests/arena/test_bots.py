"""Bot manifests: every sample bot loads, every malformed manifest is refused clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.bots import ManifestError, load_bot

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"
GOOD = """
name = "my-bot"
games = ["svoi-kozyri", "challenge"]
language = "python"
run = ["python3", "bot.py"]
build = ["make"]
description = "a bot"
author = "me"
version = "1.2"
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "bot.toml").write_text(text)
    return tmp_path


def test_a_full_manifest_loads(tmp_path: Path) -> None:
    bot = load_bot(write(tmp_path, GOOD))
    assert bot.path == tmp_path.resolve()
    assert (bot.name, bot.language, bot.run, bot.build) == (
        "my-bot", "python", ("python3", "bot.py"), ("make",)
    )  # fmt: skip
    assert bot.plays("challenge") and not bot.plays("svara")
    assert (bot.description, bot.author, bot.version) == ("a bot", "me", "1.2")


@pytest.mark.parametrize(
    "manifest", sorted(p.parent for p in SAMPLES.glob("*/*/bot.toml") if "kit" not in p.parts)
)
def test_every_sample_bot_manifest_loads(manifest: Path) -> None:
    assert load_bot(manifest).run


BAD = [
    ('name = "x"', "missing required field"),
    (GOOD + 'colour = "red"', "unknown field(s) colour"),
    (GOOD.replace('"my-bot"', '"My Bot"'), "'name'"),
    (GOOD.replace('["svoi-kozyri", "challenge"]', "[]"), "'games'"),
    (GOOD.replace('"challenge"]', '"chess"]'), "unknown game(s) chess"),
    (GOOD.replace('"python"', '"cobol"'), "'language'"),
    (GOOD.replace('["python3", "bot.py"]', '"python3 bot.py"'), "not a string"),
    (GOOD.replace('["python3", "bot.py"]', '["python3", ""]'), "non-empty string"),
    (GOOD.replace('["make"]', "[]"), "'build'"),
    (GOOD.replace('"me"', "7"), "'author'"),
    ("name = ", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "problem"), BAD)
def test_malformed_manifests_say_what_is_wrong(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ManifestError, match=r"bot\.toml") as info:
        load_bot(write(tmp_path, text))
    assert problem in str(info.value)


def test_missing_folder_or_manifest(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="not a folder"):
        load_bot(tmp_path / "nowhere")
    with pytest.raises(ManifestError, match=r"no bot\.toml"):
        load_bot(tmp_path)
