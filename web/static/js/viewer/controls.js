// The player's controls: transport buttons, the scrubber with its marks, the step counter, the
// speed choice, the perspective choice and the keyboard help.

import { el } from "./table.js";

const SPEED_CHOICES = [0.25, 0.5, 1, 2, 4, 8, 16];

export const KEY_HELP = [
  ["← / →", "previous / next step"],
  ["Shift + ← / →", "previous / next deal or trick"],
  ["Space", "play / pause"],
  ["Home / End", "first / last step"],
  ["↑ / ↓", "faster / slower"],
  ["1 … 7", "speed 0.25× … 16×"],
  ["f", "next perspective (spectator, then each seat)"],
  ["?", "this help"],
];

function button(text, name, title, action) {
  const node = el("button", `rv-btn ${name}`, text);
  node.type = "button";
  node.dataset.action = name;
  node.title = title;
  node.setAttribute("aria-label", title);
  node.addEventListener("click", action);
  return node;
}

/** Build the control bar of ``player``; ``update(state, last)`` refreshes it. */
export function buildControls(player) {
  const root = el("div", "rv-controls");
  const first = button("«", "first", "First step (Home)", () => player.step(-player.last));
  const prev = button("‹", "prev", "Previous step (←)", () => player.step(-1));
  const play = button("▶", "play", "Play (Space)", () => player.toggle());
  const next = button("›", "next", "Next step (→)", () => player.step(1));
  const end = button("»", "last", "Last step (End)", () => player.step(player.last));
  const track = el("div", "rv-track");
  const range = el("input", "rv-range");
  Object.assign(range, { type: "range", min: "0", max: "0", step: "1", value: "0" });
  range.setAttribute("aria-label", "step");
  range.addEventListener("input", () => {
    const wanted = Number(range.value); // read first: pausing redraws the controls
    player.pause();
    player.go(wanted, false);
  });
  range.addEventListener("change", () => range.blur()); // hand the keys back to the player
  const markers = el("div", "rv-marks");
  track.append(range, markers);
  const counter = el("span", "rv-counter", "0 / 0");
  counter.setAttribute("aria-live", "polite");
  const speed = el("select", "rv-speed");
  speed.setAttribute("aria-label", "speed");
  for (const value of SPEED_CHOICES) speed.append(new Option(`${value}×`, String(value)));
  speed.addEventListener("change", () => {
    player.setSpeed(Number(speed.value));
    speed.blur(); // hand the keys back to the player
  });
  root.append(first, prev, play, next, end, track, counter, speed);
  const update = (state, last) => {
    range.max = String(last);
    range.value = String(state.step);
    counter.textContent = `${state.step} / ${last}`;
    play.textContent = state.playing ? "❚❚" : "▶";
    play.title = state.playing ? "Pause (Space)" : "Play (Space)";
    play.classList.toggle("on", state.playing);
    speed.value = String(state.speed);
    first.disabled = prev.disabled = state.step <= 0;
    next.disabled = end.disabled = state.step >= last;
  };
  return { root, range, markers, counter, speed, play, update };
}

/** Put ``marks`` on the scrubber as small ticks; clicking one jumps to its step. */
export function markScrubber(controls, marks, last, onPick) {
  const ticks = marks.map((mark) => {
    const tick = el("button", `tick ${mark.kind}`);
    tick.type = "button";
    tick.tabIndex = -1;
    tick.title = `step ${mark.index}: ${mark.label}`;
    tick.dataset.step = String(mark.index);
    tick.style.setProperty("--at", String(last ? mark.index / last : 0));
    tick.addEventListener("click", () => onPick(mark.index));
    return tick;
  });
  controls.markers.replaceChildren(...ticks);
}

/** The perspective select: the spectator and the seats the reader may open. */
export function buildPerspective(names, seats, onChange) {
  const select = el("select", "rv-seat");
  select.setAttribute("aria-label", "perspective");
  select.title = "Whose view to show (f)";
  for (const seat of seats) {
    const label = seat === null ? "Spectator" : `Seat ${seat}: ${names[seat]}`;
    select.append(new Option(label, seat === null ? "" : String(seat)));
  }
  select.addEventListener("change", () => {
    onChange(select.value === "" ? null : Number(select.value));
    select.blur(); // hand the keys back to the player
  });
  return select;
}

/** The keyboard help overlay (hidden at first). */
export function buildHelp(onClose) {
  const overlay = el("div", "rv-help");
  overlay.hidden = true;
  overlay.setAttribute("role", "dialog");
  overlay.setAttribute("aria-label", "keyboard shortcuts");
  const card = el("div", "rv-help-card");
  card.append(el("h3", "", "Keyboard"));
  const list = el("dl");
  for (const [keys, what] of KEY_HELP) list.append(el("dt", "", keys), el("dd", "", what));
  const close = el("button", "rv-btn", "Close");
  close.type = "button";
  close.addEventListener("click", onClose);
  card.append(list, close);
  overlay.append(card);
  overlay.addEventListener("click", (e) => {
    if (e.target === overlay) onClose();
  });
  return overlay;
}
