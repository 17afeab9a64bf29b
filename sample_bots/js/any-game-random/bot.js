// Any game, random: plays every game of the platform from legal_actions alone.
//
// The choice is random but reproducible: the generator is seeded from the game and the seat, so
// the same match (same seed, same bots) plays out the same way again, which makes a replay from
// the server easy to repeat locally with `arena match --repeat`.
"use strict";

const { Bot, run, log } = require("kozyri_bot");

// A small seeded generator (mulberry32): Math.random() cannot be seeded.
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text) {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return h >>> 0;
}

class AnyGameRandom extends Bot {
  constructor() {
    super();
    this.name = "any-game-random-js";
    this.random = Math.random;
  }
  onHello(hello) {
    this.random = generator(hash(`${hello.game}/${hello.players}/${hello.seat}`));
    log(`playing ${hello.game} in seat ${hello.seat} of ${hello.players}`);
  }
  choose(observation, legalActions) {
    const index = Math.floor(this.random() * legalActions.length);
    this.debug = `${index + 1} of ${legalActions.length}`;
    return index;
  }
}

run(new AnyGameRandom());
