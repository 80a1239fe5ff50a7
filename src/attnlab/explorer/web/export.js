// attnlab attention explorer, part 5: download the current view as a PNG picture, or its
// weights as CSV or JSON (under the switches as they are now). Files are made in the page;
// nothing is sent anywhere. Pictures are drawn at twice their size whatever the screen's
// pixel ratio, with the title wrapped (never squeezed) and a colour bar.

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: name, "data-testid": "download-link" });
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function exportName(ext) {
  const what = {
    head: `layer${state.layer + 1}-head${state.head + 1}`,
    grid: "all-heads",
    overlay: `layer${state.layer + 1}-overlaid`,
    text: `layer${state.layer + 1}-head${state.head + 1}-text`,
    composed: `layer${state.layer + 1}-composed`,
  }[state.mode];
  return `attention-${what}.${ext}`;
}

// the heads the current view shows: one, the shown heads of the layer, or all
function exportedHeads() {
  if (state.mode === "head" || state.mode === "text") return [{ layer: state.layer, head: state.head }];
  if (state.mode === "composed") return layerHeads().map((_, h) => ({ layer: state.layer, head: h }));
  if (state.mode === "overlay") return shownHeads().map((h) => ({ layer: state.layer, head: h }));
  return view().layers.flatMap((layer, li) => layer.heads.map((_, hi) => ({ layer: li, head: hi })));
}

// a CSV field; text that a spreadsheet would run as a formula (=, +, -, @) gets a leading '
function csvField(value) {
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function exportCSV() {
  const tokens = view().tokens;
  const keys = keyTokens();
  const lines = [["layer", "head", "head_name", "query_position", "query", "key_position", "key", "weight"].join(",")];
  for (const { layer, head: hi } of exportedHeads()) {
    const h = view().layers[layer].heads[hi];
    weightsOf(h).forEach((row, i) =>
      row.forEach((w, j) => {
        lines.push([layer + 1, hi + 1, h.name, i + 1, tokens[i], j + 1, keys[j], w].map(csvField).join(","));
      }),
    );
  }
  download(new Blob([`${lines.join("\r\n")}\r\n`], { type: "text/csv" }), exportName("csv"));
}

function exportJSON() {
  const body = {
    title: data.title,
    sentence: view().name,
    tokens: view().tokens,
    ...(twoSeq() ? { sources: view().sources } : {}),
    ...(attendsOf() ? { attends: attendsOf() } : {}),
    causal: masked(),
    scale: state.scale,
    view: state.mode,
    heads: exportedHeads().map(({ layer, head: hi }) => {
      const h = view().layers[layer].heads[hi];
      return { layer: layer + 1, head: hi + 1, name: h.name, weights: weightsOf(h) };
    }),
  };
  if (state.mode === "composed" && view().composed) {
    const c = view().composed;
    body.composed = { layer: state.layer + 1, rollout: c.rollout[state.layer] };
    if (c.value_weighted) body.composed.value_weighted = c.value_weighted[state.layer];
  }
  download(new Blob([JSON.stringify(body)], { type: "application/json" }), exportName("json"));
}

const EXPORT_SCALE = 2;
const FONT = "system-ui, sans-serif";
const INK = "#1d2330";

// words of `text` in lines of at most `width` px (a word longer than a line is cut)
function wrapText(ctx, text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line ? `${line} ${word}` : word;
    if (ctx.measureText(next).width <= width || !line) line = next;
    else {
      lines.push(line);
      line = word;
    }
    while (ctx.measureText(line).width > width && line.length > 1) {
      let cut = line.length - 1;
      while (cut > 1 && ctx.measureText(line.slice(0, cut)).width > width) cut--;
      lines.push(line.slice(0, cut));
      line = line.slice(cut);
    }
  }
  return line ? [...lines, line] : lines;
}

// a white picture of width × height px plus the title's lines above, drawn at 2× (less only
// past 16,000 px a side or 40 million pixels, as a full-size overlay of a long sentence can
// be); ctx works in the picture's px, `top` is below the title
function picture(width, height, caption) {
  const scratch = el("canvas").getContext("2d");
  scratch.font = `600 16px ${FONT}`;
  const lines = wrapText(scratch, caption, width - 24);
  const top = 14 + 22 * lines.length;
  const scale = Math.min(EXPORT_SCALE, 16000 / Math.max(width, height + top), Math.sqrt(4e7 / (width * (height + top))));
  const canvas = el("canvas", { width: Math.ceil(width * scale), height: Math.ceil((height + top) * scale) });
  const ctx = canvas.getContext("2d");
  ctx.scale(scale, scale);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, width, height + top);
  ctx.fillStyle = INK;
  ctx.font = scratch.font;
  ctx.textBaseline = "middle";
  lines.forEach((line, k) => ctx.fillText(line, 12, 18 + 22 * k));
  return { canvas, ctx, top };
}

// `text` cut with an ellipsis to fit `width` px in the context's font
function fitText(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let cut = text.length;
  while (cut > 1 && ctx.measureText(`${text.slice(0, cut)}…`).width > width) cut--;
  return `${text.slice(0, cut)}…`;
}

// a labelled map at (x0, y0), tokens down its left and keys (the tokens, or a two-sequence
// view's sources) along its top: the same thinned labels as on the page; returns its width
// in px (its height is LABEL_W + tokens.length · cell)
function drawMap(ctx, x0, y0, tokens, cell, paint, focus, keys = tokens) {
  const label = (text, i) => {
    ctx.font = i === focus ? `700 11px ${FONT}` : `11px ${FONT}`;
    ctx.fillStyle = i === focus ? "#1e40af" : INK;
    return fitText(ctx, shown(text), LABEL_W - 8);
  };
  ctx.textBaseline = "middle";
  for (const i of labelIndices(tokens.length, cell, focus)) {
    const text = label(tokens[i], i);
    ctx.textAlign = "right";
    ctx.fillText(text, x0 + LABEL_W - 4, y0 + LABEL_W + (i + 0.5) * cell);
  }
  const same = keys === tokens;
  for (const j of labelIndices(keys.length, cell, same ? focus : null)) {
    const text = label(keys[j], same ? j : null);
    ctx.save();
    ctx.translate(x0 + LABEL_W + (j + 0.5) * cell, y0 + LABEL_W - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "left";
    ctx.fillText(text, 0, 0);
    ctx.restore();
  }
  ctx.save();
  ctx.translate(x0 + LABEL_W, y0 + LABEL_W);
  paint(ctx, cell);
  ctx.restore();
  ctx.strokeStyle = "#d1d5db";
  ctx.strokeRect(x0 + LABEL_W, y0 + LABEL_W, keys.length * cell, tokens.length * cell);
  return LABEL_W + keys.length * cell;
}

// the colour bar (as on the page) at (x, y), 240 × 44 px
const BAR_H = 44;
function drawBar(ctx, x, y, rgb = BLUE, label = ui("bar.weight")) {
  const width = 200;
  for (let k = 0; k < width; k++) {
    ctx.fillStyle = rgbText(mix(k / (width - 1), rgb));
    ctx.fillRect(x + k, y + 16, 1, 10);
  }
  ctx.strokeStyle = "#9ca3af";
  ctx.strokeRect(x, y + 16, width, 10);
  ctx.fillStyle = INK;
  ctx.font = `12px ${FONT}`;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  ctx.fillText(`${label} (${COLOUR_SCALES[state.colours]})`, x, y + 7);
  ctx.font = `11px ${FONT}`;
  // each tick centred on its place, but never past the bar's ends: the first log tick sat
  // half outside the picture's margin and read ".001"
  for (const t of TICKS[state.colours]) {
    const half = ctx.measureText(String(t)).width / 2;
    const at = Math.min(x + width - half, Math.max(x + half, x + level(t) * width));
    ctx.textAlign = "center";
    ctx.fillText(String(t), at, y + 36);
  }
  ctx.textAlign = "left";
}

const switchesText = () => (isFixed(head()) ? fixedWeightsText()
  : ui("png.switches", { causal: ui(masked() ? "png.causal" : "png.no_mask"), scale: state.scale ? "÷√d_k" : ui("png.no_scale") }));
const mapCell = (testid) => {
  const shownMap = byTestId(testid);
  return shownMap ? Number(shownMap.dataset.cell) : cellFor(keyTokens().length, 800);
};

function headPicture() {
  const tokens = view().tokens;
  const keys = keyTokens();
  const cell = Math.max(tokens.length, keys.length) > TABLE_MAX ? mapCell("head-map") : MAX_CELL;
  const wide = LABEL_W + keys.length * cell;
  const tall = LABEL_W + tokens.length * cell;
  const caption = ui("png.head", { title: data.title, layer: state.layer + 1, head: head().name, switches: switchesText() });
  const { canvas, ctx, top } = picture(Math.max(wide + 24, 420), tall + BAR_H + 24, caption);
  drawMap(ctx, 12, top, tokens, cell, paintWeights(weightsOf(head())), state.row, keys);
  drawBar(ctx, 12, top + tall + 12);
  return canvas;
}

function gridPicture() {
  const layers = view().layers;
  const tile = Math.max(96, Math.min(160, view().tokens.length));
  const cols = Math.max(...layers.map((l) => l.heads.length));
  const width = 76 + cols * (tile + 8);
  const { canvas, ctx, top } = picture(width, 20 + layers.length * (tile + 8) + BAR_H + 12,
    ui("png.grid", { title: data.title, switches: switchesText() }));
  ctx.imageSmoothingEnabled = false;
  ctx.font = `12px ${FONT}`;
  ctx.fillStyle = INK;
  for (let hi = 0; hi < cols; hi++) ctx.fillText(`H${hi + 1}`, 70 + hi * (tile + 8) + tile / 2 - 8, top + 8);
  layers.forEach((layer, li) => {
    const y = top + 20 + li * (tile + 8);
    ctx.fillStyle = INK;
    ctx.fillText(ui("roles.layer", { n: li + 1 }), 12, y + tile / 2);
    layer.heads.forEach((h, hi) => {
      const w = weightsOf(h);
      const big = Math.max(w.length, w[0].length); // an n×m map keeps its shape in the tile
      const [tw, th] = [(tile * w[0].length) / big, (tile * w.length) / big];
      ctx.drawImage(heatmapCanvas(w), 70 + hi * (tile + 8), y, tw, th);
      ctx.strokeStyle = "#d1d5db";
      ctx.strokeRect(70 + hi * (tile + 8) - 0.5, y - 0.5, tw + 1, th + 1);
    });
  });
  drawBar(ctx, 12, top + 20 + layers.length * (tile + 8) + 4);
  return canvas;
}

function overlayPicture() {
  const tokens = view().tokens;
  const keys = keyTokens();
  const hs = shownHeads();
  const cell = mapCell("overlay-map");
  const side = LABEL_W + Math.max(tokens.length, keys.length) * cell;
  const linesHeight = rows() * rowPx() + 2 * OVERLAY.pad;
  const legend = hs.map((h) => `H${h + 1} ${layerHeads()[h].name}`);
  const caption = ui("png.overlay", { title: data.title, layer: state.layer + 1, heads: hs.map((h) => h + 1).join(", "), switches: switchesText() });
  const { canvas, ctx, top } = picture(OVERLAY.width + side + 36, Math.max(linesHeight, side) + 24 * legend.length + BAR_H + 24, caption);
  ctx.font = `13px ${FONT}`;
  ctx.textBaseline = "middle";
  for (const line of overlayLines().lines) {
    ctx.strokeStyle = headColour(line.head);
    ctx.globalAlpha = Math.min(1, line.w);
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(OVERLAY.left + 6, top + rowY(line.i));
    ctx.lineTo(OVERLAY.right - 6, top + rowY(line.j));
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = INK;
  ctx.textAlign = "right";
  tokens.forEach((t, i) => ctx.fillText(fitText(ctx, shown(t), OVERLAY.left - 8), OVERLAY.left, top + rowY(i)));
  ctx.textAlign = "left";
  keys.forEach((t, j) => ctx.fillText(fitText(ctx, shown(t), OVERLAY.width - OVERLAY.right - 8), OVERLAY.right, top + rowY(j)));
  drawMap(ctx, OVERLAY.width + 24, top, tokens, cell, paintStripes(hs.map((h) => weightsOf(layerHeads()[h])), hs.map(headColour)), state.row, keys);
  let y = top + Math.max(linesHeight, side) + 12;
  ctx.font = `13px ${FONT}`;
  legend.forEach((text, k) => {
    ctx.fillStyle = headColour(hs[k]);
    ctx.fillRect(12, y + 24 * k + 4, 14, 14);
    ctx.fillStyle = INK;
    ctx.fillText(text, 32, y + 24 * k + 11);
  });
  y += 24 * legend.length;
  drawBar(ctx, 12, y, [75, 85, 99], ui("png.stripe_opacity"));
  return canvas;
}

function composedPicture() {
  const tokens = view().tokens;
  const c = view().composed;
  const cell = mapCell("composed-raw");
  const side = LABEL_W + tokens.length * cell;
  const ws = layerHeads().map(weightsOf);
  const raw = ws[0].map((row, i) => row.map((_, j) => ws.reduce((a, w) => a + w[i][j], 0) / ws.length));
  const maps = [["raw, head-averaged", raw], ["rollout", c.rollout[state.layer]]];
  if (c.value_weighted) maps.push(["value-weighted", c.value_weighted[state.layer]]); // optional: the note says why not
  const width = Math.max(maps.length * (side + 16) + 16, 600);
  const scratch = el("canvas").getContext("2d");
  scratch.font = `13px ${FONT}`;
  const note = wrapText(scratch, c.note || "", width - 24);
  const caption = ui("png.composed", { title: data.title, layer: state.layer + 1, switches: switchesText() });
  const { canvas, ctx, top } = picture(width, side + 24 + BAR_H + 18 * note.length + 24, caption);
  maps.forEach(([name, w], k) => {
    ctx.font = `600 13px ${FONT}`;
    ctx.fillStyle = INK;
    ctx.textAlign = "left";
    ctx.fillText(name, 12 + k * (side + 16) + LABEL_W, top + 8);
    drawMap(ctx, 12 + k * (side + 16), top + 20, tokens, cell, paintWeights(w), state.row);
  });
  drawBar(ctx, 12, top + 24 + side);
  ctx.font = `13px ${FONT}`;
  ctx.fillStyle = INK;
  note.forEach((line, k) => ctx.fillText(line, 12, top + 24 + side + BAR_H + 12 + 18 * k));
  return canvas;
}

// the sentence (a two-sequence view's source), each token on its shade, in lines as wide as
// the page's (600 px at least)
function textPicture() {
  const tokens = keyTokens();
  const i = focusIndex();
  const w = i === null ? tokens.map(() => 0) : weightsOf(head())[i];
  const onScreen = byTestId("text-view") ? byTestId("text-view").getBoundingClientRect().width : 0;
  const width = Math.max(600, Math.ceil(onScreen) + 24);
  const scratch = el("canvas").getContext("2d");
  scratch.font = `16px ${FONT}`;
  const placed = [];
  let x = 12;
  let row = 0;
  tokens.forEach((t, j) => {
    let text = (j && wordTokens(tokens) ? " " : "") + inText(t).replace(/[\n\t]/g, " ");
    if (t.startsWith("\n") || (x + scratch.measureText(text).width > width - 12 && x > 12)) {
      x = 12;
      row += 1;
    }
    if (x === 12) text = text.trimStart(); // a line does not start with a space
    const wide = scratch.measureText(text).width;
    placed.push({ text, x, row, wide, j });
    x += wide;
  });
  const who = i === null ? ui("png.no_token") : ui("png.shaded_by", { token: shown(view().tokens[i]) });
  const { canvas, ctx, top } = picture(width, 28 * (row + 1) + BAR_H + 24, ui("png.text", { title: data.title, layer: state.layer + 1, head: head().name, who }));
  ctx.font = scratch.font;
  ctx.textBaseline = "middle";
  for (const p of placed) {
    ctx.fillStyle = rgbText(mix(level(w[p.j]), BLUE));
    ctx.fillRect(p.x, top + 28 * p.row, p.wide, 24);
    ctx.fillStyle = level(w[p.j]) > 0.55 ? "#ffffff" : INK;
    ctx.fillText(p.text, p.x, top + 28 * p.row + 12);
    if (p.j === i && !twoSeq()) {
      ctx.strokeStyle = "#f59e0b";
      ctx.lineWidth = 2;
      ctx.strokeRect(p.x, top + 28 * p.row, p.wide, 24);
    }
  }
  drawBar(ctx, 12, top + 28 * (row + 1) + 8);
  return canvas;
}

function exportPNG() {
  const draw = { head: headPicture, grid: gridPicture, overlay: overlayPicture, text: textPicture, composed: composedPicture };
  const canvas = draw[state.mode]();
  canvas.toBlob((blob) => download(blob, exportName("png")), "image/png");
}
