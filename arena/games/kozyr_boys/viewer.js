// Kozyr Boys: a turned-up card names trumps, the two jacks of its colour are the bowers, and
// tricks score by the card points they hold.

import { cardList, suitList } from "../adapters/common.js";
import {
  dealSummary,
  drawTricks,
  TRICK_MARKS,
  trickBadges,
  trickBoundary,
} from "../adapters/tricktaking.js";

function badges(view) {
  return (seat) => {
    const list = trickBadges(view, seat);
    const points = view.card_points?.[seat];
    if (points !== undefined)
      list.splice(1, 0, { text: `${points} in tricks`, title: "card points this deal" });
    return list;
  };
}

export default {
  mount() {},
  render(view, ctx) {
    const rows = [];
    if (view.trumps) rows.push(["Trumps", suitList([view.trumps])]);
    if (view.turned) rows.push(["Turned", cardList([view.turned])]);
    if (view.bowers) rows.push(["Bowers", cardList(view.bowers)]);
    if (view.discards) rows.push(["Discards", cardList(view.discards)]);
    drawTricks(view, ctx, badges(view), rows);
  },
  boundary: trickBoundary,
  markLabels: TRICK_MARKS,
  dealSummary,
  unmount() {},
};
