// Svoi Kozyri, random: any legal action, chosen uniformly.
"use strict";

const { Bot, run } = require("kozyri_bot");

class RandomBot extends Bot {
  constructor() {
    super();
    this.name = "random-js";
  }
  choose(observation, legalActions) {
    // An index into legalActions is a complete answer.
    return Math.floor(Math.random() * legalActions.length);
  }
}

run(new RandomBot());
