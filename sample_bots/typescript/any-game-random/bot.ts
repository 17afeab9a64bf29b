// Any game, random, in TypeScript: a uniformly random legal action in every game.
//
// The generator is seeded from the game and the seat, so the same match (same seed, same
// bots) plays out the same way again. The kit ("kozyri_bot": the JavaScript kit, typed by
// $KOZYRI_KIT/typescript/kozyri_bot.d.ts) does the protocol.
import { Action, Bot, Hello, Observation, log, run } from "kozyri_bot";

/** A small seeded generator (mulberry32): Math.random() cannot be seeded. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a text. */
function hash(text: string): number {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return h >>> 0;
}

class AnyGameRandom extends Bot {
  private random: () => number = Math.random;

  constructor() {
    super();
    this.name = "any-game-random-ts";
  }

  onHello(hello: Hello): void {
    this.random = generator(hash(`${hello.game}/${hello.players}/${hello.seat}`));
    log(`playing ${hello.game} in seat ${hello.seat} of ${hello.players}`);
  }

  choose(observation: Observation, legalActions: Action[]): number {
    const index = Math.floor(this.random() * legalActions.length);
    this.debug = `${index + 1} of ${legalActions.length}`;
    return index;
  }
}

run(new AnyGameRandom());
