// Starter kit for Kozyri Arena bots in JavaScript (Node, no npm packages).
//
// Subclass Bot, implement choose(), and call run(new MyBot()). The kit speaks protocol v1: it
// answers hello with ready, turns every request into a call to choose() and sends the answer,
// and exits on shutdown. stdout belongs to the protocol: log with log(), which writes to stderr.
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

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function answer(bot, request) {
  bot.debug = null;
  const choice = bot.choose(request.observation, request.legal_actions);
  const reply = { type: "action", id: request.id };
  if (Number.isInteger(choice)) reply.index = choice;
  else reply.action = choice;
  if (bot.debug) reply.debug = String(bot.debug);
  return reply;
}

/** React to one referee message; false when the bot should exit. */
function handle(bot, message) {
  switch (message.type) {
    case "hello":
      bot.hello = message;
      bot.seat = message.seat;
      bot.onHello(message);
      send(bot.name ? { type: "ready", protocol: PROTOCOL_VERSION, name: bot.name }
                    : { type: "ready", protocol: PROTOCOL_VERSION });
      break;
    case "request":
      send(answer(bot, message));
      break;
    case "error":
      bot.onError(message);
      break;
    case "deal_end":
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
  lines.on("line", (line) => {
    if (line.trim() && !handle(bot, JSON.parse(line))) {
      lines.close();
      process.exit(0);
    }
  });
}

module.exports = { Bot, run, log, rank, suit, beats, PROTOCOL_VERSION };
