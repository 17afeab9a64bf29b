// Mounts the replay viewer on the match page's #replay-viewer element (see the data-* attributes
// it reads below), or on a standalone page whose replay and frames are embedded.

import { Player } from "./player.js";
import { HttpSource, InlineSource } from "./source.js";

function siteAdapter(game) {
  // The site serves each game's adapter from the game's folder (arena/games/<game>/viewer.js).
  return import(new URL(`./games/${game}.js`, import.meta.url).href);
}

function standaloneAdapter(game) {
  // A bare name resolved by the standalone page's import map.
  return import(`arena-viewer/games/${game}.js`);
}

/** Link the viewer's stylesheet unless the page already has it. */
function ensureStylesheet() {
  const href = new URL("../../css/viewer.css", import.meta.url).href;
  if ([...document.styleSheets].some((sheet) => sheet.href === href)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = href;
  document.head.append(link);
}

function parseSeats(raw) {
  try {
    const names = JSON.parse(raw || "[]");
    return Array.isArray(names) ? names.map(String) : [];
  } catch {
    return [];
  }
}

function showError(root, error) {
  root.classList.remove("loading");
  root.classList.add("failed");
  const message = document.createElement("p");
  message.className = "rv-error";
  message.textContent = `The replay cannot be shown: ${error.message}`;
  root.replaceChildren(message);
}

/** Mount on a site page: data-replay-url, data-frames-url, data-live-url, data-game, data-seats,
 * data-viewer-seat. */
export async function mountFromPage(root) {
  ensureStylesheet();
  const data = root.dataset;
  const seat = /^\d+$/.test(data.viewerSeat ?? "") ? Number(data.viewerSeat) : null;
  const player = new Player(root, {
    source: new HttpSource(data.replayUrl, data.framesUrl, data.liveUrl),
    names: parseSeats(data.seats),
    game: data.game || undefined,
    viewerSeat: seat,
    loadAdapter: siteAdapter,
    standalone: false,
    pollMs: Number(data.pollMs) || undefined, // how often a running match is asked for news
  });
  try {
    await player.start();
  } catch (error) {
    showError(root, error);
  }
  root.player = player;
  return player;
}

/** Mount on a standalone page: ``data`` is ``{replay, frames}`` (spectator frames). */
export async function mountInline(root, data) {
  const player = new Player(root, {
    source: new InlineSource(data),
    game: data.replay.game?.game,
    viewerSeat: null,
    loadAdapter: standaloneAdapter,
    standalone: true,
  });
  try {
    await player.start();
  } catch (error) {
    showError(root, error);
  }
  root.player = player;
  return player;
}

const host = document.getElementById("replay-viewer");
if (host?.dataset.replayUrl) mountFromPage(host);
