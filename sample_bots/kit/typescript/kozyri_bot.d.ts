// Types for the Kozyri Arena kit, for bots in TypeScript.
//
// The kit itself is the JavaScript one (sample_bots/kit/js/kozyri_bot.js, found at run time
// through NODE_PATH); this file gives it, and the protocol it speaks, their types. Compile a
// bot together with it; the compiled bot requires "kozyri_bot" like a JavaScript bot:
//
//   tsc --strict --target es2020 --module commonjs --outDir out \
//       "$KOZYRI_KIT/typescript/kozyri_bot.d.ts" bot.ts
//   node out/bot.js
//
// Every wire message is described by its JSON schema in docs/schemas; observations differ per
// game (each rulebook lists its keys), so only the keys common to all games are named here.

declare module "kozyri_bot" {
  /** The protocol version the kit speaks. */
  export const PROTOCOL_VERSION: 1;

  /** A card: rank then suit, e.g. "TH" (ranks 5 6 7 8 9 T J Q K A, suits S H D C). */
  export type Card = string;

  /** A JSON value as the referee sends it. */
  export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

  /** A legal action, e.g. {type: "beat", card: "8H"} or {type: "pick_up"}. */
  export interface Action {
    type: string;
    card?: Card;
    [key: string]: unknown;
  }

  /** A public event of the deal's history. */
  export interface HistoryEvent {
    type: string;
    seat?: number;
    card?: Card;
    [key: string]: unknown;
  }

  /** Everything your seat may know (rebuilt whole by the kit when it asks for deltas). */
  export interface Observation {
    game: string;
    seat: number;
    deal?: number;
    dealer?: number;
    to_move?: number;
    hand: Card[];
    hand_counts: number[];
    history: HistoryEvent[];
    [key: string]: unknown;
  }

  export interface TimeControl {
    init_ms: number;
    move_ms: number;
    bank_ms: number;
    timeouts: boolean;
  }

  export interface Hello {
    type: "hello";
    protocol: number;
    game: string;
    players: number;
    seat: number;
    params: { [name: string]: Json };
    variant: string | null;
    time: TimeControl;
    name?: string;
  }

  export interface Request {
    type: "request";
    id: number;
    deal: number;
    observation: Observation;
    legal_actions: Action[];
    time_left_ms: number;
    move_ms: number;
  }

  export interface ErrorNotice {
    type: "error";
    id: number;
    status: "timeout" | "illegal_action" | "invalid_output" | "output_flood";
    message: string;
    strikes: number;
    max_strikes: number;
  }

  export interface DealEnd {
    type: "deal_end";
    deal: number;
    /** Your view right after the deal (rebuilt whole by the kit). */
    observation: Observation;
  }

  export interface MatchEnd {
    type: "match_end";
    result: { ranking: number[]; scores: number[]; detail?: { [key: string]: Json } };
    place: number;
    status: string;
  }

  /** What changed since the last observation (docs/protocol.md, "Observations as deltas"). */
  export interface Delta {
    set?: { [key: string]: Json };
    append?: { [key: string]: Json[] };
    drop?: string[];
  }

  /** Override choose(); the other hooks are optional. */
  export class Bot {
    /** Sent in ready; shown next to the manifest name. */
    name: string | null;
    /** "delta" (the kit rebuilds each observation) or "full". */
    observations: "delta" | "full";
    /** The hello message (set before onHello is called). */
    hello: Hello;
    seat: number;
    /** Set in choose() to attach a note to the answer (stored in the replay). */
    debug: string | null;
    onHello(hello: Hello): void;
    /** An index into legalActions, or one of its action objects. */
    choose(observation: Observation, legalActions: Action[]): number | Action;
    onError(message: ErrorNotice): void;
    onDealEnd(message: DealEnd): void;
    onMatchEnd(message: MatchEnd): void;
  }

  /** The protocol loop on stdin and stdout, until shutdown or end of input. */
  export function run(bot: Bot): void;
  /** Write a line to stderr (the referee keeps it with the match log and the replay). */
  export function log(...parts: unknown[]): void;
  /** "TH" -> 10; the ace is 14. */
  export function rank(card: Card): number;
  /** "TH" -> "H". */
  export function suit(card: Card): string;
  /** Does card beat top for a player whose own trump suit is trump? */
  export function beats(card: Card, top: Card, trump: string | null | undefined): boolean;
  /** Bring observation up to date with delta, in place, and return it. */
  export function applyDelta<T extends { [key: string]: unknown }>(observation: T, delta: Delta): T;
}
