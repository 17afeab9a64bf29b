// Svoi Kozyri with tricks: each seat picks a secret trump, revealed when first used (or never).

import { trumpBadge } from "../adapters/beating.js";
import {
  dealSummary,
  drawTricks,
  TRICK_MARKS,
  trickBadges,
  trickBoundary,
} from "../adapters/tricktaking.js";

function trumpOf(view, seat) {
  return view.trumps?.[seat] ?? view.revealed?.[seat] ?? null;
}

function badges(view) {
  return (seat) => {
    const suit = trumpOf(view, seat);
    const badge = trumpBadge(suit);
    if (suit && !view.revealed?.[seat]) badge.className += " secret";
    return [badge, ...trickBadges(view, seat)];
  };
}

export default {
  mount() {},
  render(view, ctx) {
    const rows = [];
    if (view.phase) rows.push(["Phase", view.phase.replaceAll("_", " ")]);
    if (view.target) rows.push(["Target", `${view.target} pts`]);
    if (view.teams) rows.push(["Teams", view.teams.map((t) => t.join("+")).join(" vs ")]);
    drawTricks(view, ctx, badges(view), rows);
  },
  boundary: trickBoundary,
  markLabels: TRICK_MARKS,
  dealSummary,
  unmount() {},
};
