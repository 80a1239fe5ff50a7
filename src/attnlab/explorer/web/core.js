// attnlab attention explorer, part 1: helpers, the weights arithmetic, the page state and URL.
// The parts (core, head, grid, overlay, export, main) are joined in that order into one
// script inside one function scope by attnlab.explorer.page.render. Input: the JSON in
// #attnlab-data (its shape: attnlab.explorer.page.data). User text reaches the page only
// through textContent, setAttribute or canvas fillText, never as markup.

const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);
const readJSON = (id) => JSON.parse(document.getElementById(id).textContent);
const config = readJSON("attnlab-config");
let data = readJSON("attnlab-data");
// the interface's text in the page's language (attnlab/i18n/explorer.json): ui(key, {field})
const TEXT = readJSON("attnlab-ui"); // not "attnlab-text": the served page's text box has that id
const ui = (key, fields = {}) => TEXT[key].replace(/\{(\w+)\}/g, (_, f) => String(fields[f]));

const MODES = ["head", "grid", "overlay", "text", "composed"];
const COLOUR_SCALES = { linear: ui("scale.linear"), power: ui("scale.power"), log: ui("scale.log") };
const ZOOMS = { fit: ui("zoom.fit"), full: ui("zoom.full") };
const state = {
  mode: "head", // one head | all heads in a grid | the heads of a layer overlaid
  view: 0, // which sentence (data.views)
  layer: 0,
  head: 0,
  row: null, // the chosen token (query), or null
  hover: null, // {index, side: "query" | "key"} while a token is hovered or focused
  causal: !!data.causal,
  scale: data.scale !== false,
  hidden: new Set(), // heads switched off in the overlay
  colours: "linear", // how a weight maps to a shade: COLOUR_SCALES
  zoom: "fit", // matrices fitted to the page, or at full size in a scroll box: ZOOMS
  text: config.text || "", // the served page's sentence
};

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

const view = () => data.views[state.view];
const layerHeads = () => view().layers[state.layer].heads;
const head = () => layerHeads()[state.head];

// --- two sequences: a view's keys may be another sequence, its "sources" (a translation's
// source sentence under the target's queries); then its matrices are n×m, rows the tokens
const twoSeq = (v = view()) => Array.isArray(v.sources);
const keyTokens = (v = view()) => (twoSeq(v) ? v.sources : v.tokens);
// the view's own mask ("causal" | "bidirectional" | "cross"), or null: the causal switch's
const attendsOf = (v = view()) => v.attends || (twoSeq(v) ? "cross" : null);
// the causal mask as the current view has it: its model's own, else the switch's
const masked = () => (attendsOf() ? attendsOf() === "causal" : state.causal);

// --- tokens as shown: spaces and control characters visible, long ones shortened ---------
const MAX_SHOWN = 32;
function shown(token) {
  const visible = token
    .replace(/ /g, "·")
    .replace(/\n/g, "↵")
    .replace(/\t/g, "⇥")
    .replace(/[\u0000-\u001f\u007f]/g, (c) => String.fromCharCode(0x2400 + (c === "\u007f" ? 0x21 : c.charCodeAt(0))));
  const chars = Array.from(visible);
  return chars.length > MAX_SHOWN ? `${chars.slice(0, 20).join("")}…${chars.slice(-8).join("")}` : visible;
}
// a label for a token: its shown form, with the whole token on hover when they differ
function tokenLabel(tag, attrs, token) {
  const node = el(tag, attrs, shown(token));
  if (shown(token) !== token) node.setAttribute("title", token);
  return node;
}

// --- weights: softmax(q·kᵀ · (1/√d_k or 1) + bias), masked under the causal mask (masked()) --
const isFixed = (h) => !h.scores && !(h.q && h.k);
// the switches at the data's starting state (a view with its own mask ignores the causal one)
const atStart = () => (attendsOf() !== null || state.causal === !!data.causal) && state.scale === (data.scale !== false);

const rawCache = new WeakMap();
function rawScores(h) {
  let s = rawCache.get(h);
  if (!s) {
    s = h.q ? h.q.map((qi) => h.k.map((kj) => qi.reduce((a, x, m) => a + x * kj[m], 0))) : h.scores;
    rawCache.set(h, s);
  }
  return s;
}

const allowedKey = (h, causal, i, j) => !causal || (j <= i && (!h.window || i - j < h.window));

// the pre-softmax score of query i and key j under the switches (-Infinity where masked)
function score(h, causal, scale, i, j) {
  if (!allowedKey(h, causal, i, j)) return -Infinity;
  const s = rawScores(h)[i][j];
  return (scale ? s / Math.sqrt(h.d_k) : s) + (h.bias ? h.bias[i][j] : 0);
}

function computeWeights(h, causal, scale) {
  const m = rawScores(h)[0].length; // keys: n, or the m sources of a two-sequence view
  return rawScores(h).map((_, i) => {
    const z = [];
    for (let j = 0; j < m; j++) z.push(score(h, causal, scale, i, j));
    const max = z.reduce((a, b) => Math.max(a, b), -Infinity);
    const e = z.map((v) => (v === -Infinity ? 0 : Math.exp(v - max))); // masked: exactly 0
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / total);
  });
}

// the weights shown for a head: its own (the model's) at the starting switches, else recomputed
const weightCache = new WeakMap();
function weightsOf(h) {
  if (h.weights && (isFixed(h) || atStart())) return h.weights;
  const key = `${masked()}/${state.scale}`;
  let cached = weightCache.get(h);
  if (!cached || cached.key !== key) {
    cached = { key, w: computeWeights(h, masked(), state.scale) };
    weightCache.set(h, cached);
  }
  return cached.w;
}

// effective number of tokens a row spreads over: exp(entropy), 1 .. n
function effective(row) {
  let ent = 0;
  for (const w of row) if (w > 0) ent -= w * Math.log(w);
  return Math.exp(ent);
}

// an exact 0 (masked) prints as "0"; a tiny weight as "0.00"
const fmt = (w, digits) => (w === 0 ? "0" : w.toFixed(digits));
const fmtNum = (x) => String(Number(x.toFixed(2)));
const fmtSig = (x) => (Number.isFinite(x) ? String(Number(x.toPrecision(4))) : "−∞");

// distinct colours for the heads of a layer, cycled beyond 16: Okabe–Ito's first seven, then
// each next colour the one farthest (CIELAB) from those before it, from Kelly's and Tableau's
// lists, none lighter than L* 80 (lines on white). The nearest two of the first 16 differ by
// ΔE 26; the old Okabe–Ito-then-Tableau list put heads 9–12 within ΔE 12 of heads 1–5.
const PALETTE = [
  "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#000080",
  "#8db600", "#c2b280", "#ff1493", "#be0032", "#654522", "#f99379", "#7f7f7f", "#00ced1",
];
const headColour = (h) => PALETTE[h % PALETTE.length];

// --- shades: a weight → a level in [0, 1] under the chosen colour scale → a colour ----------
// linear shows where most of the weight goes; power (√w) and log lift the small weights that
// a long sentence spreads its attention over (log: white at 0.001 or less).
const LOG_FLOOR = 1e-3;
function level(w, scale = state.colours) {
  if (!(w > 0)) return 0;
  if (scale === "power") return Math.sqrt(Math.min(1, w));
  if (scale === "log") return w <= LOG_FLOOR ? 0 : Math.min(1, 1 + Math.log10(w) / 3);
  return Math.min(1, w);
}
const WHITE = [255, 255, 255];
const BLUE = [37, 99, 235];
const RED = [220, 38, 38];
const mix = (t, rgb) => WHITE.map((c, k) => Math.round(c + t * (rgb[k] - c)));
const rgbText = (rgb) => `rgb(${rgb.join(", ")})`;
const TICKS = { linear: [0, 0.25, 0.5, 0.75, 1], power: [0, 0.05, 0.25, 0.5, 1], log: [0.001, 0.01, 0.1, 1] };

// the colour bar of a map: shade against weight, its ticks placed by the colour scale
function colourBar(rgb = BLUE, label = ui("bar.weight")) {
  const box = el("div", { class: "colour-bar", "data-testid": "colour-bar", "data-scale": state.colours });
  const width = 160;
  const canvas = el("canvas", { width, height: 1, "aria-hidden": "true" });
  const ctx = canvas.getContext("2d");
  for (let x = 0; x < width; x++) {
    ctx.fillStyle = rgbText(mix(x / (width - 1), rgb));
    ctx.fillRect(x, 0, 1, 1);
  }
  const ticks = el("div", { class: "ticks" });
  for (const t of TICKS[state.colours]) {
    const tick = el("span", {}, String(t));
    tick.style.left = `${(100 * level(t)).toFixed(1)}%`;
    ticks.append(tick);
  }
  const bar = el("div", { class: "bar-box" });
  bar.append(canvas, ticks);
  box.append(el("span", { class: "bar-label" }, `${label} (${COLOUR_SCALES[state.colours]})`), bar);
  return box;
}

// one floating line of text beside the pointer: the numbers under it (maps, strips)
let tipNode = null;
function tip(event, text) {
  if (!tipNode) {
    tipNode = el("div", { class: "tip", "data-testid": "tooltip", role: "status" });
    document.body.append(tipNode);
  }
  tipNode.hidden = text === null;
  if (text === null) return;
  tipNode.textContent = text;
  const x = Math.min(event.clientX + 14, window.innerWidth - tipNode.offsetWidth - 6);
  tipNode.style.left = `${Math.max(4, x)}px`;
  tipNode.style.top = `${event.clientY + 18}px`;
}

// --- the page state in the URL (#view=grid&layer=2&head=3&token=5&causal=1&scale=0) --------
function stateParams() {
  const p = new URLSearchParams();
  p.set("view", state.mode);
  if (data.views.length > 1) p.set("sentence", String(state.view + 1));
  p.set("layer", String(state.layer + 1));
  p.set("head", String(state.head + 1));
  if (state.row !== null) p.set("token", String(state.row + 1));
  p.set("causal", state.causal ? "1" : "0");
  p.set("scale", state.scale ? "1" : "0");
  if (state.colours !== "linear") p.set("colours", state.colours);
  if (state.zoom !== "fit") p.set("zoom", state.zoom);
  if (state.hidden.size) p.set("off", [...state.hidden].sort((a, b) => a - b).map((h) => h + 1).join(","));
  if (config.api && state.text) p.set("text", state.text);
  return p;
}

function writeURL() {
  const hash = `#${stateParams().toString()}`;
  byTestId("link").setAttribute("href", hash);
  try {
    history.replaceState(null, "", hash);
  } catch (err) {
    // a sandboxed notebook frame may refuse; the link above still carries the state
  }
}

// read the state from a hash; out-of-range values fall back to the defaults
function readURL(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const index = (key, size) => {
    const i = Number.parseInt(p.get(key), 10) - 1;
    return Number.isInteger(i) && i >= 0 && i < size ? i : null;
  };
  if (MODES.includes(p.get("view"))) state.mode = p.get("view");
  state.view = index("sentence", data.views.length) ?? 0;
  state.layer = index("layer", view().layers.length) ?? 0;
  state.head = index("head", layerHeads().length) ?? 0;
  state.row = index("token", view().tokens.length);
  state.colours = Object.hasOwn(COLOUR_SCALES, p.get("colours") || "") ? p.get("colours") : "linear";
  state.zoom = Object.hasOwn(ZOOMS, p.get("zoom") || "") ? p.get("zoom") : "fit";
  if (p.has("causal")) state.causal = p.get("causal") === "1";
  if (p.has("scale")) state.scale = p.get("scale") === "1";
  state.hidden = new Set(
    (p.get("off") || "").split(",").map((x) => Number.parseInt(x, 10) - 1).filter((h) => h >= 0 && h < layerHeads().length),
  );
  return p.get("text");
}
