// attnlab attention explorer, part 5: download the current view as a PNG picture, or its
// weights as CSV or JSON (under the switches as they are now). Files are made in the page;
// nothing is sent anywhere.

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
  }[state.mode];
  return `attention-${what}.${ext}`;
}

// the heads the current view shows: one, the shown heads of the layer, or all
function exportedHeads() {
  if (state.mode === "head") return [{ layer: state.layer, head: state.head }];
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
  const lines = [["layer", "head", "head_name", "query_position", "query", "key_position", "key", "weight"].join(",")];
  for (const { layer, head: hi } of exportedHeads()) {
    const h = view().layers[layer].heads[hi];
    weightsOf(h).forEach((row, i) =>
      row.forEach((w, j) => {
        lines.push([layer + 1, hi + 1, h.name, i + 1, tokens[i], j + 1, tokens[j], w].map(csvField).join(","));
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
    causal: state.causal,
    scale: state.scale,
    view: state.mode,
    heads: exportedHeads().map(({ layer, head: hi }) => {
      const h = view().layers[layer].heads[hi];
      return { layer: layer + 1, head: hi + 1, name: h.name, weights: weightsOf(h) };
    }),
  };
  download(new Blob([JSON.stringify(body)], { type: "application/json" }), exportName("json"));
}

const TITLE_PX = 34;

function titled(width, height, caption) {
  const canvas = el("canvas", { width: Math.ceil(width), height: Math.ceil(height + TITLE_PX) });
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#1d2330";
  ctx.font = "600 14px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  ctx.fillText(caption, 10, TITLE_PX / 2, canvas.width - 20);
  return { canvas, ctx };
}

const switchesText = () => `${state.causal ? "causal" : "no mask"}, ${state.scale ? "÷√d_k" : "no ÷√d_k"}`;

function gridPicture() {
  const layers = view().layers;
  const tile = 96;
  const gap = 22;
  const cols = Math.max(...layers.map((l) => l.heads.length));
  const { canvas, ctx } = titled(cols * (tile + 8) + 60, layers.length * (tile + gap), `${data.title}: all heads (${switchesText()})`);
  ctx.imageSmoothingEnabled = false;
  ctx.font = "12px system-ui, sans-serif";
  layers.forEach((layer, li) =>
    layer.heads.forEach((h, hi) => {
      const x = 50 + hi * (tile + 8);
      const y = TITLE_PX + li * (tile + gap) + gap - 6;
      ctx.fillStyle = "#1d2330";
      ctx.fillText(`L${li + 1} H${hi + 1}`, x, y - 8);
      ctx.drawImage(heatmapCanvas(weightsOf(h)), x, y, tile, tile);
    }),
  );
  return canvas;
}

function headPicture(heads, colours, caption) {
  const tokens = view().tokens;
  const cell = cellSize(tokens.length);
  const size = 110 + tokens.length * cell;
  const { canvas, ctx } = titled(size + 20, size + 10, caption);
  drawStripes(ctx, 10, TITLE_PX, tokens, heads, colours, cell);
  return canvas;
}

function overlayPicture() {
  const tokens = view().tokens;
  const hs = shownHeads();
  const cell = cellSize(tokens.length);
  const matrix = 110 + tokens.length * cell;
  const linesHeight = tokens.length * ROW_PX + 2 * OVERLAY.pad;
  const caption = `${data.title}: layer ${state.layer + 1}, heads ${hs.map((h) => h + 1).join(", ")} (${switchesText()})`;
  const { canvas, ctx } = titled(OVERLAY.width + matrix + 30, Math.max(linesHeight, matrix) + 10, caption);
  ctx.font = "13px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  for (const line of overlayLines().lines) {
    ctx.strokeStyle = headColour(line.head);
    ctx.globalAlpha = Math.min(1, line.w);
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(OVERLAY.left + 6, TITLE_PX + rowY(line.i));
    ctx.lineTo(OVERLAY.right - 6, TITLE_PX + rowY(line.j));
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = "#1d2330";
  tokens.forEach((t, i) => {
    ctx.textAlign = "right";
    ctx.fillText(shown(t), OVERLAY.left, TITLE_PX + rowY(i), OVERLAY.left - 4);
    ctx.textAlign = "left";
    ctx.fillText(shown(t), OVERLAY.right, TITLE_PX + rowY(i), OVERLAY.width - OVERLAY.right - 4);
  });
  drawStripes(ctx, OVERLAY.width + 20, TITLE_PX, tokens, hs.map((h) => weightsOf(layerHeads()[h])), hs.map(headColour), cell);
  return canvas;
}

function exportPNG() {
  let canvas;
  if (state.mode === "grid") canvas = gridPicture();
  else if (state.mode === "overlay") canvas = overlayPicture();
  else canvas = headPicture([weightsOf(head())], ["#2563eb"], `${data.title}: layer ${state.layer + 1}, ${head().name} (${switchesText()})`);
  canvas.toBlob((blob) => download(blob, exportName("png")), "image/png");
}
