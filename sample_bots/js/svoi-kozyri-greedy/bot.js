// Svoi Kozyri, greedy: beat as cheaply as possible, shed low side-suit cards, pick up if stuck.
"use strict";

const { Bot, run, rank, suit } = require("kozyri_bot");

class GreedyBot extends Bot {
  constructor() {
    super();
    this.name = "greedy-js";
  }
  choose(observation, legalActions) {
    const trump = observation.trumps[observation.seat];
    // Own trumps are worth keeping (they beat anything of another suit), then low cards go first.
    const cost = (action) => (suit(action.card) === trump ? 100 : 0) + rank(action.card);
    const cheapest = (actions) => actions.reduce((a, b) => (cost(b) < cost(a) ? b : a));
    const beats = legalActions.filter((a) => a.type === "beat");
    if (beats.length) return cheapest(beats);
    const plays = legalActions.filter((a) => a.type === "lead" || a.type === "second");
    if (plays.length) return cheapest(plays);
    return legalActions[0]; // pick up (or a trump choice in the "choose" variant)
  }
}

run(new GreedyBot());
