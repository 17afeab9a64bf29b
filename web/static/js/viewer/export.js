// Saving a replay from the browser: the replay JSON as it was served, and a standalone HTML file
// that holds the viewer's modules, its CSS and the frames, so it plays offline from file://.
// web/viewer_export.py builds the same file on the server from the same template and manifest
// (with the adapter of every game, where this page takes only the one its replay needs).

const PLACEHOLDER = /__(TITLE|CSS|IMPORTMAP|DATA)__/g;

/** Offer ``data`` (a string or bytes) to the user as a file download. */
export function saveFile(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A module path resolved against the folder of the module importing it ("games/x.js"). */
export function resolvePath(from, target) {
  const parts = from.split("/").slice(0, -1);
  for (const piece of target.split("/")) {
    if (piece === "..") parts.pop();
    else if (piece !== ".") parts.push(piece);
  }
  return parts.join("/");
}

/** ``source`` with its relative imports turned into the bare names of the import map. */
export function rewriteImports(path, source) {
  return source.replace(
    /(from\s+|import\s*\(\s*)"(\.{1,2}\/[^"]+)"/g,
    (_, lead, target) => `${lead}"arena-viewer/${resolvePath(path, target)}"`,
  );
}

/**
 * The replay as JSON, its ``seed`` written as a number again: a 64-bit seed is kept as its
 * decimal digits while the viewer holds it (see ``parseReplay`` in source.js).
 */
export function replayJson(replay, indent) {
  const whole = (key, value) =>
    key === "seed" && typeof value === "string" && /^\d+$/.test(value) && JSON.rawJSON
      ? JSON.rawJSON(value)
      : value;
  return JSON.stringify(replay, whole, indent);
}

/** JSON safe to put inside a script element. */
export function scriptJson(value) {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

function escapeHtml(text) {
  return String(text).replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c],
  );
}

/** The standalone page from its parts: ``modules`` maps paths to module sources. */
export function buildStandalone({ template, css, modules, data, title }) {
  const imports = {};
  for (const [path, source] of Object.entries(modules)) {
    const code = rewriteImports(path, source);
    imports[`arena-viewer/${path}`] =
      `data:text/javascript;charset=utf-8,${encodeURIComponent(code)}`;
  }
  const values = {
    TITLE: escapeHtml(title),
    CSS: css.replace(/<\//g, "<\\/"),
    IMPORTMAP: scriptJson({ imports }),
    DATA: scriptJson(data),
  };
  return template.replace(PLACEHOLDER, (_, key) => values[key]);
}

async function text(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.text();
}

/** The adapter of ``game`` as the site serves it from the game's folder, or null if it has none. */
async function gameAdapter(base, game) {
  if (typeof game !== "string" || !/^[\w-]+$/.test(game)) return null;
  const response = await fetch(new URL(`games/${game}.js`, base), { credentials: "same-origin" });
  return response.ok ? response.text() : null;
}

/**
 * Fetch the viewer's own files and build the standalone page for ``data`` ({replay, frames}):
 * the modules of the manifest, and the adapter of the replay's game if it has one.
 */
export async function standaloneHtml(data, title) {
  // Resolved here, not at load: in a standalone page this module has a data: URL.
  const base = new URL("./", import.meta.url);
  const manifest = JSON.parse(await text(new URL("manifest.json", base)));
  const modules = {};
  const game = data.replay?.game?.game;
  await Promise.all([
    ...manifest.modules.map(async (path) => {
      modules[path] = await text(new URL(path, base));
    }),
    gameAdapter(base, game).then((source) => {
      if (source !== null) modules[`games/${game}.js`] = source;
    }),
  ]);
  const template = await text(new URL(manifest.template, base));
  const css = await text(new URL("../../css/viewer.css", base));
  return buildStandalone({ template, css, modules, data, title });
}

/** A file name for a replay: its game and seed, or its game alone. */
export function replayFileName(replay, extension) {
  const game = replay.game?.game ?? "match";
  const seed = replay.seed !== undefined ? `-${replay.seed}` : "";
  return `${game}${seed}.${extension}`;
}
