// Svoi Kozyri: every seat has its own trump suit; the fool of each deal scores a point.

import { drawBeating, num, trumpBadge } from "../adapters/beating.js";
import { stepType } from "../adapters/common.js";

function badges(view) {
  return (seat) => {
    const list = [trumpBadge(view.trumps?.[seat])];
    const fools = view.fools?.[seat] ?? 0;
    if (fools)
      list.push({ text: `fool ×${num(fools)}`, className: "penalty", title: "fool points" });
    if (view.active && !view.active[seat]) list.push({ text: "out", className: "done" });
    return list;
  };
}

export default {
  mount() {},
  render(view, ctx) {
    drawBeating(view, ctx, badges(view));
  },
  dealSummary(view, names) {
    const last = view.deal_results?.at(-1);
    return last ? `Deal ${last.deal + 1}: ${names[last.loser] ?? "nobody"} is the fool` : "";
  },
  boundary(before, view, event) {
    return stepType(before, view, event) === "pick_up" ? "pick-up" : null;
  },
  unmount() {},
};
