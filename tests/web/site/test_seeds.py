"""Every seed the service draws comes from the OS CSPRNG with 64 bits, and none has a default.

Each flow that makes a seed (ladder tables, validation matches, tournaments, the self-test) is
run with ``secrets.randbits`` recording what it hands out: a seed drawn any other way (a
``random.Random``, a 31-bit ``randrange``, a fixed number) is not among the recorded values, and
the test fails. A scan of ``web/`` refuses the other ways of drawing numbers outright.
"""

from __future__ import annotations

import inspect
import random
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.web.conftest import ROOT, SAMPLES
from tests.web.site.conftest import World, login

DRAWS = 40  # seeds per flow: all of them below 2**32 would be a 1 in 2**(32*40) chance


class Recorder:
    """``secrets.randbits`` that remembers every value it gave, and for how many bits."""

    def __init__(self) -> None:
        self.given: list[tuple[int, int]] = []
        self.real: Callable[[int], int] = secrets.randbits

    def __call__(self, bits: int) -> int:
        value = self.real(bits)
        self.given.append((bits, value))
        return value

    def values(self) -> set[int]:
        return {value for bits, value in self.given if bits >= 64}


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(secrets, "randbits", recorder)
    return recorder


def assert_from_csprng(seeds: list[int], drawn: Recorder) -> None:
    assert seeds, "the flow drew no seed"
    strangers = [s for s in seeds if s not in drawn.values()]
    assert not strangers, f"seeds not drawn from secrets.randbits(64): {strangers}"
    assert all(0 <= s < 2**64 for s in seeds)
    assert max(seeds) >= 2**32, "64-bit seeds should exceed 32 bits"


def test_ladder_tables_draw_their_seeds_from_the_csprng(
    app: Flask, world: World, drawn: Recorder
) -> None:
    from web.extensions import db
    from web.models import Match
    from web.services import ladders

    made = ladders.schedule_ladder(world.ladder, random.Random(1), target=DRAWS)
    db.session.commit()
    seeds = [db.session.get(Match, m.id).seed for m in made]  # read back from PostgreSQL
    assert_from_csprng(seeds, drawn)
    groups: dict[Any, set[int]] = {}
    for match in made:
        groups.setdefault(match.mirror_group, set()).add(match.seed)
    assert all(len(s) == 1 for s in groups.values()), "a mirrored group shares one deal"


def test_validation_and_any_match_without_a_seed_draw_from_the_csprng(
    app: Flask, world: World, drawn: Recorder
) -> None:
    from web.extensions import db
    from web.models import Match, MatchKind
    from web.services.matches import create_match

    made = [
        create_match(
            world.ladder.game_config(), world.versions, kind=MatchKind.VALIDATION, rated=False
        )
        for _ in range(DRAWS)
    ]
    db.session.commit()
    db.session.expire_all()
    assert_from_csprng([db.session.get(Match, m.id).seed for m in made], drawn)
    assert "seed" not in inspect.signature(create_match).parameters or (
        inspect.signature(create_match).parameters["seed"].default is None
    )


def test_a_tournament_without_a_seed_draws_every_deal_secretly(
    app: Flask, client: FlaskClient, world: World, drawn: Recorder
) -> None:
    from web.services.tournaments import create_tournament

    assert inspect.signature(create_tournament).parameters["seed"].default is None
    entries = [v.id for v in world.versions]
    made = create_tournament("t", world.ladder.game_config(), entries, tables=DRAWS)
    assert made.seed is None
    seeds = [m.seed for m in _matches_of(made.id)]
    assert len(seeds) == 2 * DRAWS  # two seat rotations per table
    assert_from_csprng(seeds, drawn)
    data = client.get(f"/api/v1/tournaments/{made.id}").get_json()["data"]
    assert data["seed"] is None and data["reproducible"] is False
    page = client.get(f"/tournaments/{made.id}").get_data(as_text=True)
    assert "drawn secretly at random" in page and "Reproducible deals" not in page


def test_a_tournament_given_a_seed_says_its_deals_are_known_in_advance(
    app: Flask, client: FlaskClient, world: World, drawn: Recorder
) -> None:
    from web.services.tournaments import create_tournament, derived_seed

    seed = 2**64 - 5  # the whole range round-trips through the database and the API
    entries = [v.id for v in world.versions]
    made = create_tournament("r", world.ladder.game_config(), entries, tables=3, seed=seed)
    again = create_tournament("r2", world.ladder.game_config(), entries, tables=3, seed=seed)
    deals = sorted({m.seed for m in _matches_of(made.id)})
    assert deals == sorted({derived_seed(seed, i) for i in range(3)})
    assert deals == sorted({m.seed for m in _matches_of(again.id)})  # reproducible
    assert not drawn.given, "a reproducible tournament draws nothing at random"
    data = client.get(f"/api/v1/tournaments/{made.id}").get_json()["data"]
    assert data["seed"] == str(seed) and data["reproducible"] is True
    page = client.get(f"/tournaments/{made.id}").get_data(as_text=True)
    assert "Reproducible deals" in page and "known in advance" in page and str(seed) in page


def _matches_of(tournament_id: int) -> list[Any]:
    from sqlalchemy import select

    from web.extensions import db
    from web.models import Match

    db.session.expire_all()
    return list(db.session.scalars(select(Match).where(Match.tournament_id == tournament_id)))


def test_the_self_test_position_comes_from_a_fresh_seed(
    app: Flask, drawn: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena import selftest
    from arena.bots import load_bot
    from sandbox import get_sandbox

    used: list[int] = []
    real = selftest._positions

    def positions(game_name: str, seed: int) -> Any:
        used.append(seed)
        return real(game_name, seed)

    monkeypatch.setattr(selftest, "_positions", positions)
    manifest = load_bot(SAMPLES / "python" / "svoi-kozyri-random")
    for _ in range(3):
        report = selftest.run_selftest(get_sandbox("none"), manifest, "svoi-kozyri", timeout=60)
        assert report.passed, report.log
    assert len(set(used)) == 3
    assert all(seed in drawn.values() for seed in used), used


def test_no_service_command_or_form_has_a_default_seed(
    app: Flask, client: FlaskClient, world: World
) -> None:
    from web.cli import demo_command, tournament_run
    from web.forms import TournamentForm

    for command in (tournament_run, demo_command):
        option = next(p for p in command.params if p.name == "seed")
        assert option.default is None, command.name
    with app.test_request_context():
        assert TournamentForm(meta={"csrf": False}).seed.data is None
    login(client, "root-admin")
    page = client.get("/admin").get_data(as_text=True)
    field = re.search(r'<input[^>]*name="seed"[^>]*>', page)
    assert field and 'value="0"' not in field.group(0)


# Ways of drawing a number that no seed path of the service may use.
FORBIDDEN = re.compile(
    r"randrange\(|randint\(|getrandbits\(|SystemRandom|randbelow\(|random\.random\(|"
    r"seed\s*[:=][^=\n]*=\s*\d|seed=\d|--seed.*default=\d|os\.urandom\("
)


def test_nothing_in_the_service_draws_a_seed_another_way() -> None:
    """``secrets.randbits`` is used in ``web/services/seeds.py`` only; the other generators
    and fixed seeds nowhere in ``web/``."""
    found = []
    for path in sorted((ROOT / "web").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        text = path.read_text("utf-8")
        name = str(path.relative_to(ROOT))
        found += [f"{name}: {m.group(0)}" for m in FORBIDDEN.finditer(text)]
        if "randbits" in text and name != "web/services/seeds.py":
            found.append(f"{name}: randbits outside seeds.py")
    assert not found, found
    assert FORBIDDEN.search("seed = random.SystemRandom().randrange(2**31)")
    assert FORBIDDEN.search('@click.option("--seed", type=int, default=0)')
    assert FORBIDDEN.search("    seed: int = 0,")
    assert Path(ROOT / "web" / "services" / "seeds.py").read_text().count("secrets.randbits") == 1


def _tournaments() -> int:
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import Tournament

    db.session.expire_all()
    return int(db.session.scalar(select(func.count()).select_from(Tournament)) or 0)


@pytest.mark.parametrize(
    ("seed", "reproducible"), [("", False), ("7", True), (str(2**64 - 1), True)]
)
def test_the_admin_form_starts_a_tournament_with_or_without_a_seed(
    client: FlaskClient, world: World, seed: str, reproducible: bool
) -> None:
    from tests.web.site.conftest import csrf_from

    login(client, "root-admin")
    token = csrf_from(client.get("/admin").get_data(as_text=True))
    fields = {"name": "cup", "ladder": world.ladder.slug, "tables": "1", "seed": seed}
    answer = client.post("/admin/tournaments", data={**fields, "csrf_token": token})
    assert answer.status_code == 302 and "/tournaments/" in answer.headers["Location"]
    data = client.get("/api/v1" + answer.headers["Location"]).get_json()["data"]
    assert data["reproducible"] is reproducible and data["seed"] == (seed or None)


@pytest.mark.parametrize("seed", ["-1", str(2**64), "seven"])
def test_the_admin_form_refuses_a_bad_seed_and_starts_nothing(
    client: FlaskClient, world: World, seed: str
) -> None:
    from tests.web.site.conftest import csrf_from

    login(client, "root-admin")
    token = csrf_from(client.get("/admin").get_data(as_text=True))
    fields = {"name": "cup", "ladder": world.ladder.slug, "tables": "1", "seed": seed}
    answer = client.post("/admin/tournaments", data={**fields, "csrf_token": token})
    assert answer.status_code == 302
    page = client.get(answer.headers["Location"]).get_data(as_text=True)
    assert "The tournament form has errors" in page and "seed" in page
    assert _tournaments() == 0


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_tournament_run_refuses_a_seed_outside_64_bits(app: Flask, world: World, seed: str) -> None:
    from web.cli import tournament_run

    runner = app.test_cli_runner()
    args = ["--game", "svoi-kozyri", "--players", "2", "--seed", seed]
    for version in world.versions:
        args += ["--version", str(version.id)]
    result = runner.invoke(tournament_run, args)
    assert result.exit_code == 2 and "--seed" in result.output, result.output
    assert _tournaments() == 0
