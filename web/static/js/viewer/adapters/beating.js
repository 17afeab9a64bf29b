// The beating games share a table: hands around, one face-up pile in the
// middle whose top card is the one to beat, and each seat's trump suit by its name.

import { dealRows, drawHands, drawTurn, num, suitList, visibleHands, withKnown } from "./common.js";

const MODES = {
  lead: "lead a card",
  respond: "beat or pick up",
  second: "lay a second card",
  lead_after_exit: "lead after going out",
  choose_trump: "choose trumps",
  choose: "choose suits",
  over: "match over",
};

/** Draw the pile: cards bottom to top, overlapping, the top one raised. */
export function drawPile(table, pile) {
  const items = pile.map((card, i) => ({
    key: card,
    card,
    className: i === pile.length - 1 ? "on-top" : "",
  }));
  const zone = table.zone("pile");
  zone.classList.toggle("empty", pile.length === 0);
  table.showCards(zone, items);
}

/** Draw a beating game's frame; ``badges(seat)`` adds game-specific badges. */
export function drawBeating(view, ctx, badges) {
  const { table, players, names } = ctx;
  const hands = withKnown(visibleHands(view, players), view.known);
  drawHands(table, hands, view.known ?? []);
  drawPile(table, view.pile ?? []);
  const out = (view.active ?? []).flatMap((on, seat) => (on ? [] : [seat]));
  drawTurn(table, view, out);
  for (let seat = 0; seat < players; seat += 1) {
    table.setBadges(seat, badges(seat));
    table.setNote(seat, ctx.notes?.[seat] ?? "");
  }
  const rows = dealRows(view, names);
  if (view.mode) rows.push(["To do", MODES[view.mode] ?? view.mode]);
  if (view.trumps) rows.push(["Trumps", suitList(view.trumps)]);
  const size = (view.pile ?? []).length;
  rows.push(["Pile", `${size} card${size === 1 ? "" : "s"}`]);
  table.setInfo(rows);
}

/** A badge with a seat's trump suit (a question mark while it is not known). */
export function trumpBadge(suit) {
  return suit
    ? { text: "trump ", suit, title: "this seat's trump suit", className: "trump" }
    : { text: "trump ?", title: "trump not chosen yet", className: "trump" };
}

export { num };
