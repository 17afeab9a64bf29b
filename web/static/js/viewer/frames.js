// The frames of one perspective, loaded a window at a time: the window a reader looks at first,
// the rest in the background, and (while the match runs) what is new since the last frame.

import { normalise } from "./source.js";

/** How many frames one window holds: small enough that a long match opens at once. */
export const CHUNK = 200;

/** How long background windows wait after a jump (a reader scrubbing jumps again soon). */
const QUIET_MS = 1000;

/** The longest wait before a window that failed to load is asked for again. */
const RETRY_MAX_MS = 30000;

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
    this.wanted = []; // windows a reader jumped to, the latest first
    this.filling = false; // whether every window is to be loaded (else only those wanted)
    this.pumping = null; // the loop loading windows one at a time, while it runs
    this.jumped = -Infinity; // when the reader last jumped to a frame not here yet
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

  /**
   * Make sure frame ``index`` has arrived: a jump. The frame alone is asked for at once (one
   * frame is served quickly, however long the match), and its window goes to the head of the
   * queue of windows to load; background windows wait until the reader has stopped jumping for
   * ``QUIET_MS``, so that they do not slow the server's answer to the next jump. Resolves when
   * the frame is here. With ``peek`` false (opening the viewer) its window is asked for at once.
   */
  async ensure(index, { peek = true } = {}) {
    index = Math.max(0, index);
    if (this.has(index)) return;
    this.jumped = performance.now();
    const number = Math.floor(index / CHUNK);
    this.wanted = [number, ...this.wanted.filter((n) => n !== number)];
    if (this.pending.has(number)) return this.pending.get(number); // on its way already
    if (!peek) return this.#chunk(number);
    try {
      this.#take(await this.source.window(this.seat, { start: index, stop: index + 1 }));
    } catch (error) {
      await this.#pump(); // its window may still bring it
      if (!this.has(index)) throw error;
      return;
    }
    this.#pump(); // the rest of its window, after the frame itself
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
    if (!this.total) return false; // nothing known yet
    const stop = Math.min((number + 1) * CHUNK, this.total);
    for (let i = number * CHUNK; i < stop; i += 1) if (!this.has(i)) return false;
    return true;
  }

  /** The next window to load: the one jumped to last, else the first not here yet. */
  #next() {
    this.wanted = this.wanted.filter((number) => !this.#complete(number));
    if (this.wanted.length) return this.wanted[0];
    if (!this.filling || performance.now() - this.jumped < QUIET_MS) return null;
    for (let number = 0; number * CHUNK < this.total; number += 1)
      if (!this.#complete(number)) return number;
    return null;
  }

  /**
   * Load windows one at a time (so a heavy window never competes with another for the server)
   * until none is wanted; the running loop is shared. Resolves when it stops.
   */
  #pump() {
    if (!this.pumping) {
      // cleared in a ``then`` (never in the loop itself): a loop with nothing to load ends before
      // its promise is even stored, and clearing there would leave a settled promise for good
      const run = this.#pumpLoop().then(() => {
        if (this.pumping === run) this.pumping = null;
      });
      this.pumping = run;
    }
    return this.pumping;
  }

  async #pumpLoop() {
    try {
      for (let number = this.#next(); number !== null; number = this.#next()) {
        if (this.stopped) return;
        await this.#chunk(number);
      }
    } catch (error) {
      this.failure = error; // fill() reports it; a jump asks again
    }
  }

  /**
   * Fetch every window not yet here, one after another, until done or ``stop()``. A window that
   * fails to load (a dropped connection, a busy server) is asked for again, after 1 s, then
   * twice as long each time up to ``RETRY_MAX_MS``; ``onFailure(error)`` is told of each failure.
   */
  async fill(onFailure = () => {}) {
    this.filling = true;
    let backoff = 0;
    while (!this.stopped && this.#missing()) {
      // wait for the reader to stop jumping; never spin without giving the page a turn
      const quiet = Math.ceil(this.jumped + QUIET_MS - performance.now());
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, quiet, backoff)));
      this.failure = null;
      await this.#pump();
      if (this.failure && !this.stopped) {
        onFailure(this.failure);
        backoff = Math.min(RETRY_MAX_MS, backoff ? 2 * backoff : 1000);
      } else {
        backoff = 0;
      }
    }
  }

  #missing() {
    for (let number = 0; number * CHUNK < this.total; number += 1)
      if (!this.#complete(number)) return true;
    return !this.total;
  }

  /** Fetch the frames after the last one known (a running match). */
  async poll() {
    if (!this.total) return this.ensure(0);
    const page = await this.source.window(this.seat, { since: this.total - 1 });
    this.#take(page);
  }

  /** A frame pushed by the live stream (the frames before it may still be on their way). */
  push(raw) {
    this.#take({ total: Math.max(this.total, raw.index + 1), live: true, frames: [raw] });
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
