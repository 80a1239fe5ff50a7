// attnlab attention explorer, part 4: the heads of one layer overlaid, each in its own colour
// and each switchable: lines from a left column of tokens (queries) to a right column (keys),
// and the matrix with each cell split into one stripe per head.

const SVG_NS = "http://www.w3.org/2000/svg"; // an XML namespace name, not a fetched address
const MIN_LINE = 0.02; // lines below this weight are left out unless a token is hovered
const MAX_LINES = 6000; // the heaviest lines are kept when there are more (long sentences)
const ROW_PX = 22;

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

// which lines to draw: all of a hovered or chosen token's, else the heavier ones
function overlayLines() {
  const focus = state.hover || (state.row !== null ? { index: state.row, side: "query" } : null);
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

const rowY = (i) => OVERLAY.pad + (i + 0.5) * ROW_PX;
let overlaySvg = null; // the <svg> of the lines view: its token labels stay, its lines are redrawn

// the two token columns; hovering or focusing a label shows only its lines
function renderOverlayLines() {
  const tokens = view().tokens;
  const height = tokens.length * ROW_PX + 2 * OVERLAY.pad;
  overlaySvg = svgEl("svg", {
    "data-testid": "lines", width: OVERLAY.width, height, viewBox: `0 0 ${OVERLAY.width} ${height}`,
    "aria-label": "Lines from each query (left) to the keys it attends to (right)",
  });
  overlaySvg.append(svgEl("g", { "stroke-linecap": "round", "data-testid": "line-group" }));
  tokens.forEach((t, i) => {
    for (const [side, x, anchor] of [["query", OVERLAY.left, "end"], ["key", OVERLAY.right, "start"]]) {
      const text = svgEl("text", {
        x, y: rowY(i), "text-anchor": anchor, "dominant-baseline": "middle", tabindex: 0,
        "data-testid": side === "query" ? "left-token" : "right-token", "data-index": i, "data-side": side,
      }, shown(t));
      text.append(svgEl("title", {}, `${t} (${side === "query" ? "what it attends to" : "what attends to it"})`));
      hoverable(text, i, side);
      text.addEventListener("click", () => selectRow(i));
      text.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          selectRow(i);
        }
      });
      overlaySvg.append(text);
    }
  });
  byTestId("lines-box").replaceChildren(overlaySvg);
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

// the matrix of several heads: each cell split into one stripe per shown head, its colour
// as strong as the head's weight; token labels along both axes
function drawStripes(ctx, x0, y0, tokens, heads, colours, cell) {
  const n = tokens.length;
  const margin = 110;
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(x0, y0, margin + n * cell, margin + n * cell);
  ctx.font = "12px system-ui, sans-serif";
  ctx.fillStyle = "#1d2330";
  ctx.textBaseline = "middle";
  const label = (t) => { const s = shown(t); return s.length > 14 ? `${s.slice(0, 13)}…` : s; };
  tokens.forEach((t, i) => {
    ctx.textAlign = "right";
    ctx.fillText(label(t), x0 + margin - 6, y0 + margin + (i + 0.5) * cell);
    ctx.save();
    ctx.translate(x0 + margin + (i + 0.5) * cell, y0 + margin - 6);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "left";
    ctx.fillText(label(t), 0, 0);
    ctx.restore();
  });
  heads.forEach((w, k) => {
    const stripe = cell / heads.length;
    ctx.fillStyle = colours[k];
    w.forEach((row, i) =>
      row.forEach((x, j) => {
        ctx.globalAlpha = Math.min(1, x);
        ctx.fillRect(x0 + margin + j * cell + k * stripe, y0 + margin + i * cell, stripe, cell);
      }),
    );
  });
  ctx.globalAlpha = 1;
  ctx.strokeStyle = "#e5e7eb";
  ctx.strokeRect(x0 + margin, y0 + margin, n * cell, n * cell);
  return margin + n * cell;
}

const cellSize = (n) => Math.max(4, Math.min(28, Math.floor(420 / n)));

function renderOverlayMatrix() {
  const tokens = view().tokens;
  const cell = cellSize(tokens.length);
  const size = 110 + tokens.length * cell;
  const canvas = el("canvas", { width: size, height: size, "data-testid": "overlay-matrix", role: "img",
    "aria-label": "The matrix of the shown heads, one coloured stripe per head in each cell" });
  const hs = shownHeads();
  drawStripes(canvas.getContext("2d"), 0, 0, tokens, hs.map((hi) => weightsOf(layerHeads()[hi])), hs.map(headColour), cell);
  byTestId("overlay-matrix-box").replaceChildren(canvas);
}

function renderOverlay() {
  renderOverlaySwitches();
  renderOverlayLines();
  renderOverlayMatrix();
}
