// Where a viewer's data comes from: the site's API (the replay, and per-step frames a window at
// a time, one seat's view fetched when first asked for), or a document embedded in a standalone
// page. Both answer ``window(seat, query)`` with ``{total, live, frames}`` (raw frames).

/** The most frames the API gives in one answer. */
export const MAX_WINDOW = 500;

/** One frame as the player uses it: the step that led here and the chosen perspective's view. */
export function normalise(frame, seat) {
  let view;
  if (seat === null) view = frame.spectator ?? frame.public;
  else view = frame.seat ?? frame.seats?.[seat] ?? frame.public;
  return { index: frame.index, event: frame.event ?? null, view, public: frame.public ?? view };
}

/**
 * A replay document with its ``seed`` whole. Seeds have 64 bits, more than a JavaScript number
 * holds exactly, so a seed beyond 2**53 is kept as its decimal digits (a string); ``replayJson``
 * (export.js) writes it back as a number.
 */
export function parseReplay(text) {
  return JSON.parse(text, function keepSeed(key, value, context) {
    if (key !== "seed" || typeof value !== "number" || Number.isSafeInteger(value)) return value;
    return context?.source ?? /"seed"\s*:\s*(\d+)/.exec(text)?.[1] ?? value;
  });
}

async function getText(url) {
  const response = await fetch(url, { credentials: "same-origin", cache: "no-cache" });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error?.message ?? message;
    } catch {
      // not a JSON error body: the status line says enough
    }
    throw new Error(message);
  }
  return response.text();
}

async function getJson(url) {
  return JSON.parse(await getText(url));
}

/** ``url`` with the seat (if any) and the window's query arguments. */
function frameUrl(url, seat, query) {
  const target = new URL(url, window.location.href);
  if (seat !== null) target.searchParams.set("seat", String(seat));
  for (const [key, value] of Object.entries(query)) target.searchParams.set(key, String(value));
  return target.toString();
}

/** Replay and frames of a match served by the site, and its live stream while it runs. */
export class HttpSource {
  constructor(replayUrl, framesUrl, liveUrl) {
    this.replayUrl = replayUrl;
    this.framesUrl = framesUrl;
    this.liveUrl = liveUrl;
    this.live = false;
  }

  /**
   * Follow the running match from ``seat``'s view after frame ``since``: ``onFrame(raw)`` for
   * each new frame, ``onEnd()`` when it is over, ``onFail()`` if no stream can be had (no
   * EventSource, a server without a feed, too many streams): the caller polls instead.
   * Returns a function that stops following.
   */
  follow(seat, since, { onFrame, onEnd, onFail }) {
    if (!this.liveUrl || typeof EventSource === "undefined") {
      onFail();
      return () => {};
    }
    const url = new URL(this.liveUrl, window.location.href);
    if (seat !== null) url.searchParams.set("seat", String(seat));
    if (since >= 0) url.searchParams.set("since", String(since));
    const stream = new EventSource(url.toString());
    stream.addEventListener("frame", (e) => onFrame(JSON.parse(e.data)));
    stream.addEventListener("end", () => {
      stream.close();
      onEnd();
    });
    // A dropped connection is retried by the browser (from the last frame it had); a refused
    // one closes the stream for good.
    stream.addEventListener("error", () => {
      if (stream.readyState === EventSource.CLOSED) onFail();
    });
    return () => stream.close();
  }

  /** The replay document (a partial, public one while the match runs). */
  async replay() {
    this.document = parseReplay(await getText(this.replayUrl));
    this.live = Boolean(this.document.live);
    return this.document;
  }

  /** Raw frames seen from ``seat``: ``query`` is ``{start, stop}`` or ``{since}``. */
  async window(seat, query) {
    const body = await getJson(frameUrl(this.framesUrl, seat, query));
    const data = body.data ?? body;
    this.live = Boolean(data.live);
    return { total: data.total ?? data.frames.length, live: this.live, frames: data.frames };
  }

  /** Every raw spectator frame, for a standalone export (window after window). */
  async rawFrames() {
    const all = [];
    let total = 1;
    while (all.length < total) {
      const page = await this.window(null, { start: all.length, stop: all.length + MAX_WINDOW });
      total = page.total;
      if (!page.frames.length) break;
      all.push(...page.frames);
    }
    return all;
  }
}

/** A replay and its frames embedded in the page (a standalone export, or a test fixture). */
export class InlineSource {
  constructor(data) {
    this.document = data.replay;
    this.raw = data.frames;
    this.live = false;
  }

  async replay() {
    return this.document;
  }

  async window(_seat, query) {
    const start = query.since !== undefined ? query.since + 1 : (query.start ?? 0);
    const stop = query.stop ?? start + MAX_WINDOW;
    return { total: this.raw.length, live: false, frames: this.raw.slice(start, stop) };
  }

  async rawFrames() {
    return this.raw;
  }
}
