// The generic replay player: a small state machine {step, playing, speed, seat} with its
// controls, keys, shareable URL and side panels. Everything game-specific is in the adapter.
// Frames arrive a window at a time (see frames.js): the one the reader looks at first, the rest
// in the background; a step whose window has not arrived is shown as soon as it has.

import { describe } from "./adapters/common.js";
import generic from "./adapters/generic.js";
import { buildControls, buildHelp, buildPerspective, markScrubber } from "./controls.js";
import { replayFileName, replayJson, saveFile, standaloneHtml } from "./export.js";
import { MoveLog, stepDetails, stepText } from "./log.js";
import { FrameStore } from "./frames.js";
import { jumpTarget, marksAt } from "./marks.js";
import { el, Table } from "./table.js";

export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
const BASE_DELAY_MS = 900;
const POLL_MS = 3000;
const FORM_TAGS = new Set(["INPUT", "TEXTAREA", "SELECT"]);

/** Read ``?seat=N#step`` (or ``#last``) from a location. */
export function readLocation(location, seats) {
  const raw = new URLSearchParams(location.search).get("seat");
  const seat = raw !== null && /^\d+$/.test(raw) && Number(raw) < seats ? Number(raw) : null;
  const hash = location.hash.replace(/^#/, "");
  const step = hash === "last" ? Infinity : /^\d+$/.test(hash) ? Number(hash) : 0;
  return { seat, step };
}

export class Player {
  /**
   * @param root the element to fill
   * @param options {source, names, game, viewerSeat, loadAdapter, standalone, pollMs}
   */
  constructor(root, options) {
    this.root = root;
    this.options = options;
    this.state = { step: 0, playing: false, speed: 1, seat: null };
    this.store = null;
    this.marks = [];
    this.markAt = [];
    this.timer = null;
  }

  /** Load the replay and the frames, build the viewer and show the step named in the URL. */
  async start() {
    this.root.classList.add("rv", "loading");
    this.root.setAttribute("aria-busy", "true");
    const { source } = this.options;
    this.replay = await source.replay();
    this.names = this.#names();
    this.players = this.names.length;
    this.adapter = await this.#adapter();
    const wanted = readLocation(window.location, this.players);
    this.state.seat = this.#allowedSeats().includes(wanted.seat) ? wanted.seat : null;
    this.#build();
    this.#useStore(this.state.seat);
    const steps = this.replay.steps?.length ?? 0; // a hint: the frames may be further on
    await this.store.ensure(Math.min(wanted.step, steps), { peek: false });
    await this.go(wanted.step);
    this.root.classList.remove("loading");
    this.root.removeAttribute("aria-busy");
    this.#fillInBackground();
    this.#watch();
    return this;
  }

  #names() {
    const given = this.options.names ?? [];
    const seats = this.replay.seats ?? [];
    const count = Math.max(given.length, seats.length, this.replay.game?.players ?? 0);
    return Array.from({ length: count }, (_, i) => given[i] ?? seats[i]?.name ?? `seat ${i}`);
  }

  async #adapter() {
    const game = this.options.game ?? this.replay.game?.game;
    let module;
    try {
      module = await this.options.loadAdapter(game);
    } catch {
      module = { default: generic }; // a game without an adapter of its own
    }
    return { describe, ...module.default };
  }

  /** The seats whose view this reader may open: all of them once the match is over. */
  #allowedSeats() {
    const seats = [null];
    if (!this.options.source.live) for (let s = 0; s < this.players; s += 1) seats.push(s);
    else if (this.options.viewerSeat !== null && this.options.viewerSeat !== undefined)
      seats.push(this.options.viewerSeat);
    return seats;
  }

  #build() {
    this.head = el("div", "rv-head");
    this.stage = el("div", "rv-stage");
    this.side = el("aside", "rv-side");
    const main = el("div", "rv-main");
    main.append(this.stage, this.side);
    this.controls = buildControls(this);
    this.help = buildHelp(() => this.toggleHelp(false));
    this.toast = el("div", "rv-toast");
    this.toast.setAttribute("role", "status");
    this.root.replaceChildren(this.head, main, this.controls.root, this.help, this.toast);
    this.table = new Table(this.stage, this.players, this.names);
    this.adapter.mount?.(this.table, this.#context());
    this.log = new MoveLog(this.side, (step) => this.go(step));
    this.detail = el("div", "rv-detail");
    this.side.append(this.detail);
    this.#buildHead();
    this.keys = (e) => this.#onKey(e);
    document.addEventListener("keydown", this.keys);
  }

  #buildHead() {
    const title = el("div", "rv-title");
    title.append(el("strong", "", this.replay.game?.game ?? "match"));
    if (this.replay.game?.variant) title.append(el("span", "variant", this.replay.game.variant));
    if (this.options.source.live) title.append(this.#hiddenMark());
    if (this.#running()) {
      title.append(
        this.#button("Jump to now", "now", () => this.go(this.last), "Show the latest move and follow the match"),
      );
    }
    const tools = el("div", "rv-tools");
    this.perspective = buildPerspective(this.names, this.#allowedSeats(), (seat) =>
      this.setSeat(seat),
    );
    tools.append(this.perspective);
    if (this.replay.seed !== undefined && this.replay.seed !== null) {
      tools.append(
        this.#button(
          `seed ${this.replay.seed}`,
          "seed",
          () => this.copy(String(this.replay.seed), "Seed copied"),
          "Copy the seed",
        ),
      );
    }
    tools.append(
      this.#button(
        "Copy link",
        "copy-link",
        () => this.copy(this.stepUrl(), "Link to this step copied"),
        "Copy a link to this step",
      ),
      this.#button("Download JSON", "download", () => this.download(), "Download the replay file"),
    );
    if (!this.options.standalone && !this.options.source.live) {
      tools.append(
        this.#button(
          "Export HTML",
          "export",
          () => this.exportHtml(),
          "Save a page that plays this replay offline",
        ),
      );
    }
    tools.append(this.#button("?", "help", () => this.toggleHelp(), "Keyboard shortcuts"));
    this.head.replaceChildren(title, tools);
  }

  /** A hidden match's mark: "live" while it is played; once it is over but its deal group is
   * not (a sealed rotation), the words saying so. */
  #hiddenMark() {
    const { status, sealed } = this.replay;
    if (status === "running" || status === "queued") {
      const badge = el("span", "live-badge", "live");
      if (sealed) badge.title = sealed;
      return badge;
    }
    const note = el("span", "rv-sealed", sealed ?? `${status ?? "over"}; public moves only`);
    note.title = "The public view: played cards and moves, no hidden hand";
    return note;
  }

  #button(text, name, action, title) {
    const button = el("button", `rv-btn ${name}`, text);
    button.type = "button";
    button.dataset.action = name;
    button.title = title;
    button.addEventListener("click", action);
    return button;
  }

  /** Show the frames seen from ``seat``, starting afresh. */
  #useStore(seat) {
    this.store?.stop();
    const store = new FrameStore(this.options.source, seat, (start, stop, reset) =>
      this.#arrived(store, start, stop, reset),
    );
    this.store = store;
    this.markAt = [];
    this.marks = [];
    this.log.reset();
  }

  #fillInBackground() {
    this.store.fill((error) =>
      this.notify(`Some steps did not load (trying again): ${error.message}`),
    );
  }

  /** Frames ``start`` to ``stop - 1`` arrived: put them in the log, marks and controls. */
  #arrived(store, start, stop, reset) {
    if (store !== this.store) return;
    if (reset) {
      this.log.reset();
      this.markAt = [];
    }
    const frames = this.frames;
    this.log.add(frames, start, stop, this.names, this.adapter);
    for (let i = Math.max(1, start); i <= Math.min(stop, frames.length - 1); i += 1)
      this.markAt[i] = marksAt(frames, i, this.adapter);
    this.marks = this.markAt.flat();
    markScrubber(this.controls, this.marks, this.last, (step) => this.go(step));
    const kinds = new Map(this.marks.map((mark) => [mark.kind, mark.label]));
    this.table.noteTicks([...kinds]);
    this.controls.update({ ...this.state, step: this.target ?? this.state.step }, this.last);
    // the reader may be scrolling the log: bring the current line back only if it just arrived
    if (this.state.step >= start && this.state.step <= stop) this.log.show(this.state.step);
  }

  /** The frames of the current perspective (sparse while windows are on their way). */
  get frames() {
    return this.store?.frames ?? [];
  }

  /** The index of the last frame. */
  get last() {
    return this.store?.last ?? 0;
  }

  #context() {
    return {
      table: this.table,
      players: this.players,
      names: this.names,
      seat: this.state.seat,
      describe: this.adapter.describe,
    };
  }

  /** What each seat last did in the deal on at the current step, for the notes by its hand. */
  #notes() {
    const notes = new Array(this.players).fill("");
    const frame = this.frames[this.state.step];
    const deal = frame?.event?.deal;
    if (frame?.view?.deal !== undefined && frame.view.deal !== deal) return notes; // a fresh deal
    for (let i = this.state.step; i > 0; i -= 1) {
      const event = this.frames[i]?.event;
      if (!event || event.deal !== deal) break;
      if (event.seat < this.players && !notes[event.seat])
        notes[event.seat] = stepText(this.frames, i, this.adapter);
      if (notes.every(Boolean)) break;
    }
    return notes;
  }

  /** Show frame ``step`` (clamped to the replay), once its window has arrived. */
  go(step, animate = true) {
    const target = Math.min(
      Math.max(0, Number.isFinite(step) ? Math.round(step) : this.last),
      this.last,
    );
    this.target = target;
    if (!this.store.has(target)) return this.#goLater(target);
    const jump = Math.abs(target - this.state.step);
    this.state.step = target;
    this.render(animate && jump <= 2);
    if (target >= this.last) this.pause();
    return Promise.resolve();
  }

  /** Fetch the window of ``target`` and show it, unless the reader has moved on meanwhile. */
  async #goLater(target) {
    this.root.classList.add("fetching");
    this.controls.update({ ...this.state, step: target }, this.last);
    try {
      await this.store.ensure(target);
    } catch (error) {
      this.notify(`Step ${target} cannot be loaded: ${error.message}`);
      return;
    } finally {
      this.root.classList.remove("fetching");
    }
    if (this.target === target && this.store.has(Math.min(target, this.last)))
      this.go(target, false);
  }

  /** Draw the current state: table, controls, log, details and the URL. */
  render(animate = true) {
    const frame = this.frames[this.state.step];
    if (!frame) return;
    const bottom = this.state.seat ?? this.options.viewerSeat ?? 0;
    if (this.table.bottom !== bottom) this.table.layout(bottom);
    const duration = animate
      ? Math.min(this.table.duration, (0.6 * BASE_DELAY_MS) / this.state.speed)
      : 0;
    this.table.transition(
      () =>
        this.adapter.render(frame.view, {
          ...this.#context(),
          frame,
          event: frame.event,
          notes: this.#notes(),
        }),
      duration,
    );
    this.table.setBanner(this.#bannerText(frame));
    this.root.dataset.step = String(this.state.step);
    this.root.dataset.seat = this.state.seat === null ? "" : String(this.state.seat);
    this.controls.update(this.state, this.last);
    this.log.show(this.state.step);
    this.detail.replaceChildren(
      stepDetails(this.frames, this.state.step, this.names, this.adapter),
    );
    this.perspective.value = this.state.seat === null ? "" : String(this.state.seat);
    this.#writeUrl();
  }

  /** The match result on the last frame, a deal's outcome on the first frame of the next. */
  #bannerText(frame) {
    if (this.state.step === this.last && !this.options.source.live) return this.#resultText();
    const before = this.frames[this.state.step - 1]?.public;
    const fresh = before && frame.public?.deal !== undefined && before.deal !== frame.public.deal;
    return fresh ? (this.adapter.dealSummary?.(frame.view, this.names) ?? "") : "";
  }

  #resultText() {
    const result = this.replay.result;
    if (!result?.ranking) return "Match over";
    const order = result.ranking
      .map((place, seat) => ({ place, seat }))
      .sort((a, b) => a.place - b.place);
    const parts = order.map(({ place, seat }) => {
      const score = result.scores?.[seat];
      return `${place}. ${this.names[seat]}${score !== undefined ? ` (${Number(score.toFixed(2))})` : ""}`;
    });
    return `Match over — ${parts.join("  ")}`;
  }

  /** The address of this page at the current step and perspective. */
  stepUrl() {
    const url = new URL(window.location.href);
    if (this.state.seat === null) url.searchParams.delete("seat");
    else url.searchParams.set("seat", String(this.state.seat));
    url.hash = String(this.state.step);
    return url.toString();
  }

  #writeUrl() {
    const url = this.stepUrl();
    if (url !== window.location.href) history.replaceState(history.state, "", url);
  }

  play() {
    if (this.state.step >= this.last) this.state.step = 0;
    this.state.playing = true;
    this.render(false);
    this.#schedule();
  }

  pause() {
    this.state.playing = false;
    clearTimeout(this.timer);
    this.controls.update(this.state, this.last);
  }

  toggle() {
    if (this.state.playing) this.pause();
    else this.play();
  }

  #schedule() {
    clearTimeout(this.timer);
    if (!this.state.playing) return;
    this.timer = setTimeout(() => {
      if (this.state.step >= this.last) {
        if (!this.options.source.live) this.pause();
        else this.#schedule();
        return;
      }
      if (!this.store.has(this.state.step + 1)) {
        this.store.ensure(this.state.step + 1).catch(() => {}); // retried at the next tick
        this.#schedule();
        return;
      }
      this.go(this.state.step + 1);
      this.#schedule();
    }, BASE_DELAY_MS / this.state.speed);
  }

  /** Step ``delta`` frames forwards or backwards (pausing playback). */
  step(delta) {
    this.pause();
    this.go(this.state.step + delta);
  }

  /** Jump to the previous or next deal or trick boundary. */
  jump(direction) {
    this.pause();
    this.go(jumpTarget(this.marks, this.state.step, direction, this.last), false);
  }

  setSpeed(speed) {
    this.state.speed = SPEEDS.includes(speed) ? speed : 1;
    this.controls.update(this.state, this.last);
    this.#schedule();
  }

  changeSpeed(delta) {
    const at = SPEEDS.indexOf(this.state.speed);
    this.setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, Math.max(0, at + delta))]);
  }

  /** Switch perspective: null for the spectator, or a seat number. */
  async setSeat(seat) {
    if (!this.#allowedSeats().includes(seat) || seat === this.state.seat) return;
    const step = this.state.step;
    this.state.seat = seat;
    this.#useStore(seat);
    try {
      await this.store.ensure(step);
    } catch (error) {
      this.notify(`Cannot show that view: ${error.message}`);
      this.state.seat = null;
      this.#useStore(null);
      await this.store.ensure(step);
    }
    await this.go(step, false);
    this.#fillInBackground();
    if (this.#running()) this.#follow(); // the stream of this perspective
  }

  /** The next perspective in the cycle spectator, seat 0, seat 1, ... */
  cycleSeat() {
    const seats = this.#allowedSeats();
    const next = seats[(seats.indexOf(this.state.seat) + 1) % seats.length];
    this.setSeat(next);
  }

  toggleHelp(show = this.help.hidden) {
    this.help.hidden = !show;
  }

  notify(message) {
    this.toast.textContent = message;
    this.toast.classList.add("shown");
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => this.toast.classList.remove("shown"), 2500);
  }

  /** Put ``text`` on the clipboard (with a fallback where the Clipboard API is unavailable). */
  async copy(text, message) {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = el("textarea", "rv-offscreen");
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    this.root.dataset.copied = text;
    this.notify(message);
  }

  download() {
    const json = replayJson(this.replay, 1);
    saveFile(replayFileName(this.replay, "json"), json, "application/json");
  }

  async exportHtml() {
    this.notify("Building the offline page…");
    try {
      const data = { replay: this.replay, frames: await this.options.source.rawFrames() };
      const html = await standaloneHtml(data, `${this.replay.game?.game ?? "match"} replay`);
      saveFile(replayFileName(this.replay, "html"), html, "text/html");
      this.notify("Offline page saved");
    } catch (error) {
      this.notify(`Export failed: ${error.message}`);
    }
  }

  #onKey(e) {
    const target = e.target;
    if (FORM_TAGS.has(target?.tagName) || target?.isContentEditable) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const action = this.#keyAction(e);
    if (!action) return;
    e.preventDefault();
    action();
  }

  #keyAction(e) {
    if (e.key === "Escape" && !this.help.hidden) return () => this.toggleHelp(false);
    if (/^[1-7]$/.test(e.key)) return () => this.setSpeed(SPEEDS[Number(e.key) - 1]);
    const keys = {
      ArrowLeft: () => (e.shiftKey ? this.jump(-1) : this.step(-1)),
      ArrowRight: () => (e.shiftKey ? this.jump(1) : this.step(1)),
      " ": () => this.toggle(),
      Home: () => this.step(-this.last),
      End: () => this.step(this.last),
      ArrowUp: () => this.changeSpeed(1),
      ArrowDown: () => this.changeSpeed(-1),
      f: () => this.cycleSeat(),
      "?": () => this.toggleHelp(),
    };
    return keys[e.key] ?? null;
  }

  /**
   * Follow a running match as it is played: its live stream pushes each new frame; where no
   * stream can be had, ask for news every few seconds instead. A reader at the last move stays
   * at the last move (Jump to now brings them back there).
   */
  #follow() {
    this.#unfollow();
    const store = this.store;
    this.root.dataset.feed = "stream";
    this.unfollow = this.options.source.follow(this.state.seat, store.total - 1, {
      onFrame: (raw) => {
        if (store !== this.store) return;
        const atEnd = this.state.step >= this.last;
        store.push(raw);
        if (atEnd) this.go(this.last);
      },
      onEnd: () => this.#finishLive(this.state.step >= this.last),
      onFail: () => {
        this.#unfollow();
        this.root.dataset.feed = "poll";
        this.#poll();
      },
    });
  }

  #unfollow() {
    this.unfollow?.();
    this.unfollow = null;
    clearInterval(this.poller);
    this.poller = null;
  }

  #poll() {
    const every = this.options.pollMs ?? POLL_MS;
    clearInterval(this.poller);
    this.poller = setInterval(async () => {
      if (this.polling) return;
      this.polling = true;
      const atEnd = this.state.step >= this.last;
      try {
        await this.store.poll();
      } catch {
        return; // a failed poll is retried at the next tick
      } finally {
        this.polling = false;
      }
      if (!this.store.live) this.#finishLive(atEnd);
      else if (atEnd) this.go(this.last);
    }, every);
  }

  /** The match is over: every view may now be shown, so the frames are loaded afresh. */
  async #finishLive(atEnd) {
    this.#unfollow();
    this.replay = await this.options.source.replay();
    this.#buildHead();
    const step = atEnd ? Infinity : this.state.step;
    this.#useStore(this.state.seat);
    await this.store.ensure(Math.min(step, this.replay.steps?.length ?? 0));
    await this.go(step, false);
    this.#fillInBackground();
    this.root.dataset.feed = "over";
    this.#watch(); // given back and played again: a new attempt
  }

  /** Follow a match being played; poll a finished one of a sealed deal group until it opens. */
  #watch() {
    if (this.#running()) this.#follow();
    else if (this.options.source.live) this.#poll();
  }

  /** Whether the match is being played (or waits to be): it is followed as it goes. */
  #running() {
    const { status } = this.replay ?? {};
    return this.options.source.live && (status === "running" || status === "queued");
  }

  /** Stop timers and listeners and empty the root. */
  destroy() {
    this.pause();
    this.#unfollow();
    this.store?.stop();
    document.removeEventListener("keydown", this.keys);
    this.adapter.unmount?.();
    this.table.destroy();
    this.root.replaceChildren();
  }
}
