// Helpers shared by the game adapters: hands as far as the viewer may see them, action text,
// score badges and the generic parts of the info box.

import { cardLabel, el, suitSpan, suitSymbol } from "../table.js";

/** Each seat's hand as the view shows it: card strings, or null for every hidden card. */
export function visibleHands(view, players) {
  const counts = view.hand_counts ?? [];
  const hands = [];
  for (let seat = 0; seat < players; seat += 1) {
    if (Array.isArray(view.hands?.[seat])) hands.push(view.hands[seat]);
    else if (view.seat === seat && Array.isArray(view.hand)) hands.push(view.hand);
    else hands.push(new Array(counts[seat] ?? 0).fill(null));
  }
  return hands;
}

/** Hidden hands with the cards the table knows shown face up first (``known`` per seat). */
export function withKnown(hands, known) {
  return hands.map((cards, seat) => {
    const hidden = cards.filter((c) => c === null).length;
    const seen = known?.[seat] ?? [];
    if (hidden === 0 || hidden < cards.length || seen.length === 0) return cards;
    const shown = seen.slice(0, hidden);
    return [...shown, ...new Array(hidden - shown.length).fill(null)];
  });
}

/** Draw every seat's hand; ``marked`` per seat lists cards to highlight. */
export function drawHands(table, hands, marked = []) {
  hands.forEach((cards, seat) => table.setHand(seat, cards, new Set(marked[seat] ?? [])));
}

const VERBS = {
  pick_up: "picks up",
  choose_trump: "chooses trumps",
  second: "adds",
  take: "takes",
};

/** A short description of a wire action or a public history event. */
export function describe(action) {
  if (!action) return "moves (hidden)";
  const type = String(action.type ?? "?");
  const parts = [VERBS[type] ?? type.replaceAll("_", " ")];
  if (action.secret) parts.push("(secret)"); // only its kind is public: see the game's rulebook
  if (action.card) parts.push(cardLabel(action.card));
  if (Array.isArray(action.cards)) parts.push(action.cards.map(cardLabel).join(" "));
  if (action.suit) parts.push(suitSymbol(action.suit));
  if (action.count !== undefined)
    parts.push(`${action.count} card${action.count === 1 ? "" : "s"}`);
  if (action.amount !== undefined) parts.push(String(action.amount));
  return parts.join(" ");
}

/** The events of ``view.history`` added since ``before`` (a new deal starts a fresh list). */
export function newEvents(before, view) {
  const now = view?.history ?? [];
  const old = before?.history ?? [];
  if (before && before.deal === view.deal && now.length >= old.length) return now.slice(old.length);
  return now;
}

/** The type of the step that led to ``view``: its action's, or the last new public event's. */
export function stepType(before, view, event) {
  return event?.action?.type ?? newEvents(before, view).at(-1)?.type ?? null;
}

/** Info-box rows common to most games: the deal and its dealer. */
export function dealRows(view, names) {
  const rows = [];
  if (view.deal !== undefined) {
    const total = view.deals ? ` of ${view.deals}` : "";
    rows.push(["Deal", `${view.deal + 1}${total}`]);
  }
  if (view.dealer !== undefined && view.dealer !== null) rows.push(["Dealer", names[view.dealer]]);
  return rows;
}

/** A node listing suits as coloured symbols. */
export function suitList(suits) {
  const span = el("span", "suit-list");
  for (const suit of suits) if (suit) span.append(suitSpan(suit));
  return span;
}

/** A node showing cards as small inline labels. */
export function cardList(cards) {
  const span = el("span", "card-list");
  for (const card of cards ?? []) {
    const red = card.endsWith("H") || card.endsWith("D");
    span.append(el("span", `mini ${red ? "red" : "black"}`, cardLabel(card)));
  }
  return span;
}

/** Mark the seat to move (none when the match is over) and the seats that are out. */
export function drawTurn(table, view, out = []) {
  const toMove = view.to_move ?? null;
  table.setTurn(toMove === -1 ? null : toMove, out);
}

/** The number shown in a seat's score badge, without noise (3.0 shows as 3). */
export function num(value) {
  if (typeof value !== "number") return String(value ?? "");
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/0+$/, "");
}
