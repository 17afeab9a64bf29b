// The move log beside the table (one line per step, grouped by deal, synced to the player) and
// the step details under it: who moved, how long the bot thought, and its debug and stderr text.

import { describe, newEvents } from "./adapters/common.js";
import { el } from "./table.js";

/** The text of the step that led to ``frames[i]``, from its action or, if hidden, its events. */
export function stepText(frames, i, adapter) {
  const { event, view } = frames[i];
  if (!event) return "cards dealt";
  const say = adapter.describe ?? describe;
  if (event.action) return say(event.action);
  if (i > 0 && !frames[i - 1]) return "moves (hidden)"; // its events show once that frame is here
  const mine = newEvents(frames[i - 1]?.view, view).filter((e) => e.seat === event.seat);
  return mine.length ? mine.map(say).join(", ") : "moves (hidden)";
}

function timeText(ms) {
  if (ms === null || ms === undefined) return "";
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
}

/** How many rows beyond the visible ones are kept in the log's DOM, above and below. */
const OVERSCAN = 24;

/** The first index in the sorted ``values`` holding a value of at least ``value``. */
function lowerBound(values, value) {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The move log: ``onPick(step)`` is called when a line is clicked. Lines arrive a window at a
 * time (``add``), in any order. The log keeps a place for every step from the start (a step not
 * here yet shows as a gap), and only the rows near the visible part of the list are in the DOM:
 * every line has the same height, and so does every deal heading, so a row's place is
 * arithmetic, and two empty rows stand in for the rows above and below. */
export class MoveLog {
  constructor(container, onPick) {
    this.list = el("ol", "rv-log");
    this.list.setAttribute("aria-label", "moves");
    this.list.addEventListener("click", (e) => {
      const line = e.target.closest("li[data-step], li[data-gap]");
      if (line) onPick(Number(line.dataset.step ?? line.dataset.gap));
    });
    // the list's scroll position is read and written only in an animation frame, where the
    // page is laid out once anyway: never in the middle of a jump's work, which would lay it
    // out twice
    this.wanted = null; // a scroll position to go to in the next frame
    this.scrolled = false; // whether the reader scrolled since the last frame
    this.framing = 0;
    this.list.addEventListener("scroll", () => {
      this.scrolled = true;
      this.#frame();
    });
    new ResizeObserver(() => {
      this.viewHeight = this.list.clientHeight;
      this.#render(false);
    }).observe(this.list);
    container.append(this.list);
    this.scrollTop = 0;
    this.viewHeight = 0;
    this.reset();
  }

  /** Empty the log. */
  reset() {
    this.frames = [];
    this.total = 0; // steps the log has a place for
    this.have = new Uint8Array(0); // 1 where a step's line has arrived
    this.count = 0; // how many have
    this.seps = []; // the steps with a deal heading before them, in order
    this.current = null;
    this.shown = null; // the steps whose rows are in the DOM: [first, stop)
    this.rows = new Map();
    this.above = this.#space();
    this.below = this.#space();
    this.list.replaceChildren(el("li", "rv-log-wait", "Loading the moves…"));
    this.list.setAttribute("aria-busy", "true");
    delete this.list.dataset.lines;
  }

  /** Rebuild the log for ``frames``. */
  fill(frames, names, adapter) {
    this.reset();
    this.add(frames, 1, frames.length, names, adapter);
  }

  /** Take the lines of frames ``start`` to ``stop - 1``, and the deal heading of the line after
   * them (it depends on the frame before it). Only the rows on view are drawn. */
  add(frames, start, stop, names, adapter) {
    Object.assign(this, { frames, names, adapter });
    this.#grow(frames.length - 1);
    const last = Math.min(stop, this.total);
    for (let i = Math.max(1, start); i <= last; i += 1) {
      if (!frames[i]) continue;
      if (i < stop && !this.have[i]) {
        this.have[i] = 1;
        this.count += 1;
      }
      for (const kind of ["line", "sep", "stuck"]) this.rows.delete(`${kind}${i}`); // redrawn
      this.#heading(i);
    }
    this.list.removeAttribute("aria-busy");
    this.list.dataset.lines = String(this.count);
    this.#render(true);
  }

  #grow(total) {
    if (total <= this.total) return;
    const have = new Uint8Array(total + 1);
    have.set(this.have);
    this.have = have;
    this.total = total;
  }

  /** Whether line ``i`` gets a deal heading: its deal differs from the line before it's. */
  #heading(i) {
    const { frames } = this;
    const deal = frames[i].event?.deal;
    const known = i === 1 || frames[i - 1] !== undefined; // else decided when that one arrives
    const wanted = deal !== undefined && known && frames[i - 1]?.event?.deal !== deal;
    const at = lowerBound(this.seps, i);
    const has = this.seps[at] === i;
    if (wanted && !has) this.seps.splice(at, 0, i);
    if (!wanted && has) this.seps.splice(at, 1);
  }

  /** The heights of a line and of a deal heading, in pixels (set in ``viewer.css``). */
  #heights() {
    if (!this.lineHeight) {
      const style = getComputedStyle(this.list);
      this.lineHeight = parseFloat(style.getPropertyValue("--rv-log-line")) || 34;
      this.sepHeight = parseFloat(style.getPropertyValue("--rv-log-sep")) || 22;
    }
    return [this.lineHeight, this.sepHeight];
  }

  /** The pixel offset of the row block of step ``i`` (its heading if it has one, else its line). */
  #top(i) {
    const [line, sep] = this.#heights();
    return (i - 1) * line + lowerBound(this.seps, i) * sep;
  }

  /** The step whose row block holds the pixel offset ``y``. */
  #stepAt(y) {
    let lo = 1;
    let hi = Math.max(1, this.total);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#top(mid) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Draw the rows around the visible part; with ``force`` false only if they are not drawn. */
  #render(force) {
    if (!this.total) return;
    const view = this.viewHeight || this.list.clientHeight;
    const first = this.#stepAt(this.scrollTop);
    const stop = Math.min(this.total + 1, this.#stepAt(this.scrollTop + view) + 1);
    const shown = this.shown;
    if (!force && shown && shown[0] <= first && stop <= shown[1]) return;
    const from = Math.max(1, first - OVERSCAN);
    const to = Math.min(this.total + 1, stop + OVERSCAN);
    this.shown = [from, to];
    const rows = [];
    const kept = new Map(); // the rows drawn, by kind and step: kept while on view
    const row = (key, make) => {
      const node = this.rows.get(key) ?? make();
      kept.set(key, node);
      return node;
    };
    const deal = this.seps[lowerBound(this.seps, from + 1) - 1];
    if (deal !== undefined && deal !== from)
      rows.push(row(`stuck${deal}`, () => this.#dealRow(deal, true)));
    // for a screen reader: where each row is in the whole list, not in the few drawn
    const size = String(this.total + this.seps.length);
    let at = from - 1 + lowerBound(this.seps, from);
    const place = (node) => {
      at += 1;
      node.setAttribute("aria-posinset", String(at));
      node.setAttribute("aria-setsize", size);
      rows.push(node);
    };
    for (let i = from; i < to; i += 1) {
      if (this.seps[lowerBound(this.seps, i)] === i)
        place(row(`sep${i}`, () => this.#dealRow(i, false)));
      if (!this.have[i]) {
        place(row(`gap${i}`, () => this.#gap(i)));
        continue;
      }
      const line = row(`line${i}`, () => this.#line(i));
      line.classList.toggle("current", i === this.current);
      if (i === this.current) line.setAttribute("aria-current", "step");
      else line.removeAttribute("aria-current");
      place(line);
    }
    this.rows = kept;
    this.above.style.height = `${this.#top(from)}px`;
    this.below.style.height = `${this.#top(this.total + 1) - this.#top(to)}px`;
    rows.unshift(this.above);
    rows.push(this.below);
    const children = this.list.children;
    if (rows.length !== children.length || rows.some((node, k) => children[k] !== node))
      this.list.replaceChildren(...rows);
  }

  /** An empty row as tall as the rows it stands for (a list's padding cannot be taller than it). */
  #space() {
    const row = el("li", "rv-log-space");
    row.setAttribute("aria-hidden", "true");
    return row;
  }

  /** The heading of the deal that starts at step ``i``; ``stuck``: a copy kept at the top of the
   * list while that deal's lines are on view and its own heading is scrolled away. */
  #dealRow(i, stuck) {
    const deal = this.frames[i].event.deal;
    const row = el("li", stuck ? "deal-sep stuck" : "deal-sep", `Deal ${deal + 1}`);
    if (stuck) row.setAttribute("aria-hidden", "true");
    return row;
  }

  #gap(i) {
    const row = el("li", "gap", "…");
    row.dataset.gap = String(i);
    row.setAttribute("aria-label", `step ${i}, not loaded yet`);
    return row;
  }

  #line(i) {
    const { frames, names, adapter } = this;
    const event = frames[i].event ?? {};
    const line = el("li", event.status && event.status !== "ok" ? "strike" : "");
    line.dataset.step = String(i);
    const who = el("span", "who", names[event.seat] ?? `seat ${event.seat}`);
    who.title = who.textContent; // whole, where the column cuts a long name
    const what = el("span", "what", stepText(frames, i, adapter));
    what.title = what.textContent;
    line.append(el("span", "n", String(i)), who, what, el("span", "ms", timeText(event.time_ms)));
    if (event.status && event.status !== "ok") line.title = event.status.replaceAll("_", " ");
    return line;
  }

  /** Highlight the line of ``step`` and scroll the log (not the page) to it. */
  show(step) {
    this.current = step;
    if (!this.total || step < 1) {
      this.#scrollTo(0);
      return;
    }
    const [line] = this.#heights();
    const view = this.viewHeight || this.list.clientHeight;
    const top = this.#top(step + 1) - line; // the line itself, below any heading
    if (top < this.scrollTop || top > this.scrollTop + view - line) {
      this.#scrollTo(Math.max(0, top - view / 2));
    } else {
      this.#render(true);
    }
  }

  #scrollTo(y) {
    const view = this.viewHeight || this.list.clientHeight;
    y = Math.max(0, Math.min(y, this.#top(this.total + 1) - view));
    this.scrollTop = y;
    if (this.total) this.#render(true); // the rows first, so that the list is tall enough
    this.wanted = y;
    this.#frame();
  }

  /** In the next animation frame: scroll to where ``show`` asked, or follow the reader's scroll. */
  #frame() {
    if (this.framing) return;
    this.framing = requestAnimationFrame(() => {
      this.framing = 0;
      if (this.wanted !== null) {
        this.list.scrollTop = this.wanted;
        this.wanted = null;
      } else if (this.scrolled) {
        this.scrollTop = this.list.scrollTop;
        this.#render(false);
      }
      this.scrolled = false;
    });
  }
}

/** The details of one step: seat, action, thinking time, status, debug and stderr text. */
export function stepDetails(frames, i, names, adapter) {
  const box = el("div", "rv-step");
  const { event } = frames[i];
  if (!event) {
    box.append(el("p", "muted", "The start of the match: the cards are dealt."));
    return box;
  }
  const head = el("p", "step-head");
  head.append(
    el("strong", "", names[event.seat] ?? `seat ${event.seat}`),
    ` ${stepText(frames, i, adapter)}`,
  );
  box.append(head);
  const facts = [];
  if (event.time_ms !== null && event.time_ms !== undefined)
    facts.push(`thought ${timeText(event.time_ms)}`);
  if (event.status) facts.push(`status ${event.status.replaceAll("_", " ")}`);
  if (event.deal !== undefined) facts.push(`deal ${event.deal + 1}`);
  box.append(
    el("p", `facts ${event.status && event.status !== "ok" ? "bad" : ""}`, facts.join(" · ")),
  );
  for (const key of ["debug", "stderr"]) {
    if (!event[key]) continue;
    const block = el("details", `bot-text ${key}`);
    block.open = true;
    block.append(
      el("summary", "", key === "debug" ? "Bot's debug note" : "Bot's stderr"),
      el("pre", "", event[key]),
    );
    box.append(block);
  }
  return box;
}
