"""Which matches keep their hidden cards hidden, and from whom: the one check every reader goes
through (match pages, the API, downloads, exports and ``arena fetch``).

Some matches share one deal: the seat rotations of a mirrored ladder table (one
``mirror_group``) and the rotations of a tournament table (one tournament, one deal seed). What
one of them shows tells every hand of the others, so while any of them is queued or running the
whole group is *sealed*: nobody sees the seed, the whole replay, a hidden card or a download of
any member, finished or not. What everyone may see of each member meanwhile is its public view
(the cards played, the pick-ups, the bets: what a spectator at the table sees), as it is played,
and each seat's owner also their own seat's view. A member that
fails or is cancelled counts as done: it will not be played again on that deal, so it does not
hold the others back.

A member played again after its group opened (an admin's requeue of a failed member) would
play a deal everyone has seen: it is given a fresh seed and leaves the group first.

A match outside such a group is *hidden* only while it runs: onlookers follow its public
observations, and its seed and full views open when it finishes.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, and_, exists, func, or_, select

from web.extensions import db
from web.models import Match, MatchKind, MatchStatus
from web.services.seeds import new_seed

PENDING = (MatchStatus.QUEUED, MatchStatus.RUNNING)


def _shares_deal(match: Match) -> ColumnElement[bool] | None:
    """The matches dealt the same cards as ``match`` (itself included); None if it has none."""
    if match.mirror_group:
        return Match.mirror_group == match.mirror_group
    if match.tournament_id is not None:
        return and_(Match.tournament_id == match.tournament_id, Match.seed == match.seed)
    return None


def group_pending(match: Match) -> bool:
    """Whether ``match`` shares its deal with a match (or is one) still queued or running."""
    siblings = _shares_deal(match)
    if siblings is None:
        return False
    query = select(exists().where(siblings, Match.status.in_(PENDING)))
    return bool(db.session.scalar(query))


def sealed(match: Match) -> bool:
    """Whether onlookers are shut out of ``match`` entirely (its deal group is not done)."""
    return group_pending(match)


def hidden(match: Match) -> bool:
    """Whether anything that reveals hidden cards (seed, full views, other seats' actions) must
    be withheld from everyone but each seat's owner: the match is unfinished or sealed."""
    return match.status != MatchStatus.FINISHED or group_pending(match)


def explain(match: Match) -> str:
    """The words saying why ``match``'s group is sealed (whether or not it is now)."""
    group = "tournament table" if match.kind == MatchKind.TOURNAMENT else "mirrored group"
    return (
        f"the hands open when the {group} (every seat rotation of this deal) is done: until "
        "then its seed, replay and hidden cards stay sealed, and only its public moves show"
    )


def progress(match: Match) -> tuple[int, int]:
    """How many of the matches sharing ``match``'s deal are done, and how many there are."""
    siblings = _shares_deal(match)
    if siblings is None:
        return (1, 1) if match.status not in PENDING else (0, 1)
    done = func.count().filter(Match.status.not_in(PENDING))
    row = db.session.execute(select(done, func.count()).where(siblings)).one()
    return int(row[0]), int(row[1])


def note(match: Match) -> str | None:
    """What a sealed ``match``'s page and replay say of it, with how far its group is (e.g.
    "finished; hands open when the 4 rotations of this deal are done: 2 of 4"); None if it is
    not sealed."""
    if not sealed(match):
        return None
    done, total = progress(match)
    state = "finished" if match.status == MatchStatus.FINISHED else str(match.status)
    return (
        f"{state}; hands open when the {total} rotations of this deal are done: {done} of "
        f"{total} (until then its seed, replay and hidden cards stay sealed; its public moves "
        "show as they are played)"
    )


def fresh_deal_if_opened(match: Match) -> bool:
    """Before a failed or cancelled ``match`` is played again: if its group has opened (a
    member finished and none is queued or running), its deal is public, so it gets a fresh seed
    and leaves the group. Returns whether it did. Does not commit."""
    siblings = _shares_deal(match)
    if siblings is None or group_pending(match):
        return False
    finished = exists().where(siblings, Match.id != match.id, Match.status == MatchStatus.FINISHED)
    if not db.session.scalar(select(finished)):
        return False
    match.seed, match.mirror_group = new_seed(), None
    return True


def hidden_ids(matches: Iterable[Match]) -> set[int]:
    """The ids among ``matches`` that are ``hidden``, in at most one query (for lists)."""
    rows = list(matches)
    out = {m.id for m in rows if m.status != MatchStatus.FINISHED}
    groups = {m.mirror_group for m in rows if m.mirror_group and m.id not in out}
    deals = {
        (m.tournament_id, m.seed)
        for m in rows
        if not m.mirror_group and m.tournament_id is not None and m.id not in out
    }
    if not groups and not deals:
        return out
    conditions: list[ColumnElement[bool]] = [Match.mirror_group.in_(groups)] if groups else []
    conditions += [and_(Match.tournament_id == t, Match.seed == s) for t, s in deals]
    pending = db.session.execute(
        select(Match.mirror_group, Match.tournament_id, Match.seed).where(
            or_(*conditions), Match.status.in_(PENDING)
        )
    ).all()
    pending_groups = {g for g, _, _ in pending if g}
    pending_deals = {(t, s) for g, t, s in pending if not g and t is not None}
    for m in rows:
        if m.mirror_group in pending_groups or (
            not m.mirror_group and (m.tournament_id, m.seed) in pending_deals
        ):
            out.add(m.id)
    return out
