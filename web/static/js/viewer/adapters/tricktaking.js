// The trick-taking games share a table: hands around, the trick in the
// middle with each card laid towards the seat that played it, the last trick kept in view until
// the next card is led. No game is named here: "tricks" is the view key and the plain noun.

import { dealRows, drawHands, drawTurn, num, visibleHands } from "./common.js";

/** Draw the trick in play, or the last finished one (its winner's card marked). */
export function drawTrick(table, view) {
  const zone = table.zone("trick");
  const trick = view.trick ?? { cards: [] };
  let plays = trick.cards ?? [];
  let winner = trick.winner;
  const finished = plays.length === 0 && (view.tricks ?? []).length > 0;
  if (finished) {
    const last = view.tricks.at(-1);
    plays = last.cards;
    winner = last.winner;
  }
  zone.classList.toggle("finished", finished);
  table.showTrick(
    zone,
    plays.map(({ seat, card, trump }) => ({
      seat,
      card,
      className: [trump ? "trumped" : "", seat === winner ? "winner" : ""].join(" "),
    })),
  );
}

/** Draw a trick game's frame; ``badges(seat)`` gives each seat's badges, ``rows`` extra info. */
export function drawTricks(view, ctx, badges, rows) {
  const { table, players, names } = ctx;
  drawHands(table, visibleHands(view, players));
  drawTrick(table, view);
  drawTurn(table, view);
  for (let seat = 0; seat < players; seat += 1) {
    table.setBadges(seat, badges(seat));
    table.setNote(seat, ctx.notes?.[seat] ?? "");
  }
  table.setInfo([...dealRows(view, names), ...rows]);
}

/** Badges for tricks won and points, present in both trick games. */
export function trickBadges(view, seat) {
  const list = [{ text: `${view.tricks_won?.[seat] ?? 0} tricks`, className: "taken" }];
  list.push({ text: `${num(view.scores?.[seat] ?? 0)} pts`, className: "score" });
  return list;
}

/** The end of the previous deal: the points each seat took from it. */
export function dealSummary(view, names) {
  const last = view.last_deal;
  if (!last?.points) return "";
  const parts = last.points.map((points, seat) => `${names[seat]} ${num(points)}`);
  return `Deal ${last.deal + 1}: ${parts.join(", ")}`;
}

/** How the trick-taking adapters word their boundary marks (``markLabels``). */
export const TRICK_MARKS = { trick: "trick won" };

/** A trick ends when a seat's trick count grows. */
export function trickBoundary(before, view) {
  const sum = (v) => (v?.tricks_won ?? []).reduce((a, b) => a + b, 0);
  return before && view.deal === before.deal && sum(view) > sum(before) ? "trick" : null;
}
