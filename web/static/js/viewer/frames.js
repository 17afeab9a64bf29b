// The frames of one perspective, loaded a window at a time: the window a reader looks at first,
// the rest in the background, and (while the match runs) what is new since the last frame.

import { normalise } from "./source.js";

/** How many frames one window holds: small enough that a long match opens at once. */
export const CHUNK = 200;

export class FrameStore {
  /**
   * @param source where the frames come from (``window(seat, query)``)
   * @param seat the perspective (null: the spectator)
   * @param onChange called with ``(start, stop)`` whenever frames arrive (``reset`` if all changed)
   */
  constructor(source, seat, onChange) {
    this.source = source;
    this.seat = seat;
    this.onChange = onChange;
    this.frames = []; // sparse until every window has arrived
    this.total = 0;
    this.live = source.live;
    this.pending = new Map(); // chunk number -> its request
    this.stopped = false;
  }

  /** Whether frame ``index`` has arrived. */
  has(index) {
    return this.frames[index] !== undefined;
  }

  /** The index of the last frame known so far. */
  get last() {
    return Math.max(0, this.total - 1);
  }

  /** Make sure the window holding frame ``index`` has arrived. */
  async ensure(index) {
    if (!this.has(index)) await this.#chunk(Math.floor(Math.max(0, index) / CHUNK));
  }

  #chunk(number) {
    if (!this.pending.has(number)) {
      const start = number * CHUNK;
      const request = this.source
        .window(this.seat, { start, stop: start + CHUNK })
        .then((page) => this.#take(page))
        .finally(() => this.pending.delete(number));
      this.pending.set(number, request);
    }
    return this.pending.get(number);
  }

  #complete(number) {
    const stop = Math.min((number + 1) * CHUNK, this.total);
    for (let i = number * CHUNK; i < stop; i += 1) if (!this.has(i)) return false;
    return true;
  }

  /** Fetch every window not yet here, one after another, until done or ``stop()``. */
  async fill() {
    for (let number = 0; number * CHUNK < this.total; number += 1) {
      if (this.stopped) return;
      if (!this.#complete(number)) await this.#chunk(number);
    }
  }

  /** Fetch the frames after the last one known (a running match). */
  async poll() {
    if (!this.total) return this.ensure(0);
    const page = await this.source.window(this.seat, { since: this.total - 1 });
    this.#take(page);
  }

  stop() {
    this.stopped = true;
  }

  #take(page) {
    if (this.stopped) return;
    this.live = page.live;
    if (page.total < this.total) {
      // the running match was restarted: what was shown is gone
      this.frames = [];
      this.total = page.total;
      this.onChange?.(0, page.total, true);
    }
    this.total = Math.max(this.total, page.total);
    for (const raw of page.frames) this.frames[raw.index] = normalise(raw, this.seat);
    if (this.frames.length < this.total) this.frames.length = this.total;
    if (page.frames.length) {
      const first = page.frames[0].index;
      this.onChange?.(first, page.frames.at(-1).index + 1, false);
    }
  }
}
