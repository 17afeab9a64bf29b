// Challenge, random: any legal action, chosen uniformly.
"use strict";

const { Bot, run } = require("kozyri_bot");

class RandomBot extends Bot {
  constructor() {
    super();
    this.name = "random-js";
  }
  choose(observation, legalActions) {
    // Challenge asks for the same kinds of decisions as Svoi Kozyri (lead, beat, second, take),
    // so a random bot needs nothing game-specific: an index into legalActions is an answer.
    return Math.floor(Math.random() * legalActions.length);
  }
}

run(new RandomBot());
