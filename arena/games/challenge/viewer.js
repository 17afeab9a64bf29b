// Challenge: two open hands, a trump and a side suit each; points for going out first.

import { drawBeating, num, trumpBadge } from "../adapters/beating.js";
import { stepType } from "../adapters/common.js";

function badges(view) {
  return (seat) => {
    const list = [trumpBadge(view.trumps?.[seat])];
    const side = view.side_suits?.[seat];
    if (side) list.push({ text: "side ", suit: side, title: "this seat's side suit" });
    list.push({ text: `${num(view.points?.[seat] ?? 0)} pts`, className: "score" });
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
    if (!last) return "";
    return last.winner === null || last.winner === undefined
      ? `Deal ${last.deal + 1} is drawn (${last.reason})`
      : `Deal ${last.deal + 1}: ${names[last.winner]} goes out first`;
  },
  boundary(before, view, event) {
    return stepType(before, view, event) === "take" ? "take" : null;
  },
  unmount() {},
};
