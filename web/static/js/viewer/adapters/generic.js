// The fallback for a game without an adapter of its own: hands, scores and the public history.

import { dealRows, drawHands, drawTurn, num, visibleHands } from "./common.js";

export default {
  mount() {},
  render(view, ctx) {
    const { table, players, names } = ctx;
    drawHands(table, visibleHands(view, players));
    drawTurn(table, view);
    for (let seat = 0; seat < players; seat += 1) {
      const score = view.scores?.[seat];
      table.setBadges(
        seat,
        score === undefined ? [] : [{ text: `${num(score)} pts`, className: "score" }],
      );
    }
    table.setInfo(dealRows(view, names));
  },
  unmount() {},
};
