// The interactive rating history on a bot page: the leaderboard score (mu - 3 sigma) as a line,
// mu with a band of one sigma either side, a hover tooltip and range buttons. Drawn with the
// vendored uPlot (web/static/vendor/uplot); the element's server-drawn content stays if it fails.
//
// Markup: <div id="rating-chart" data-src="/api/v1/bots/<id>/ratings?ladder=..."></div>
// The data is [[iso time, mu - 3 sigma, mu, sigma, version], ...], oldest first, maybe in
// {"data": ...}; a dashed upright line marks each match where another version of the bot played.

const VENDOR = new URL("../vendor/uplot/", import.meta.url);
const DAY = 86400;
const MIN_SPAN = 3600;
const RANGES = [
  ["1d", DAY],
  ["1w", 7 * DAY],
  ["1m", 30 * DAY],
  ["3m", 91 * DAY],
  ["1y", 365 * DAY],
  ["All", Infinity],
];

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`cannot load ${src}`));
    document.head.append(script);
  });
}

function ensureStylesheet(url) {
  if ([...document.styleSheets].some((sheet) => sheet.href === url.href)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = url.href;
  document.head.append(link);
}

/** uPlot, loading its script and the stylesheets unless the page already has them. */
export async function loadUplot() {
  ensureStylesheet(new URL("uPlot.min.css", VENDOR));
  ensureStylesheet(new URL("../css/viewer.css", import.meta.url)); // holds the chart's rc-* rules
  if (!window.uPlot) await loadScript(new URL("uPlot.iife.min.js", VENDOR).href);
  return window.uPlot;
}

/** Columns for uPlot: x (time in seconds, or match number), score, mu ± sigma, mu, sigma. */
export function columns(points, byMatch) {
  const cols = [[], [], [], [], [], []];
  for (const [i, [time, score, mu, sigma]] of points.entries()) {
    cols[0].push(byMatch ? i + 1 : Date.parse(time) / 1000);
    cols[1].push(score);
    cols[2].push(mu + sigma);
    cols[3].push(mu - sigma);
    cols[4].push(mu);
    cols[5].push(sigma);
  }
  return cols;
}

/** The indices where the version that played differs from the match before: [[index, n], ...]. */
export function versionChanges(points) {
  const marks = [];
  for (let i = 1; i < points.length; i++) {
    const [was, now] = [points[i - 1][4], points[i][4]];
    if (now !== undefined && now !== null && now !== was) marks.push([i, now]);
  }
  return marks;
}

function versionPlugin(marks) {
  const draw = (u) => {
    const { ctx } = u;
    const { top, height } = u.bbox;
    ctx.save();
    ctx.strokeStyle = "#7c3aed";
    ctx.fillStyle = "#7c3aed";
    ctx.setLineDash([4, 4]);
    ctx.font = `${Math.round(11 * devicePixelRatio)}px system-ui, sans-serif`;
    for (const [i, number] of marks) {
      const x = Math.round(u.valToPos(u.data[0][i], "x", true));
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      const label = `v${number}`;
      const room = u.bbox.left + u.bbox.width - x;
      const shift = room < 30 * devicePixelRatio ? -ctx.measureText(label).width - 3 : 3;
      ctx.fillText(label, x + shift * (shift > 0 ? devicePixelRatio : 1), top + 12 * devicePixelRatio);
    }
    ctx.restore();
  };
  return { hooks: { draw } };
}

function node(tag, className, text = "") {
  const made = document.createElement(tag);
  made.className = className;
  if (text) made.textContent = text;
  return made;
}

function fmt(value) {
  return value === null || value === undefined ? "–" : value.toFixed(1);
}

function tooltipPlugin(tip, data, times, points) {
  const show = (u) => {
    const i = u.cursor.idx;
    if (i === null || i === undefined) {
      tip.hidden = true;
      return;
    }
    const when = new Date(times[i] * 1000).toISOString().replace("T", " ").slice(0, 16);
    tip.replaceChildren(
      node("div", "rc-when", `match ${i + 1} · ${when} UTC · version ${points[i][4] ?? "?"}`),
      node("div", "rc-score", `score ${fmt(data[1][i])}`),
      node("div", "rc-mu", `μ ${fmt(data[4][i])} ± σ ${fmt(data[5][i])}`),
    );
    tip.hidden = false;
    const left = u.valToPos(data[0][i], "x");
    const top = u.valToPos(data[1][i], "y");
    tip.style.left = `${Math.min(left + 12, u.over.clientWidth - 150)}px`;
    tip.style.top = `${Math.max(0, top - 54)}px`;
  };
  return { hooks: { setCursor: show } };
}

function xAxis(byMatch) {
  const axis = { stroke: "#667085", grid: { stroke: "#eef0f4" } };
  if (!byMatch) return axis;
  return {
    ...axis,
    label: "rated match",
    incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000], // whole matches only
    values: (u, ticks) => ticks.map((t) => (Number.isInteger(t) ? t : "")),
  };
}

function options(width, tip, data, times, byMatch, points) {
  const x = byMatch ? { time: false } : { time: true, range: (u, min, max) => timeRange(min, max) };
  return {
    width,
    height: 260,
    plugins: [tooltipPlugin(tip, data, times, points), versionPlugin(versionChanges(points))],
    cursor: { points: { size: 7 } },
    scales: { x },
    legend: { show: false },
    axes: [xAxis(byMatch), { stroke: "#667085", grid: { stroke: "#eef0f4" }, size: 50 }],
    series: [
      {},
      {
        label: "score (μ − 3σ)",
        stroke: "#2563eb",
        width: 2,
        points: { show: data[0].length < 60 },
      },
      { label: "μ + σ", stroke: "rgba(245,158,11,0.35)", width: 1, points: { show: false } },
      { label: "μ − σ", stroke: "rgba(245,158,11,0.35)", width: 1, points: { show: false } },
      { label: "μ", stroke: "#d97706", width: 1.5, dash: [6, 4] },
      { label: "σ", show: false },
    ],
    bands: [{ series: [2, 3], fill: "rgba(245,158,11,0.14)" }],
  };
}

function legend() {
  const box = node("div", "rc-legend");
  box.append(
    node("span", "rc-key score", "score (μ − 3σ)"),
    node("span", "rc-key mu", "μ"),
    node("span", "rc-key band", "μ ± σ"),
  );
  return box;
}

/** The x range shown for ``[min, max]``: at least an hour wide, so close points stay apart. */
export function timeRange(min, max) {
  const pad = Math.max(0, MIN_SPAN - (max - min)) / 2;
  return [min - pad, max + pad];
}

function rangeButtons(chart, times) {
  const bar = node("div", "rc-ranges");
  const first = times[0];
  const last = times[times.length - 1];
  for (const [label, span] of RANGES) {
    const button = node("button", "rc-range", label);
    button.type = "button";
    button.dataset.range = label;
    button.disabled = span !== Infinity && last - first < span / 4;
    button.addEventListener("click", () => {
      bar.querySelector(".on")?.classList.remove("on");
      button.classList.add("on");
      const [min, max] = timeRange(span === Infinity ? first : Math.max(first, last - span), last);
      chart.setScale("x", { min, max });
    });
    bar.append(button);
  }
  bar.lastChild.classList.add("on");
  return bar;
}

async function fetchPoints(src) {
  const response = await fetch(src, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  const body = await response.json();
  return Array.isArray(body) ? body : (body.data ?? []);
}

/** Draw the chart of ``root`` (its data-src) in place of what the server drew there. */
export async function mountChart(root) {
  const points = await fetchPoints(root.dataset.src);
  if (points.length < 2) {
    root.replaceChildren(
      node(
        "p",
        "rc-empty",
        "No rating history yet: the bot has not played rated matches on this ladder.",
      ),
    );
    root.dataset.points = String(points.length);
    return null;
  }
  const uPlot = await loadUplot();
  const times = points.map(([time]) => Date.parse(time) / 1000);
  // Matches played within a day of each other read better one after another than on a clock.
  const byMatch = times[times.length - 1] - times[0] < DAY;
  const data = columns(points, byMatch);
  const plot = node("div", "rc-plot");
  const tip = node("div", "rc-tip");
  tip.hidden = true;
  root.replaceChildren(plot);
  root.classList.add("rc");
  const settings = options(root.clientWidth || 640, tip, data, times, byMatch, points);
  const chart = new uPlot(settings, data, plot);
  chart.over.append(tip);
  if (!byMatch) root.prepend(rangeButtons(chart, data[0]));
  root.dataset.axis = byMatch ? "match" : "time";
  root.append(legend());
  new ResizeObserver(() => chart.setSize({ width: root.clientWidth, height: 260 })).observe(root);
  root.dataset.points = String(points.length);
  root.dataset.versionMarks = versionChanges(points)
    .map(([, number]) => number)
    .join(",");
  root.chart = chart;
  return chart;
}

const host = document.getElementById("rating-chart");
if (host?.dataset.src) {
  mountChart(host).catch((error) => {
    host.dataset.error = error.message;
  });
}
