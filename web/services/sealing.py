"""Which matches keep their hidden cards hidden, and from whom: the one check every reader goes
through (match pages, the API, downloads, exports and ``arena fetch``).

Some matches share one deal: the seat rotations of a mirrored ladder table (one
``mirror_group``) and the rotations of a tournament table (one tournament, one deal seed). What
one of them shows tells every hand of the others, so while any of them is queued or running the
whole group is *sealed*: nobody sees the seed, the replay, the frames or a download of any member,
finished or not, except that each seat's owner still sees their own seat's view. A member that
fails or is cancelled counts as done: it will not be played again on that deal, so it does not
hold the others back.

A member played again after its group opened (an admin's requeue of a failed member) would
play a deal everyone has seen: it is given a fresh seed and leaves the group first.

A match outside such a group is *hidden* only while it runs: onlookers follow its public
observations, and its seed and full views open when it finishes.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, and_, exists, or_, select

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


def reason(match: Match) -> str | None:
    """Why ``match`` is sealed, in words for its page and API errors; None if it is not."""
    return explain(match) if sealed(match) else None


def explain(match: Match) -> str:
    """The words saying why ``match``'s group is sealed (whether or not it is now)."""
    if match.kind == MatchKind.TOURNAMENT:
        group = "tournament table (every seat rotation of this deal)"
    else:
        group = "mirrored group (every seat rotation of this deal)"
    return (
        f"the replay opens when the {group} finishes: until then its seed, replay and views "
        "stay sealed, except each seat's own view for that seat's owner"
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
