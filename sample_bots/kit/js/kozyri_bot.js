// Starter kit for Kozyri Arena bots in JavaScript (Node, no npm packages).
//
// Subclass Bot, implement choose(), and call run(new MyBot()). The kit speaks protocol v1: it
// answers hello with ready, turns every request into a call to choose() and sends the answer,
// and exits on shutdown. stdout belongs to the protocol: log with log(), which writes to stderr.
// It asks the referee for observations as deltas (only what changed since the last one) and
// rebuilds the whole observation from them, so choose() sees exactly what the referee would send
// whole; set this.observations = "full" in your constructor to be sent every one whole instead.
// On the platform your bot is frozen between its turns (workers and child processes too): do
// all thinking inside choose(), and measure time from the request.
//
//   const { Bot, run } = require("kozyri_bot");
//   class First extends Bot { choose(observation, legalActions) { return 0; } }
//   run(new First());
"use strict";

const readline = require("readline");

const PROTOCOL_VERSION = 1;
const RANKS = "56789TJQKA";

/** Write a line to stderr (the referee keeps it with the match log and the replay). */
function log(...parts) {
  process.stderr.write(parts.join(" ") + "\n");
}

/** Rank of a card string: "TH" -> 10; the ace is 14. */
function rank(card) {
  return RANKS.indexOf(card[0]) + 5;
}

/** Suit letter of a card string: "TH" -> "H". */
function suit(card) {
  return card[1];
}

/** Does card beat top for a player whose own trump suit is trump? */
function beats(card, top, trump) {
  if (suit(card) === suit(top)) return rank(card) > rank(top);
  return trump != null && suit(card) === trump;
}

class Bot {
  constructor() {
    this.name = null; // sent in ready
    this.observations = Bot.observations; // "delta" (rebuilt by the kit) or "full"
    this.kept = {}; // the last whole observation, which the next delta builds on
    this.hello = {};
    this.seat = 0;
    this.debug = null; // set in choose() to attach a note to the answer
  }
  onHello(hello) {}
  /** Return an index into legalActions or one of its action objects. */
  choose(observation, legalActions) {
    throw new Error("choose() is not implemented");
  }
  onError(message) {
    log("referee:", message.status, message.message);
  }
  onDealEnd(message) {}
  onMatchEnd(message) {}
}

Bot.observations = "delta";

/**
 * Bring observation (the last one received, or {}) up to date with delta, in place: keys in
 * drop go, keys in set take their new value, lists in append grow by the items given.
 */
function applyDelta(observation, delta) {
  for (const key of delta.drop || []) delete observation[key];
  Object.assign(observation, delta.set || {});
  for (const [key, items] of Object.entries(delta.append || {})) {
    const list = observation[key];
    for (const item of items) list.push(item);
  }
  return observation;
}

/**
 * The whole observation a request or deal_end carries, whole or as a delta. The bot gets a copy
 * (its top-level arrays and objects too), so changing it cannot spoil the kit's own.
 */
function observationOf(bot, message) {
  if ("delta" in message) applyDelta(bot.kept, message.delta);
  else bot.kept = message.observation;
  const copy = {};
  for (const [key, value] of Object.entries(bot.kept)) {
    if (Array.isArray(value)) copy[key] = value.slice();
    else if (value !== null && typeof value === "object") copy[key] = { ...value };
    else copy[key] = value;
  }
  return copy;
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function answer(bot, request) {
  bot.debug = null;
  request.observation = observationOf(bot, request);
  const choice = bot.choose(request.observation, request.legal_actions);
  const reply = { type: "action", id: request.id };
  if (Number.isInteger(choice)) reply.index = choice;
  else reply.action = choice;
  if (bot.debug) reply.debug = String(bot.debug);
  return reply;
}

function ready(bot) {
  const message = { type: "ready", protocol: PROTOCOL_VERSION };
  if (bot.name) message.name = bot.name;
  if (bot.observations !== "full") message.observations = bot.observations;
  return message;
}

/** React to one referee message; false when the bot should exit. */
function handle(bot, message) {
  switch (message.type) {
    case "hello":
      bot.hello = message;
      bot.seat = message.seat;
      bot.onHello(message);
      send(ready(bot));
      break;
    case "request":
      send(answer(bot, message));
      break;
    case "error":
      bot.onError(message);
      break;
    case "deal_end":
      message.observation = observationOf(bot, message);
      bot.onDealEnd(message);
      break;
    case "match_end":
      bot.onMatchEnd(message);
      break;
    case "shutdown":
      return false;
  }
  return true;
}

/** The protocol loop: one JSON message per stdin line until shutdown or end of input. */
function run(bot) {
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  let number = 0;
  lines.on("line", (line) => {
    number += 1;
    if (line.trim() && !handle(bot, parse(line, number))) {
      lines.close();
      process.exit(0);
    }
  });
}

/** One line of input as a message; a malformed one ends the bot, saying what and where. */
function parse(line, number) {
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    malformed(number, error.message);
  }
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    malformed(number, "not a JSON object");
  }
  return message;
}

function malformed(number, why) {
  log(`kozyri kit: malformed message from the referee (line ${number}): ${why}`);
  process.exit(1);
}

module.exports = { Bot, run, log, rank, suit, beats, applyDelta, PROTOCOL_VERSION };
