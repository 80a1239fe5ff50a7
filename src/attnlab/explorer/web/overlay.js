// attnlab attention explorer, part 4: the heads of one layer overlaid, each in its own colour
// and each switchable: lines from a left column of tokens (queries) to a right column (keys:
// the same tokens, or a two-sequence view's sources),
// and the matrix with each cell split into one stripe per head, a gap between stripes. A long
// sentence's line view shows one query's lines only (the chosen or hovered one, else the last).

const SVG_NS = "http://www.w3.org/2000/svg"; // an XML namespace name, not a fetched address
const MIN_LINE = 0.02; // lines below this weight are left out unless a token is hovered
const MAX_LINES = 6000; // the heaviest lines are kept when there are more (long sentences)
const CROWDED = 40; // above this many tokens, the lines of one query only
const rows = () => Math.max(view().tokens.length, keyTokens().length); // the taller column
const rowPx = () => (rows() > CROWDED ? 16 : 22);

function svgEl(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

const shownHeads = () => layerHeads().map((_, h) => h).filter((h) => !state.hidden.has(h));

function renderOverlaySwitches() {
  const items = layerHeads().map((h, hi) => {
    const label = el("label", { class: "swatch" });
    const box = el("input", { type: "checkbox", "data-testid": "overlay-head", "data-head": hi });
    box.checked = !state.hidden.has(hi);
    box.addEventListener("change", () => {
      if (box.checked) state.hidden.delete(hi);
      else state.hidden.add(hi);
      render();
    });
    const dot = el("span", { class: "dot" });
    dot.style.backgroundColor = headColour(hi);
    label.append(box, dot, el("span", {}, `${hi + 1}: ${h.name}`));
    return label;
  });
  byTestId("overlay-heads").replaceChildren(...items);
}

// which lines to draw: all of a hovered or chosen token's, else the heavier ones (in a long
// sentence: the last token's)
function overlayLines() {
  let focus = state.hover || (state.row !== null ? { index: state.row, side: "query" } : null);
  if (!focus && view().tokens.length > CROWDED) focus = { index: view().tokens.length - 1, side: "query" };
  const lines = [];
  for (const hi of shownHeads()) {
    const w = weightsOf(layerHeads()[hi]);
    w.forEach((row, i) =>
      row.forEach((x, j) => {
        if (x <= 0) return;
        if (focus && (focus.side === "query" ? i : j) !== focus.index) return;
        if (!focus && x < MIN_LINE) return;
        lines.push({ head: hi, i, j, w: x });
      }),
    );
  }
  if (lines.length > MAX_LINES) lines.sort((a, b) => b.w - a.w).splice(MAX_LINES);
  return { lines, focus };
}

const OVERLAY = { width: 520, left: 200, right: 320, pad: 14 };

const rowY = (i) => OVERLAY.pad + (i + 0.5) * rowPx();
let overlaySvg = null; // the <svg> of the lines view: its token labels stay, its lines are redrawn

// the two token columns; hovering or focusing a label shows only its lines
function renderOverlayLines() {
  const tokens = view().tokens;
  const height = rows() * rowPx() + 2 * OVERLAY.pad;
  overlaySvg = svgEl("svg", {
    "data-testid": "lines", width: OVERLAY.width, height, viewBox: `0 0 ${OVERLAY.width} ${height}`,
    "aria-label": ui("overlay.svg"),
  });
  overlaySvg.append(svgEl("g", { "stroke-linecap": "round", "data-testid": "line-group" }));
  const columns = [["query", OVERLAY.left, "end", tokens], ["key", OVERLAY.right, "start", keyTokens()]];
  for (const [side, x, anchor, list] of columns) {
    list.forEach((t, i) => {
      const text = svgEl("text", {
        x, y: rowY(i), "text-anchor": anchor, "dominant-baseline": "middle", tabindex: 0,
        "data-testid": side === "query" ? "left-token" : "right-token", "data-index": i, "data-side": side,
      }, shown(t));
      text.append(svgEl("title", {}, ui(side === "query" ? "overlay.query_title" : "overlay.key_title", { token: t })));
      hoverable(text, i, side);
      if (side === "query" || !twoSeq()) { // a source token is no query to choose
        text.addEventListener("click", () => selectRow(i));
        text.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            selectRow(i);
          }
        });
      }
      overlaySvg.append(text);
    });
  }
  const crowded = rows() > CROWDED ? ui("overlay.crowded", { n: rows() }) : ui("overlay.lines");
  byTestId("lines-box").replaceChildren(el("p", { class: "note", "data-testid": "lines-note" }, crowded), overlaySvg);
  drawOverlayLines();
}

function drawOverlayLines() {
  if (!overlaySvg) return;
  const { lines, focus } = overlayLines();
  overlaySvg.setAttribute("data-min-weight", String(focus ? 0 : MIN_LINE));
  const group = overlaySvg.querySelector("g");
  group.replaceChildren(...lines.map((line) => svgEl("line", {
    "data-testid": "line", "data-head": line.head, "data-i": line.i, "data-j": line.j, "data-weight": line.w,
    x1: OVERLAY.left + 6, y1: rowY(line.i), x2: OVERLAY.right - 6, y2: rowY(line.j),
    stroke: headColour(line.head), "stroke-opacity": Math.min(1, line.w).toFixed(3), "stroke-width": 2,
  })));
  overlaySvg.querySelectorAll("text").forEach((text) => {
    const on = focus && focus.side === text.dataset.side && focus.index === Number(text.dataset.index);
    text.classList.toggle("focus", !!on);
  });
}

// the matrix of several heads: each cell split into one stripe per shown head, a 1-px gap
// between stripes and between cells, each stripe's opacity the head's weight (under the
// colour scale). overlayCell is the least cell that holds 2-px stripes; cells too small
// for that (a long sentence fitted to the page) show the strongest head alone, in its colour.
const overlayCell = (heads) => Math.max(4, heads * 3 + 1);

const stripesFit = (heads, cell) => cell >= overlayCell(heads);

function paintStripes(ws, colours) {
  return (ctx, cell) => {
    const n = ws.length ? ws[0].length : 0; // queries
    const m = n ? ws[0][0].length : 0; // keys
    ctx.fillStyle = "#f8fafc";
    ctx.fillRect(0, 0, m * cell, n * cell);
    if (!stripesFit(ws.length, cell)) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < m; j++) {
          let best = 0;
          for (let k = 1; k < ws.length; k++) if (ws[k][i][j] > ws[best][i][j]) best = k;
          ctx.fillStyle = colours[best];
          ctx.globalAlpha = level(ws[best][i][j]);
          ctx.fillRect(j * cell, i * cell, cell, cell);
        }
      }
      ctx.globalAlpha = 1;
      return;
    }
    const stripe = Math.floor((cell - 1 - (ws.length - 1)) / ws.length); // whole px: crisp gaps
    ws.forEach((w, k) => {
      ctx.fillStyle = colours[k];
      w.forEach((row, i) =>
        row.forEach((x, j) => {
          ctx.globalAlpha = level(x);
          ctx.fillRect(j * cell + k * (stripe + 1), i * cell, stripe, cell - 1);
        }),
      );
    });
    ctx.globalAlpha = 1;
  };
}

function renderOverlayMatrix() {
  const tokens = view().tokens;
  const keys = keyTokens();
  const hs = shownHeads();
  const ws = hs.map((hi) => weightsOf(layerHeads()[hi]));
  const box = byTestId("overlay-matrix-box");
  const width = Math.max(360, box.clientWidth || 600); // the room the lines leave it
  const fit = cellFor(keys.length, width);
  const cell = state.zoom === "full" ? Math.max(fit, overlayCell(hs.length)) : fit;
  const map = labelledMap({
    tokens, keys, cell, testid: "overlay-map", focus: state.row, paint: paintStripes(ws, hs.map(headColour)), choose: selectRow,
    describe: (i, j) => hs.map((hi, k) => `H${hi + 1} ${fmt(ws[k][i][j], 3)}`).join(", "),
  });
  const canvas = map.querySelector("canvas");
  canvas.setAttribute("data-testid", "overlay-matrix");
  canvas.setAttribute("aria-label", ui("overlay.matrix"));
  const how = stripesFit(hs.length, cell) ? ui("overlay.stripes") : ui("overlay.strongest", { n: hs.length });
  box.replaceChildren(el("p", { class: "note", "data-testid": "stripes-note" }, how),
    colourBar([75, 85, 99], ui("bar.opacity")), map);
}
function renderOverlay() {
  renderOverlaySwitches();
  renderOverlayLines();
  renderOverlayMatrix();
}
