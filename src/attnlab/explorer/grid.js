// attnlab attention explorer, part 3: every head of every layer at once, as a grid of small
// maps (one pixel per query-key pair, scaled up); a click opens that head large.

const WHITE = [255, 255, 255];
const BLUE = [37, 99, 235];

// an n×n canvas of weights: white for 0, blue for 1 (the colour is linear in the weight)
function heatmapCanvas(w, rgb = BLUE) {
  const n = w.length;
  const canvas = el("canvas", { width: n, height: n });
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(n, n);
  w.forEach((row, i) =>
    row.forEach((x, j) => {
      const at = 4 * (i * n + j);
      for (let c = 0; c < 3; c++) image.data[at + c] = Math.round(WHITE[c] + x * (rgb[c] - WHITE[c]));
      image.data[at + 3] = 255;
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

function renderGrid() {
  const grid = byTestId("grid");
  const layers = view().layers;
  const most = Math.max(...layers.map((l) => l.heads.length));
  grid.style.setProperty("--cols", String(most));
  const cells = [];
  layers.forEach((layer, li) => {
    cells.push(el("div", { class: "grid-layer", style: `grid-column: 1 / -1` }, `layer ${li + 1}`));
    layer.heads.forEach((h, hi) => {
      const label = `L${li + 1} H${hi + 1}`;
      const button = el("button", {
        type: "button", class: "thumb", "data-testid": "thumb", "data-layer": li, "data-head": hi,
        title: `layer ${li + 1}, ${h.name}: open it large`,
      });
      if (li === state.layer && hi === state.head) button.classList.add("current");
      const map = heatmapCanvas(weightsOf(h));
      map.setAttribute("data-testid", "thumb-map");
      map.setAttribute("aria-hidden", "true");
      button.append(map, el("span", { class: "thumb-label" }, label));
      button.addEventListener("click", () => openHead(li, hi));
      cells.push(button);
    });
  });
  grid.replaceChildren(...cells);
}
