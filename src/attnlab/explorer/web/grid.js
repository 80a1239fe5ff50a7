// attnlab attention explorer, part 3: maps. A labelled map (cells on a canvas, token labels
// thinned so they never overlap, hover for the numbers), every head of every layer as a
// layers × heads grid, the sentence shaded in place by one query's weights (CircuitsVis's
// text view), and attention composed across layers (rollout, value-weighted) beside the raw.

const LABEL_PX = 14; // one label's line: with thinner cells only every k-th label is shown
const LABEL_W = 96; // the room for the row labels (and the column labels' height), px
const MAX_CELL = 28;
const FULL_CELL = 16; // "full size": every label shown

// the labels shown along an axis of n cells: every step-th, and the focused one (its
// neighbours closer than a step left out, so that no two labels overlap)
function labelIndices(n, cell, focus) {
  const step = Math.max(1, Math.ceil(LABEL_PX / cell));
  const keep = [];
  for (let i = 0; i < n; i += step) if (focus === null || Math.abs(i - focus) >= step) keep.push(i);
  if (focus !== null) keep.push(focus);
  return keep.sort((a, b) => a - b);
}

// the cell size for n tokens in `width` px (room for the labels taken off), by the zoom
function cellFor(n, width, least = 2) {
  const fit = Math.max(least, Math.min(MAX_CELL, Math.floor((width - LABEL_W - 8) / n)));
  return state.zoom === "full" ? Math.max(fit, FULL_CELL) : fit;
}

// an n×m map with the tokens (queries) down its left and the keys (``keys``: the tokens
// themselves, or a two-sequence view's sources) along its top. paint(ctx, cell) draws the
// cells; describe(i, j) is the hover text of a cell; choose(i) runs on a click. The returned
// node's mark(i, j) outlines row i (orange) and column j (green; by default the same token).
function labelledMap({ tokens, keys = tokens, cell, paint, describe, choose, testid, focus = null }) {
  const n = tokens.length;
  const m = keys.length;
  const same = keys === tokens;
  const box = el("div", { class: "map", "data-testid": testid, "data-cell": cell });
  const top = el("div", { class: "map-top", "aria-hidden": "true" });
  const left = el("div", { class: "map-left", "aria-hidden": "true" });
  top.style.width = `${m * cell}px`;
  left.style.height = `${n * cell}px`;
  const label = (i, focused, list) => tokenLabel("span",
    { class: focused ? "map-label focus" : "map-label", "data-testid": "axis-label", "data-index": i }, list[i]);
  for (const j of labelIndices(m, cell, same ? focus : null)) {
    const col = label(j, same && j === focus, keys);
    col.style.left = `${j * cell + cell / 2}px`;
    hoverable(col, j, "key"); // a label previews its token, as the table's headers do
    top.append(col);
  }
  for (const i of labelIndices(n, cell, focus)) {
    const row = label(i, i === focus, tokens);
    row.style.top = `${i * cell + cell / 2}px`;
    hoverable(row, i, "query");
    left.append(row);
  }
  const canvas = el("canvas", { width: m * cell, height: n * cell, role: "img", "aria-label": ui("map.label") });
  paint(canvas.getContext("2d"), cell);
  const body = el("div", { class: "map-body" });
  const rowMark = el("div", { class: "map-row", hidden: "" });
  const colMark = el("div", { class: "map-col", hidden: "" });
  body.append(canvas, rowMark, colMark);
  box.append(el("div"), top, left, body);
  const at = (event) => {
    const r = canvas.getBoundingClientRect();
    const j = Math.floor(((event.clientX - r.left) / r.width) * m);
    const i = Math.floor(((event.clientY - r.top) / r.height) * n);
    return i >= 0 && i < n && j >= 0 && j < m ? [i, j] : null;
  };
  canvas.addEventListener("mousemove", (event) => {
    const ij = at(event);
    tip(event, ij ? `“${shown(tokens[ij[0]])}” → “${shown(keys[ij[1]])}”: ${describe(...ij)}` : null);
  });
  canvas.addEventListener("mouseleave", (event) => tip(event, null));
  if (choose) canvas.addEventListener("click", (event) => at(event) && choose(at(event)[0]));
  box.mark = (i, j = same ? i : null) => {
    rowMark.hidden = i === null;
    colMark.hidden = j === null;
    rowMark.style.height = colMark.style.width = `${cell}px`;
    if (i !== null) rowMark.style.top = `${i * cell}px`;
    if (j !== null) colMark.style.left = `${j * cell}px`;
  };
  box.mark(focus);
  return box;
}

// paints a weight matrix, one cell per query-key pair, in the chosen colour scale
const paintWeights = (w, rgb = BLUE) => (ctx, cell) =>
  w.forEach((row, i) =>
    row.forEach((x, j) => {
      ctx.fillStyle = rgbText(mix(level(x), rgb));
      ctx.fillRect(j * cell, i * cell, cell, cell);
    }),
  );

// an n×m canvas of weights, one pixel per pair (scaled up by CSS): white 0, blue 1
function heatmapCanvas(w, rgb = BLUE) {
  const n = w.length;
  const m = w[0].length;
  const canvas = el("canvas", { width: m, height: n });
  canvas.style.aspectRatio = `${m} / ${n}`;
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(m, n);
  w.forEach((row, i) =>
    row.forEach((x, j) => {
      image.data.set([...mix(level(x), rgb), 255], 4 * (i * m + j));
    }),
  );
  ctx.putImageData(image, 0, 0);
  return canvas;
}

function openHead(layer, h) {
  state.mode = "head";
  state.layer = layer;
  state.head = h;
  state.hidden.clear();
  render();
  byTestId("mode-head").focus();
}

// the grid: one row per layer, one column per head; the chosen token's row (orange) and
// column (green) outlined in every map; hover a map for the tokens and the weight
function renderGrid() {
  const grid = byTestId("grid");
  const tokens = view().tokens;
  const keys = keyTokens();
  const n = tokens.length;
  const m = keys.length;
  const layers = view().layers;
  grid.style.setProperty("--cols", String(Math.max(...layers.map((l) => l.heads.length))));
  const rows = layers.map((layer, li) => {
    const row = el("div", { class: "grid-row", "data-testid": "grid-row", "data-layer": li });
    row.append(el("div", { class: "grid-layer" }, ui("layer.n", { n: li + 1 })));
    layer.heads.forEach((h, hi) => {
      const button = el("button", {
        type: "button", class: "thumb", "data-testid": "thumb", "data-layer": li, "data-head": hi,
        "aria-label": ui("grid.open", { layer: li + 1, head: h.name }), // no title: the hover shows the numbers
      });
      if (li === state.layer && hi === state.head) button.classList.add("current");
      const w = weightsOf(h);
      const map = heatmapCanvas(w);
      map.setAttribute("data-testid", "thumb-map");
      map.setAttribute("aria-hidden", "true");
      const frame = el("span", { class: "thumb-frame" });
      frame.append(map);
      if (state.row !== null) {
        // a box around the row and column; with cells under ~3 px, a line through their middle
        const thin = n > 40;
        const mark = el("span", { class: thin ? "thumb-row thin" : "thumb-row", "data-testid": "thumb-row" });
        const at = thin ? `calc(${(100 * (state.row + 0.5)) / n}% - 0.5px)` : `${(100 * state.row) / n}%`;
        mark.style.top = at;
        mark.style.height = thin ? "1px" : `${100 / n}%`;
        frame.append(mark);
        if (!twoSeq()) { // a query of a two-sequence view is no key: it has no column
          const col = el("span", { class: thin ? "thumb-col thin" : "thumb-col" });
          col.style.left = at;
          col.style.width = mark.style.height;
          frame.append(col);
        }
      }
      map.addEventListener("mousemove", (event) => {
        const r = map.getBoundingClientRect();
        const j = Math.min(m - 1, Math.floor(((event.clientX - r.left) / r.width) * m));
        const i = Math.min(n - 1, Math.floor(((event.clientY - r.top) / r.height) * n));
        tip(event, `L${li + 1} H${hi + 1} ${h.name}: “${shown(tokens[i])}” → “${shown(keys[j])}” ${fmt(w[i][j], 3)}`);
      });
      map.addEventListener("mouseleave", (event) => tip(event, null));
      button.append(frame, el("span", { class: "thumb-label" }, `H${hi + 1}`));
      button.addEventListener("click", () => openHead(li, hi));
      row.append(button);
    });
    return row;
  });
  const said = twoSeq() ? "grid.chosen_row" : "grid.chosen";
  const chosen = state.row === null ? ui("grid.choose") : ui(said, { token: shown(tokens[state.row]), n: state.row + 1 });
  grid.replaceChildren(el("p", { class: "note", "data-testid": "grid-chosen" }, chosen), colourBar(), ...rows);
}

// --- the sentence itself, each token shaded by the chosen query's weight on it --------------
const inText = (t) => t.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => shown(c)); // spaces, tabs, newlines kept
// word-level tokens (no token carries its own space, as BPE tokens do) are set apart by spaces
const wordTokens = (tokens) => !tokens.some((t, i) => i > 0 && /^\s|\s$/.test(t));
let textSpans = [];
let textTokens = null;
let textTitle = null;

// in a two-sequence view the text shaded is the source (the keys), a query chosen above it
function renderText() {
  const box = byTestId("text-body");
  if (textTokens !== keyTokens() || !box.contains(textSpans[0] || null)) {
    textTokens = keyTokens();
    const choosable = !twoSeq();
    textSpans = textTokens.map((t, j) => {
      const span = el("span", { class: "text-token", "data-testid": "text-token", "data-index": j }, inText(t));
      if (!choosable) return span;
      span.setAttribute("tabindex", 0);
      span.addEventListener("click", () => selectRow(j));
      span.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          selectRow(j);
        }
      });
      hoverable(span, j, "query");
      return span;
    });
    const para = el("p", { class: "text-view", "data-testid": "text-view" });
    const gap = wordTokens(textTokens) ? " " : "";
    textSpans.forEach((span, j) => para.append(...(j && gap ? [gap, span] : [span])));
    textTitle = el("p", { class: "note", "data-testid": "text-title" });
    box.replaceChildren(textTitle, el("div", { class: "bar-slot" }), para);
  }
  box.querySelector(".bar-slot").replaceChildren(colourBar()); // the colour scale may have changed
  shadeText();
}

// recolour the spans in place (a hover never replaces the element under the pointer)
function shadeText() {
  const i = focusIndex();
  const h = head();
  const w = i === null ? null : weightsOf(h)[i];
  textTitle.textContent = i === null ? ui(twoSeq() ? "text.none_source" : "text.none")
    : ui(twoSeq() ? "text.shaded_source" : "text.shaded", { token: shown(view().tokens[i]), layer: state.layer + 1, head: h.name });
  textSpans.forEach((span, j) => {
    const x = w ? w[j] : 0;
    const t = level(x);
    span.style.backgroundColor = t > 0 ? rgbText(mix(t, BLUE)) : "";
    span.classList.toggle("dark", t > 0.55);
    span.classList.toggle("query", !twoSeq() && j === i);
    span.dataset.weight = String(x);
    span.title = w ? ui("text.weight", { w: fmt(x, 4) }) : "";
  });
}

// --- attention composed across layers: raw (head-averaged) | rollout | value-weighted -----
const composedReason = () => (twoSeq() ? ui("composed.two")
  : view().fixed ? ui("composed.fixed", { reason: view().fixed }) : ui("composed.none"));

function renderComposed() {
  const box = byTestId("composed-body");
  const c = view().composed;
  if (!c) {
    box.replaceChildren(el("p", { class: "fixed" }, composedReason()));
    return;
  }
  const tokens = view().tokens;
  const n = tokens.length;
  const ws = layerHeads().map(weightsOf);
  const raw = ws[0].map((row, i) => row.map((_, j) => ws.reduce((a, w) => a + w[i][j], 0) / ws.length));
  const width = Math.max(300, (box.clientWidth || 1200) / 3 - 12);
  const cell = cellFor(n, width);
  const maps = [
    ["composed-raw", ui("composed.raw", { layer: state.layer + 1 }), raw],
    ["composed-rollout", ui("composed.rollout", { layer: state.layer + 1 }), c.rollout[state.layer]],
    // value-weighted is optional (no value vectors: a raw attention tensor; the note says why)
    c.value_weighted ? ["composed-value", ui("composed.value", { layer: state.layer + 1 }), c.value_weighted[state.layer]] : null,
  ].filter((m) => m !== null).map(([testid, caption, w]) => {
    const figure = el("figure", { class: "composed-map" });
    figure.append(el("figcaption", {}, caption), labelledMap({
      tokens, cell, testid, focus: state.row, paint: paintWeights(w), describe: (i, j) => fmt(w[i][j], 4), choose: selectRow,
    }));
    return figure;
  });
  const row = el("div", { class: "composed-row" });
  row.append(...maps);
  const own = atStart() ? "" : ui("composed.own");
  const intro = ui(c.value_weighted ? "composed.intro_value" : "composed.intro");
  box.replaceChildren(
    el("p", { class: "note" }, intro),
    el("p", { class: "note composed-note", "data-testid": "composed-note" }, c.note || ""),
    colourBar(),
    row,
    el("p", { class: "note" }, ui("composed.rows", { own })),
  );
}
