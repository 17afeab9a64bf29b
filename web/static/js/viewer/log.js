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

/** The move log: ``onPick(step)`` is called when a line is clicked. Lines arrive a window at a
 * time (``add``), in any order, and each goes to its place. */
export class MoveLog {
  constructor(container, onPick) {
    this.list = el("ol", "rv-log");
    this.list.setAttribute("aria-label", "moves");
    this.list.addEventListener("click", (e) => {
      const line = e.target.closest("li[data-step]");
      if (line) onPick(Number(line.dataset.step));
    });
    container.append(this.list);
    this.reset();
  }

  /** Empty the log. */
  reset() {
    this.lines = [null];
    this.seps = [];
    // a sign that the moves are on their way (a seat switch refetches them), gone with the first
    this.waiting = el("li", "rv-log-wait", "Loading the moves…");
    this.list.replaceChildren(this.waiting);
    this.list.setAttribute("aria-busy", "true");
  }

  #arrived() {
    if (!this.waiting) return;
    this.waiting.remove();
    this.waiting = null;
    this.list.removeAttribute("aria-busy");
  }

  /** Rebuild the log for ``frames``. */
  fill(frames, names, adapter) {
    this.reset();
    this.add(frames, 1, frames.length, names, adapter);
  }

  /** Put in the lines of frames ``start`` to ``stop - 1``, and redo the line after them
   * (its text and deal heading may depend on the frame before it). */
  add(frames, start, stop, names, adapter) {
    this.#arrived();
    const nodes = [];
    const last = Math.min(stop, frames.length - 1);
    for (let i = Math.max(1, start); i <= last; i += 1) {
      if (!frames[i]) continue;
      if (i === stop && this.lines[i]) {
        this.#redo(frames, i, names, adapter);
        continue;
      }
      this.#drop(i);
      const sep = this.#separator(frames, i);
      if (sep) nodes.push(sep);
      const line = this.#line(frames, i, names, adapter);
      this.lines[i] = line;
      nodes.push(line);
    }
    this.list.insertBefore(this.#fragment(nodes), this.#nodeAfter(stop - 1));
  }

  #fragment(nodes) {
    const fragment = document.createDocumentFragment();
    fragment.append(...nodes);
    return fragment;
  }

  /** The first node of a later line already in the log (null: the end). */
  #nodeAfter(i) {
    for (let j = i + 1; j < this.lines.length; j += 1) {
      if (this.lines[j]) return this.seps[j] ?? this.lines[j];
    }
    return null;
  }

  #drop(i) {
    this.lines[i]?.remove();
    this.seps[i]?.remove();
    this.lines[i] = undefined;
    this.seps[i] = undefined;
  }

  /** A deal heading before line ``i`` when its deal differs from the line before it. */
  #separator(frames, i) {
    const deal = frames[i].event?.deal;
    if (deal === undefined || frames[i - 1]?.event?.deal === deal) return null;
    if (i > 1 && !frames[i - 1]) return null; // decided when the frame before arrives
    const sep = el("li", "deal-sep", `Deal ${deal + 1}`);
    this.seps[i] = sep;
    return sep;
  }

  #redo(frames, i, names, adapter) {
    const old = this.lines[i];
    this.seps[i]?.remove();
    this.seps[i] = undefined;
    const line = this.#line(frames, i, names, adapter);
    if (old.classList.contains("current")) line.classList.add("current");
    old.replaceWith(line);
    this.lines[i] = line;
    const sep = this.#separator(frames, i);
    if (sep) line.before(sep);
  }

  #line(frames, i, names, adapter) {
    const event = frames[i].event ?? {};
    const line = el("li", event.status && event.status !== "ok" ? "strike" : "");
    line.dataset.step = String(i);
    const who = el("span", "who", names[event.seat] ?? `seat ${event.seat}`);
    who.title = who.textContent; // whole, where the column cuts a long name
    line.append(
      el("span", "n", String(i)),
      who,
      el("span", "what", stepText(frames, i, adapter)),
      el("span", "ms", timeText(event.time_ms)),
    );
    if (event.status && event.status !== "ok") line.title = event.status.replaceAll("_", " ");
    return line;
  }

  /** Highlight the line of ``step`` and scroll the log (not the page) to it. */
  show(step) {
    this.list.querySelector("li.current")?.classList.remove("current");
    const line = this.lines[step];
    if (!line) {
      this.list.scrollTop = 0;
      return;
    }
    line.classList.add("current");
    const top = line.offsetTop - this.list.offsetTop;
    if (
      top < this.list.scrollTop ||
      top > this.list.scrollTop + this.list.clientHeight - line.offsetHeight
    ) {
      this.list.scrollTop = Math.max(0, top - this.list.clientHeight / 2);
    }
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
