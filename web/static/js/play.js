// The table page: asks the site for the person's turn, shows the legal actions as buttons
// (click, number keys, or Tab and Enter), the time left, and sends the chosen one. The game
// viewer (./viewer/main.js) draws the table from the person's seat, pushed by its live stream.

const panel = document.getElementById("play-panel");
const host = document.getElementById("replay-viewer");
const statusLine = document.getElementById("play-status");
const clock = document.getElementById("play-clock");
const actions = document.getElementById("play-actions");
const badge = document.getElementById("play-match-status");

const POLL_MS = 300;
const TYPE_PAUSE_MS = 1200;
let turn = null; // the turn shown now
let deadline = 0; // performance.now() when it times out
let typed = "";
let typedAt = 0;
let sending = false;
let mounted = false;
let answered = 0; // the last turn answered: never shown again while the worker takes it

function say(text) {
  if (statusLine.textContent !== text) statusLine.textContent = text;
}

function minutes(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Mark the cards of the person's hand that a legal action plays (clickable too); the viewer
 * redraws the hand as moves come, so this is applied again at every tick. */
function markCards() {
  const hand = host.querySelector(`.seat[data-seat="${host.dataset.viewerSeat}"] .hand`);
  if (!hand) return;
  const playable = new Map();
  (turn?.legal_actions ?? []).forEach((action, i) => {
    if (typeof action?.card === "string" && !playable.has(action.card)) playable.set(action.card, i);
  });
  hand.querySelectorAll(".rv-card.face").forEach((card) => {
    const index = sending ? undefined : playable.get(card.dataset.card);
    card.classList.toggle("playable", index !== undefined);
    if (index === undefined) delete card.dataset.action;
    else {
      card.dataset.action = String(index);
      card.title = `${index + 1}: ${turn.labels[index]}`;
    }
  });
}

host.addEventListener("click", (event) => {
  const card = event.target.closest?.(".rv-card.playable");
  if (card && turn) choose(Number(card.dataset.action));
});

function tick() {
  markCards();
  if (!turn) {
    clock.hidden = true;
    return;
  }
  const left = deadline - performance.now();
  clock.hidden = false;
  clock.classList.toggle("low", left < 10000);
  clock.textContent = `Time left for this move: ${minutes(left)} (bank ${minutes(turn.time_left_ms)}; strikes ${turn.strikes} of ${turn.max_strikes})`;
}

function mountViewer() {
  if (mounted) return;
  mounted = true;
  // The viewer opens the view the address names: the person's seat, at the latest move.
  const url = new URL(window.location.href);
  url.searchParams.set("seat", host.dataset.viewerSeat);
  url.hash = "last";
  history.replaceState(null, "", url);
  host.dataset.replayUrl = host.dataset.tableReplayUrl;
  import("./viewer/main.js");
}

function showTurn(next, leftMs) {
  turn = next;
  panel.dataset.request = String(next.request_id);
  panel.dataset.cards = next.legal_actions.some((a) => typeof a?.card === "string") ? "1" : "";
  deadline = performance.now() + leftMs;
  typed = "";
  const buttons = next.labels.map((label, i) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "play-action";
    button.dataset.index = String(i);
    const key = document.createElement("kbd");
    key.textContent = String(i + 1);
    button.append(key, " ", label);
    button.addEventListener("click", () => choose(i));
    return button;
  });
  actions.replaceChildren(...buttons);
  panel.classList.add("your-turn");
  say(`Your turn: choose one of ${buttons.length} actions.`);
  buttons[0]?.focus({ preventScroll: true });
  tick();
}

function clearTurn(text) {
  turn = null;
  actions.replaceChildren();
  panel.classList.remove("your-turn");
  say(text);
  tick();
}

function showTable(table) {
  badge.textContent = table.status;
  badge.className = `status ${table.status}`;
  if (table.watch) mountViewer();
  if (table.status === "finished") {
    const place = table.places?.[table.seat];
    clearTurn(`The match is over: you finished in place ${place}. The replay is below and on the match page.`);
    const link = document.createElement("a");
    link.href = panel.dataset.matchUrl;
    link.id = "play-match-link";
    link.textContent = "Open the match page";
    actions.replaceChildren(link);
    panel.querySelector(".hint").hidden = true;
    panel.dataset.over = "1";
    return;
  }
  if (table.status !== "queued" && table.status !== "running") {
    clearTurn(`The match could not be played (${table.status}).`);
    panel.dataset.over = "1";
    return;
  }
  const fresh = table.turn && table.turn.request_id > answered ? table.turn : null;
  if (fresh && !sending) {
    if (!turn || turn.request_id !== fresh.request_id) showTurn(fresh, table.turn_left_ms);
  } else if (!fresh && turn && !sending) {
    clearTurn("The bots are playing…");
  } else if (!turn && !sending) {
    say(table.status === "queued" ? "Waiting for a worker to deal the cards…" : "The bots are playing…");
  }
}

async function poll() {
  try {
    const answer = await fetch(panel.dataset.turnUrl, { cache: "no-store", credentials: "same-origin" });
    if (!answer.ok) throw new Error(`the site answered ${answer.status}`);
    showTable((await answer.json()).data);
  } catch (error) {
    say(`Cannot reach the site (${error.message}); trying again…`);
  }
  if (!panel.dataset.over) setTimeout(poll, POLL_MS);
}

async function choose(index) {
  if (!turn || sending || index < 0 || index >= turn.labels.length) return;
  sending = true;
  const asked = turn;
  answered = asked.request_id;
  actions.querySelectorAll("button").forEach((b) => {
    b.disabled = true;
    b.classList.toggle("chosen", Number(b.dataset.index) === index);
  });
  say(`You chose ${asked.labels[index]}.`);
  try {
    const answer = await fetch(panel.dataset.actionUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": panel.dataset.csrf },
      body: JSON.stringify({ request_id: asked.request_id, index }),
    });
    if (answer.status === 409) say("Too late: that turn was over before your answer came.");
    else if (!answer.ok) say(`Your answer was refused (${answer.status}).`);
  } catch (error) {
    say(`Your answer could not be sent (${error.message}).`);
  }
  sending = false;
  turn = null; // the next poll shows the next turn
  actions.replaceChildren();
  panel.classList.remove("your-turn");
}

// Caught on the way down, before the viewer's own keys (whose digits set its speed): on this
// page the digits, and Enter after them, choose actions.
window.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.target.closest?.("input, select, textarea")) return;
  if (/^[0-9]$/.test(event.key)) event.stopPropagation();
  if (event.key === " " && event.target.closest?.(".play-action")) event.stopPropagation();
  if (!turn) return;
  const count = turn.labels.length;
  if (/^[0-9]$/.test(event.key)) {
    const now = performance.now();
    typed = now - typedAt > TYPE_PAUSE_MS ? event.key : typed + event.key;
    typedAt = now;
    event.preventDefault();
    if (count <= 9 || Number(typed) * 10 > count) choose(Number(typed) - 1);
  } else if (event.key === "Enter" && typed && performance.now() - typedAt < TYPE_PAUSE_MS) {
    event.preventDefault();
    event.stopPropagation();
    choose(Number(typed) - 1);
    typed = "";
  } else if (event.key === "Escape") {
    typed = "";
  }
}, true);

setInterval(tick, 250);
poll();
