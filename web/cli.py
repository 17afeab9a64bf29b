"""Admin commands: ``flask --app web <group> <command>``."""

from __future__ import annotations

import time
from pathlib import Path

import click
from flask import Flask
from sqlalchemy import select

from arena.termtext import clean
from web.extensions import db
from web.models import Ladder, User


def register_commands(app: Flask) -> None:
    groups = (user_cli, bot_cli, match_cli, ratings_cli, tournament_cli, ladder_cli, storage_cli)
    for group in groups:
        app.cli.add_command(group)
    app.cli.add_command(demo_command)
    app.cli.add_command(samples_command)


def _user(username: str) -> User:
    user: User | None = db.session.scalar(select(User).where(User.username == username))
    if user is None:
        raise click.ClickException(f"no user {username!r}")
    return user


# --- users ---------------------------------------------------------------------------------

user_cli = click.Group("user", help="Accounts and API tokens.")


@user_cli.command("create")
@click.argument("username")
@click.option("--password", default=None, help="Password for the web site (optional).")
@click.option("--admin", is_flag=True, help="Give the user admin rights.")
@click.option("--house", is_flag=True, help="A house account (holds the sample bots).")
def user_create(username: str, password: str | None, admin: bool, house: bool) -> None:
    """Create a user and print a new API token for it."""
    from web.services.users import create_user, issue_token, password_problem

    problem = password_problem(username, password) if password else None
    if problem:
        raise click.ClickException(f"password refused: {problem}")
    try:
        user = create_user(username, password, admin=admin, house=house)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    token = issue_token(user, "cli")
    db.session.commit()
    click.echo(f"created user {username} (id {user.id}); API token: {token}")


# --- bots ----------------------------------------------------------------------------------

bot_cli = click.Group("bot", help="Bots and their versions.")


@bot_cli.command("register")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--owner", required=True, help="Username of the bot's owner.")
@click.option("--trusted", is_flag=True, help="The project's own code (may run unsandboxed).")
def bot_register(folder: Path, owner: str, trusted: bool) -> None:
    """Upload the bot in FOLDER as a new version; it is built and validated by a worker."""
    from web.services.bots import register_folder

    version = register_folder(_user(owner), folder, trusted=trusted)
    click.echo(
        f"bot {version.bot.name} version {version.number} (id {version.id}): {version.status}"
        + (f": {clean(version.error)}" if version.error else "")
    )


@bot_cli.command("resume")
@click.argument("bot_id", type=int)
def bot_resume(bot_id: int) -> None:
    """Let a paused bot play again."""
    from web.models import Bot
    from web.services.bots import resume

    bot = db.session.get(Bot, bot_id)
    if bot is None:
        raise click.ClickException(f"no bot {bot_id}")
    resume(bot)
    click.echo(f"bot {bot.name} is active again")


# --- matches -------------------------------------------------------------------------------

match_cli = click.Group("match", help="Matches.")


@match_cli.command("requeue")
@click.argument("match_id", type=int)
def match_requeue(match_id: int) -> None:
    """Queue an unfinished (failed, cancelled, stuck) match to be played again."""
    from web.services.matches import requeue

    try:
        match = requeue(match_id)
    except (LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"match {match.id} queued again (up to {match.max_attempts} attempts in all)")


@match_cli.command("reap")
def match_reap() -> None:
    """Run the reaper once (re-queue matches of dead workers, resend lost messages)."""
    from web.services.matches import reap

    click.echo(str(reap()))


# --- storage -------------------------------------------------------------------------------

storage_cli = click.Group("storage", help="The storage (a folder or an object store).")


@storage_cli.command("init")
def storage_init() -> None:
    """Create the storage if it is not there (the folder, or the object store's bucket) and
    check that it takes a write; exits with 1, saying why, if it does not."""
    from web.storage import get_storage

    storage = get_storage()
    try:
        storage.prepare()
    except OSError as exc:
        raise click.ClickException(str(exc)) from None
    if not storage.answers():
        raise click.ClickException(f"{storage.where()} does not take a write")
    click.echo(f"storage ready: {storage.where()}")


# --- ratings -------------------------------------------------------------------------------

ratings_cli = click.Group("ratings", help="Ladder ratings.")


@ratings_cli.command("recompute")
@click.option("--ladder", "slug", default=None, help="Only this ladder (slug); default all.")
def ratings_recompute(slug: str | None) -> None:
    """Rebuild ratings from the history of finished rated matches."""
    from web.services.ratings import recompute

    query = select(Ladder) if slug is None else select(Ladder).where(Ladder.slug == slug)
    for ladder in db.session.scalars(query).all():
        click.echo(f"{ladder.slug}: {recompute(ladder.id)} matches replayed")


# --- ladders -------------------------------------------------------------------------------

ladder_cli = click.Group("ladder", help="Ladders and the scheduler.")


@ladder_cli.command("create")
@click.argument("game")
@click.option("--players", type=int, default=None)
@click.option("--variant", default=None)
def ladder_create(game: str, players: int | None, variant: str | None) -> None:
    """Create the ladder of GAME for a table size and variant (defaults: the game's)."""
    from web.services.ladders import get_or_create_ladder

    ladder = get_or_create_ladder(game, players, variant)
    db.session.commit()
    click.echo(f"ladder {ladder.slug} (id {ladder.id})")


@ladder_cli.command("schedule")
def ladder_schedule() -> None:
    """Run the ladder scheduler once."""
    from web.services.ladders import schedule_all

    click.echo(f"{schedule_all()} matches queued")


# --- tournaments ---------------------------------------------------------------------------

tournament_cli = click.Group("tournament", help="Tournaments played by the worker pool.")


SEED_HELP = (
    "Make the deals reproducible from this seed (then known in advance to whoever knows it); "
    "default: secret random deals."
)


@tournament_cli.command("run")
@click.option("--name", default="tournament")
@click.option("--game", required=True)
@click.option("--players", type=int, default=None)
@click.option("--variant", default=None)
@click.option(
    "--version",
    "versions",
    type=int,
    multiple=True,
    required=True,
    help="A bot version id (repeat).",
)
@click.option("--tables", type=int, default=10, help="Tables to play (each in every rotation).")
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=None,
    help=SEED_HELP,
)
@click.option("--wait/--no-wait", default=False, help="Wait and print the standings.")
def tournament_run(
    name: str,
    game: str,
    players: int | None,
    variant: str | None,
    versions: tuple[int, ...],
    tables: int,
    seed: int | None,
    wait: bool,
) -> None:
    """Queue a round robin between bot versions; optionally wait for the standings."""
    from arena.games import make_game
    from web.services.tournaments import conclude, create_tournament, progress, standings

    config = make_game(game, players=players, variant=variant).config()
    try:
        tournament = create_tournament(name, config, list(versions), tables=tables, seed=seed)
    except (LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"tournament {tournament.id}: {progress(tournament)}")
    while wait and str(tournament.status) != "finished":
        time.sleep(2)
        db.session.expire_all()
        conclude(tournament.id)
        click.echo(f"progress: {progress(tournament)}")
    for row in standings(tournament):
        click.echo(f"version {row['version_id']}: {row['points']:.1f} points in {row['matches']}")


# --- demo ----------------------------------------------------------------------------------

DEMO_OWNER = "demo"

DEMO_GAME = "challenge"
# Named here on purpose (one of the few places outside arena/games that names a game): the demo
# needs a default, and this two-seat game with three sample bots gives a short, complete round
# robin. Any registered game can be asked for with --game.


@click.command("demo")
@click.option("--game", default=DEMO_GAME, show_default=True, help="Game of the tournament.")
@click.option("--tables", type=int, default=6, show_default=True, help="Tables to play.")
@click.option(
    "--seed",
    type=click.IntRange(0, 2**64 - 1),
    default=None,
    help=SEED_HELP,
)
@click.option("--wait/--no-wait", default=True, help="Wait and print the standings.")
@click.option("--timeout", type=float, default=900.0, show_default=True, help="Seconds to wait.")
def demo_command(game: str, tables: int, seed: int | None, wait: bool, timeout: float) -> None:
    """Register the sample bots of GAME and queue a round robin between them.

    The bots belong to the house account ``demo`` and also join GAME's default ladder. Running
    the command again reuses them and starts another tournament.
    """
    from arena.games import make_game
    from web.services.tournaments import create_tournament

    deadline = time.monotonic() + timeout
    version_ids = _demo_versions(game, deadline)
    config = make_game(game).config()
    try:
        tournament = create_tournament(
            f"demo: {game}", config, version_ids, tables=tables, seed=seed
        )
    except (LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"tournament {tournament.id} queued: /tournaments/{tournament.id}")
    if wait:
        _wait_for_tournament(tournament.id, deadline)


@click.command("samples")
@click.option(
    "--game", "games", multiple=True, help="Only this game (repeat it); every game by default."
)
def samples_command(games: tuple[str, ...]) -> None:
    """Register the sample bots of every game (Python and JavaScript) to the house account.

    What a person needs to play each game at a table (Play): the house's sample bots are the
    opponents every table may seat. A worker builds and activates them, as any upload; they
    join each game's default ladder. Running it again registers only the missing ones.
    """
    from arena import checking
    from arena.bots import load_bot
    from web.models import Bot
    from web.services import bots, ladders, users

    owner = users.get_or_create_user(DEMO_OWNER, house=True)
    wanted = list(games) or None
    try:
        found = ladders.ensure_default_ladders(wanted)
    except (LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    for game in sorted({ladder.game for ladder in found}):
        for folder in bots.sample_bot_folders([game], checking.QUICK_LANGUAGES):
            name = load_bot(folder).name
            if db.session.scalar(select(Bot).where(Bot.owner_id == owner.id, Bot.name == name)):
                click.echo(f"{game}: {name} already registered")
                continue
            version = bots.register_folder(owner, folder, trusted=True)
            click.echo(f"{game}: registered {name} (version {version.id}); a worker builds it")


def _demo_versions(game: str, deadline: float) -> list[int]:
    """Ids of the active sample bot versions for ``game`` in Python and JavaScript
    (``QUICK_LANGUAGES``), registering the missing ones."""
    from arena import checking
    from arena.bots import load_bot
    from web.models import Bot
    from web.services import bots, ladders, users

    owner = users.get_or_create_user(DEMO_OWNER, house=True)
    ladders.ensure_default_ladders([game])
    db.session.commit()
    names = []
    for folder in bots.sample_bot_folders([game], checking.QUICK_LANGUAGES):
        name = load_bot(folder).name
        names.append(name)
        if db.session.scalar(select(Bot).where(Bot.owner_id == owner.id, Bot.name == name)):
            continue
        version = bots.register_folder(owner, folder, trusted=True)
        click.echo(f"registered {name} (version {version.id}); a worker builds and tests it")
    if len(names) < 2:
        raise click.ClickException(f"fewer than two sample bots play {game!r}")
    return [_await_active(owner.id, name, deadline) for name in names]


def _await_active(owner_id: int, name: str, deadline: float) -> int:
    """The id of bot ``name``'s newest version once a worker has made it active."""
    from web.models import Bot, BotVersion, VersionStatus

    while True:
        db.session.expire_all()
        version = db.session.scalar(
            select(BotVersion)
            .join(Bot)
            .where(Bot.owner_id == owner_id, Bot.name == name)
            .order_by(BotVersion.number.desc())
        )
        if version is not None and version.status == VersionStatus.ACTIVE:
            click.echo(f"{name}: active")
            active_id: int = version.id
            return active_id
        if version is None or version.status == VersionStatus.REJECTED:
            detail = version.error if version is not None else "not registered"
            raise click.ClickException(f"{name} cannot play: {clean(detail)}")
        if time.monotonic() > deadline:
            raise click.ClickException(f"{name} is still {version.status}: is a worker running?")
        time.sleep(1)


def _wait_for_tournament(tournament_id: int, deadline: float) -> None:
    """Print progress until every match of the tournament is done, then the standings."""
    from web.models import BotVersion, Tournament
    from web.services.tournaments import conclude, progress, standings

    shown = None
    while True:
        conclude(tournament_id)
        db.session.expire_all()
        tournament = db.session.get(Tournament, tournament_id)
        assert tournament is not None
        table = standings(tournament)
        counts = progress(tournament)
        if counts != shown:
            click.echo("progress: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
            shown = counts
        if str(tournament.status) == "finished":
            break
        if time.monotonic() > deadline:
            raise click.ClickException("the tournament is not finished yet; see the site")
        time.sleep(2)
    click.echo("standings:")
    for place, row in enumerate(table, start=1):
        version = db.session.get(BotVersion, row["version_id"])
        name = version.bot.name if version is not None else f"version {row['version_id']}"
        points, matches = row["points"], row["matches"]
        click.echo(f"{place:>3}. {name:<28} {points:6.1f} points in {matches} matches")
