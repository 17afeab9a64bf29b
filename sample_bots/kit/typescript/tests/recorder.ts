// A bot for the kit's tests: answers the last legal action, and logs what it was given.
import { Action, Bot, DealEnd, Observation, log, run } from "kozyri_bot";

class Recorder extends Bot {
  constructor() {
    super();
    this.name = "tést";
  }

  choose(observation: Observation, legalActions: Action[]): number {
    const cards = legalActions.map((action) => action.card ?? "-").join(",");
    log(`request seat=${this.seat} hand=${observation.hand.join(",")} cards=${cards}`);
    observation.hand.push("spoilt"); // the bot's copy: the kit's stays whole
    this.debug = 'say "hi"';
    return legalActions.length - 1;
  }

  onDealEnd(message: DealEnd): void {
    log(`deal_end ${JSON.stringify(message.observation)}`);
  }
}

run(new Recorder());
