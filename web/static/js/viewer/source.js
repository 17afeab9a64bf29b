// Where a viewer's data comes from: the site's API (replay and per-step frames, one seat's view
// fetched on demand), or a document embedded in a standalone page.

/** One frame as the player uses it: the step that led here and the chosen perspective's view. */
function normalise(frame, seat) {
  let view;
  if (seat === null) view = frame.spectator ?? frame.public;
  else view = frame.seat ?? frame.seats?.[seat] ?? frame.public;
  return { index: frame.index, event: frame.event ?? null, view, public: frame.public ?? view };
}

async function getJson(url) {
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
  return response.json();
}

function withSeat(url, seat) {
  if (seat === null) return url;
  const target = new URL(url, window.location.href);
  target.searchParams.set("seat", String(seat));
  return target.toString();
}

/** Replay and frames of a match served by the site. */
export class HttpSource {
  constructor(replayUrl, framesUrl) {
    this.replayUrl = replayUrl;
    this.framesUrl = framesUrl;
    this.cache = new Map();
    this.raw = null;
    this.live = false;
  }

  /** The replay document (a partial, public one while the match runs). */
  async replay() {
    this.document = await getJson(this.replayUrl);
    this.live = Boolean(this.document.live);
    return this.document;
  }

  /** The frames seen from ``seat`` (null: the spectator's); refetched while the match runs. */
  async frames(seat, fresh = false) {
    const key = seat === null ? "spectator" : String(seat);
    if (!fresh && this.cache.has(key)) return this.cache.get(key);
    const body = await getJson(withSeat(this.framesUrl, seat));
    const data = body.data ?? body;
    this.live = Boolean(data.live);
    if (seat === null) this.raw = data.frames;
    const frames = data.frames.map((f) => normalise(f, seat));
    this.cache.set(key, frames);
    return frames;
  }

  /** The raw spectator frames, for a standalone export. */
  async rawFrames() {
    if (!this.raw) await this.frames(null);
    return this.raw;
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

  async frames(seat) {
    return this.raw.map((f) => normalise(f, seat));
  }

  async rawFrames() {
    return this.raw;
  }
}
