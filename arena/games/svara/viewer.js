// Svara: three cards each, betting in the dark or after looking, a pot in the middle, and hands
// turned up only at a showdown.

import { dealRows, drawHands, drawTurn, num, visibleHands } from "../adapters/common.js";
import { el } from "../table.js";

const STATUS_CLASS = { folded: "done", out: "done", dark: "secret" };

/** Cards turned up at this round's showdown, per seat. */
function shown(view) {
  const cards = {};
  for (const event of view.history ?? []) {
    if (event.type !== "showdown") continue;
    for (const hand of event.hands ?? [])
      cards[hand.seat] = { cards: hand.cards, value: hand.value };
  }
  return cards;
}

function handsOf(view, players) {
  const hands = visibleHands(view, players);
  const turned = shown(view);
  return hands.map((cards, seat) =>
    turned[seat] && cards.every((c) => c === null) ? turned[seat].cards : cards,
  );
}

function valueOf(view, seat) {
  if (view.hand_values) return view.hand_values[seat];
  if (view.seat === seat) return view.hand_value;
  return shown(view)[seat]?.value ?? null;
}

function badges(view, seat) {
  const player = view.players?.[seat] ?? {};
  const list = [];
  if (player.status)
    list.push({ text: player.status, className: STATUS_CLASS[player.status] ?? "" });
  if (player.contribution)
    list.push({ text: `in pot ${player.contribution}`, title: "chips put into this pot" });
  const value = valueOf(view, seat);
  if (value !== null && value !== undefined)
    list.push({ text: `hand ${value}`, className: "tricks" });
  list.push({ text: `${num(view.balances?.[seat] ?? 0)} chips`, className: "score" });
  return list;
}

function drawPot(table, view) {
  const zone = table.zone("pot");
  const chips = el("div", "chips", `${view.pot ?? 0}`);
  chips.title = "chips in the pot";
  const stake = el("div", "stake", view.stake ? `stake ${view.stake}` : "no stake yet");
  zone.replaceChildren(el("div", "pot-label", "pot"), chips, stake);
}

/** Who won the previous deal's pot, and against which hands. */
function dealSummary(view, names) {
  const events = view.last_deal ?? [];
  const wins = events.filter((e) => e.type === "win" || e.type === "split");
  if (!wins.length) return "";
  const won = wins.map((e) => `${names[e.seat] ?? "?"} wins ${e.amount ?? ""}`.trim()).join(", ");
  return `Last deal: ${won}`;
}

export default {
  dealSummary,
  mount() {},
  render(view, ctx) {
    const { table, players, names } = ctx;
    drawHands(table, handsOf(view, players));
    drawPot(table, view);
    const out = (view.players ?? []).flatMap((p) =>
      ["folded", "out"].includes(p.status) ? [p.seat] : [],
    );
    drawTurn(table, view, out);
    for (let seat = 0; seat < players; seat += 1) {
      table.setBadges(seat, badges(view, seat));
      table.setNote(seat, ctx.notes?.[seat] ?? "");
    }
    const rows = dealRows(view, names);
    if (view.phase) rows.push(["Phase", view.phase]);
    if (view.svara) rows.push(["Svaras", String(view.svara)]);
    const summary = dealSummary(view, names);
    if (summary) rows.push(["Last deal", summary.replace("Last deal: ", "")]);
    if (view.limits)
      rows.push(["Limits", `ante ${view.limits.ante}, max ${view.limits.max_stake}`]);
    table.setInfo(rows);
  },
  boundary(before, view) {
    // The showdown is an event of the engine, not a decision: only the history shows it.
    const events = view.history ?? [];
    const grew = events.length > (before?.history ?? []).length;
    return grew && ["showdown", "win", "split"].includes(events.at(-1)?.type) ? "showdown" : null;
  },
  unmount() {},
};
