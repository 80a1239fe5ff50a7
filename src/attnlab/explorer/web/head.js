// attnlab attention explorer, part 2: one head. The chosen (or hovered) token's row — what
// it attends to — and column — what attends to it —, the full matrix (a table of numbers for
// short sentences, a labelled map for long ones), and inside the head: the token's q and
// every key as colour strips with q∘k beside them (bertviz's neuron view), then q·k, the √d_k
// division, the softmax and the weight as numbers.

const TABLE_MAX = 20; // longer sentences get a map instead of a table of numbers
const TOP_BARS = 16; // a long sentence's bars: only the heaviest

// the query the panels show: the hovered or focused token, else the chosen one (in a
// two-sequence view a hovered key is a source token, not a query: the chosen row stays)
const focusIndex = () => (state.hover && (state.hover.side === "query" || !twoSeq()) ? state.hover.index : state.row);
// the key whose column the panels show: the focused token itself, or in a two-sequence view
// the hovered source token (null when none is)
const focusKey = () => (!twoSeq() ? focusIndex() : state.hover && state.hover.side === "key" ? state.hover.index : null);

function bars(testid, tokens, values) {
  let order = tokens.map((_, j) => j);
  if (tokens.length > TABLE_MAX) order = order.sort((a, b) => values[b] - values[a]).slice(0, TOP_BARS);
  return order.map((j) => {
    const token = tokens[j];
    const item = el("li", { "data-testid": testid, "data-index": j, "data-weight": values[j] });
    const fill = el("span", { class: "fill" });
    fill.style.width = `${(100 * values[j]).toFixed(1)}%`;
    const bar = el("span", { class: "bar" });
    bar.append(fill);
    const tok = tokenLabel("span", { class: "tok" }, token);
    if (tokens.length > TABLE_MAX) tok.append(el("small", { class: "pos" }, ` ${j + 1}`)); // which of the repeats
    item.append(tok, bar, el("span", { class: "val" }, fmt(values[j], 3)));
    return item;
  });
}

// the row (what the query attends to, over the keys) and the column (what attends to a key,
// over the queries); in a two-sequence view the column is the hovered source token's
function renderBars() {
  const tokens = view().tokens;
  const keys = keyTokens();
  const h = head();
  const i = focusIndex();
  const j = focusKey();
  const eff = byTestId("row-eff");
  const w = i === null && j === null ? null : weightsOf(h);
  const most = (list) => (list.length > TABLE_MAX ? ui("row.heaviest", { top: TOP_BARS, n: list.length }) : "");
  const at = (list, k) => (list.length > TABLE_MAX ? ui("row.token_n", { n: k + 1 }) : "");
  if (i === null) {
    byTestId("row-title").textContent = ui("row.none");
    eff.textContent = "";
    delete eff.dataset.value;
    byTestId("row").replaceChildren();
  } else {
    byTestId("row-title").textContent = ui("row.title", { token: shown(tokens[i]), at: at(tokens, i), most: most(keys) });
    eff.textContent = ui("row.eff", { eff: fmtNum(effective(w[i])) });
    if (!isFixed(h)) {
      const other = computeWeights(h, masked(), !state.scale)[i];
      eff.textContent += ui(state.scale ? "row.eff_other.without" : "row.eff_other.with", { eff: fmtNum(effective(other)) });
    }
    eff.dataset.value = String(effective(w[i]));
    byTestId("row").replaceChildren(...bars("row-bar", keys, w[i]));
  }
  if (j === null) {
    byTestId("col-title").textContent = ui(twoSeq() ? "col.source_none" : "col.none");
    byTestId("col").replaceChildren();
  } else {
    byTestId("col-title").textContent = ui("col.title", { token: shown(keys[j]), at: at(keys, j), most: most(tokens) });
    byTestId("col").replaceChildren(...bars("col-bar", tokens, w.map((r) => r[j])));
  }
}

// hovering or focusing a token previews it in both directions without choosing it
function hoverable(node, index, side) {
  const enter = () => {
    state.hover = { index, side };
    onHover();
  };
  const leave = () => {
    if (state.hover && state.hover.index === index && state.hover.side === side) {
      state.hover = null;
      onHover();
    }
  };
  node.addEventListener("mouseenter", enter);
  node.addEventListener("focus", enter);
  node.addEventListener("mouseleave", leave);
  node.addEventListener("blur", leave);
}

let matrixCells = []; // matrixCells[i][j]: the <td> of query i, key j
let matrixMap = null; // the labelled map that stands for the table in a long sentence

function renderMatrix() {
  const tokens = view().tokens;
  const keys = keyTokens();
  const w = weightsOf(head());
  const table = byTestId("matrix");
  let box = byTestId("matrix-map");
  if (!box) {
    box = el("div", { "data-testid": "matrix-map" });
    table.after(box);
  }
  matrixCells = [];
  matrixMap = null;
  const panels = table.closest(".panels");
  panels.classList.remove("stacked");
  table.classList.remove("tight");
  table.hidden = Math.max(tokens.length, keys.length) > TABLE_MAX || fitsNot(tokens);
  table.closest("section").querySelector("h2").textContent = ui(table.hidden ? "matrix.title.map" : "matrix.title.table");
  if (table.hidden) {
    table.replaceChildren();
    const room = table.parentNode.clientWidth || 800;
    const cell = cellFor(keys.length, room, 1); // 1 px cells fit 790 keys in an 886-px panel
    matrixMap = labelledMap({ tokens, keys, cell, testid: "head-map", focus: state.row, paint: paintWeights(w),
      describe: (i, j) => fmt(w[i][j], 4), choose: selectRow });
    const wide = LABEL_W + keys.length * cell + 8 > room;
    const said = el("p", { class: "note fixed", "data-testid": "map-wider" },
      ui("map.wider", { k: Math.max(1, Math.floor((room - LABEL_W - 8) / cell)) }));
    said.hidden = !wide;
    box.replaceChildren(colourBar(), said, matrixMap);
    return;
  }
  box.replaceChildren();
  const headRow = el("tr");
  headRow.append(el("th", { scope: "col", class: "corner" }, ui(twoSeq() ? "matrix.corner_two" : "matrix.corner")));
  keys.forEach((t, j) => {
    const th = tokenLabel("th", { scope: "col", "data-testid": "key-head", "data-index": j }, t);
    hoverable(th, j, "key");
    headRow.append(th);
  });
  headRow.append(el("th", { scope: "col", title: ui("matrix.eff_title") }, ui("matrix.eff")));
  const rows = tokens.map((token, i) => {
    const tr = el("tr", { "data-testid": "matrix-row", "data-row": i });
    if (state.row === i) tr.classList.add("selected");
    const th = tokenLabel("th", { scope: "row", "data-testid": "query-head", "data-index": i }, token);
    hoverable(th, i, "query");
    tr.append(th);
    matrixCells.push(
      w[i].map((x, j) => {
        const td = el("td", { "data-testid": "cell", "data-i": i, "data-j": j, "data-weight": x }, fmt(x, 2));
        td.style.backgroundColor = rgbText(mix(level(x), BLUE));
        if (level(x) > 0.5) td.classList.add("dark");
        tr.append(td);
        return td;
      }),
    );
    const e = effective(w[i]);
    tr.append(el("td", { "data-testid": "eff", "data-row": i, "data-value": e, class: "eff" }, fmtNum(e)));
    tr.addEventListener("click", () => selectRow(i));
    return tr;
  });
  const thead = el("thead");
  thead.append(headRow);
  const tbody = el("tbody");
  tbody.append(...rows);
  table.replaceChildren(thead, tbody);
  fitTable(table, panels);
}

// "fit the page" applies to the table too: beside the bars if it fits there, else below them,
// else in smaller type; a table that fits none of these is drawn as a map (fitsNot)
function fitTable(table, panels) {
  if (state.zoom !== "fit") return;
  const box = table.parentNode;
  const over = () => table.offsetWidth > box.clientWidth + 1;
  if (over()) panels.classList.add("stacked");
  if (over()) table.classList.add("tight");
  tableOverflows = over();
  if (tableOverflows) {
    panels.classList.remove("stacked");
    renderMatrix(); // now as a map
  }
}
let tableOverflows = false;
let tableTokens = null;
// whether the last table of these tokens did not fit (then the map stands for it)
function fitsNot(tokens) {
  if (tableTokens !== tokens) {
    tableTokens = tokens;
    tableOverflows = false;
  }
  return state.zoom === "fit" && tableOverflows;
}

// outline the focused token's row (what it attends to) and the focused key's column (what
// attends to it: the same token, or a hovered source token)
function highlightMatrix() {
  const i = focusIndex();
  const j = focusKey();
  if (matrixMap) matrixMap.mark(i, j);
  matrixCells.forEach((row, r) =>
    row.forEach((td, c) => {
      td.classList.toggle("hl-row", r === i);
      td.classList.toggle("hl-col", c === j);
    }),
  );
}

function vectorText(values, dims) {
  const parts = values.map((x, m) => (dims ? `${dims[m]} ${fmtSig(x)}` : fmtSig(x)));
  return `[${parts.join(", ")}]`;
}

// a vector as a strip of d cells: blue positive, red negative, white 0, as strong as |x| / top;
// its numbers on hover. The cells narrow with d so that a strip stays within STRIP_PX.
const STRIP_PX = 240;
const stripCell = (d) => Math.max(1, Math.min(24, Math.floor(STRIP_PX / d)));
function strip(values, top, what, dims, testid) {
  const cell = stripCell(values.length);
  const canvas = el("canvas", { width: values.length * cell, height: 14, class: "strip", "data-testid": testid });
  const ctx = canvas.getContext("2d");
  values.forEach((x, m) => {
    ctx.fillStyle = rgbText(mix(Math.min(1, Math.abs(x) / (top || 1)), x < 0 ? RED : BLUE));
    ctx.fillRect(m * cell, 0, cell > 5 ? cell - 1 : cell, 14);
  });
  canvas.addEventListener("mousemove", (event) => {
    const m = Math.min(values.length - 1, Math.floor(event.offsetX / cell));
    tip(event, `${what}, ${dims ? dims[m] : ui("inside.dimension", { n: m + 1 })}: ${fmtSig(values[m])}`);
  });
  canvas.addEventListener("mouseleave", (event) => tip(event, null));
  return canvas;
}

// the names of a head's dimensions above its strips (named features of the hand-made heads)
function dimsHeader(dims) {
  const row = el("span", { class: "dims" });
  row.style.gridTemplateColumns = `repeat(${dims.length}, ${stripCell(dims.length)}px)`;
  row.append(...dims.map((name) => el("span", { title: name }, name)));
  return row;
}

const maxAbs = (rows) => rows.reduce((a, r) => r.reduce((b, x) => Math.max(b, Math.abs(x)), a), 0);

function renderInside() {
  const box = byTestId("inside-body");
  const h = head();
  const tokens = view().tokens;
  const keys = keyTokens();
  const i = focusIndex();
  if (isFixed(h)) {
    box.replaceChildren(el("p", {}, ui("inside.fixed", { reason: view().fixed })));
    return;
  }
  if (i === null) {
    box.replaceChildren(el("p", {}, ui("inside.none")));
    return;
  }
  const parts = [];
  const div = state.scale ? Math.sqrt(h.d_k) : 1;
  const named = h.dims && h.dims.length <= 16 ? h.dims : null; // names that fit above the strips
  let products = null;
  let top = null;
  if (h.q) {
    const q = el("p", { class: "vec", "data-testid": "inside-q" }, `q(“${shown(tokens[i])}”) = `);
    q.append(el("code", {}, h.q[i].length <= 16 ? vectorText(h.q[i], h.dims) : ui("inside.numbers", { n: h.q[i].length })));
    parts.push(q);
    products = h.k.map((kj) => kj.map((x, m) => x * h.q[i][m])); // (m, d): q∘k_j, summing to q·k_j
    top = { q: maxAbs([h.q[i]]), k: maxAbs(h.k) }; // q and k each on its own scale
    parts.push(el("p", { class: "note" }, ui("inside.strips")));
  } else {
    parts.push(el("p", {}, ui("inside.scores")));
  }
  const steps = keys.map((_, j) => score(h, masked(), state.scale, i, j));
  const max = steps.reduce((a, b) => Math.max(a, b), -Infinity);
  const exps = steps.map((s) => (s === -Infinity ? 0 : Math.exp(s - max)));
  const total = exps.reduce((a, b) => a + b, 0);
  const table = el("table", { class: "small inside", "data-testid": "inside-table" });
  const headRow = el("tr");
  const divLabel = state.scale ? `÷ √${h.d_k} (= ${fmtSig(div)})` : ui("inside.div_off");
  const heads = [ui("inside.key"), h.q ? "k" : null, h.q ? "q∘k" : null, "q·k", divLabel, h.bias ? "+ bias" : null, "exp(s − max)", ui("inside.weight")];
  headRow.append(...heads.filter((x) => x !== null).map((x) => el("th", { scope: "col" }, x)));
  const thead = el("thead");
  thead.append(headRow);
  if (h.q) {
    const qRow = el("tr", { class: "q-row" });
    const qStrip = el("td", { class: "strips" });
    if (named) qStrip.append(dimsHeader(named));
    qStrip.append(strip(h.q[i], top.q, `q(“${shown(tokens[i])}”)`, h.dims, "q-strip"));
    const qCell = el("td", { class: "strips" });
    if (named) qCell.append(dimsHeader(named));
    qRow.append(el("th", { scope: "row", class: "q-head" }, ui("inside.q_of", { token: shown(tokens[i]) })), qStrip, qCell, el("td", { colspan: heads.filter((x) => x).length - 3 }));
    thead.append(qRow);
  }
  table.append(thead);
  const prodTop = products ? maxAbs(products) : 0;
  const body = el("tbody");
  keys.forEach((t, j) => {
    const tr = el("tr", { "data-testid": "inside-row", "data-j": j });
    const raw = rawScores(h)[i][j];
    const masked = steps[j] === -Infinity;
    tr.append(tokenLabel("th", { scope: "row" }, t));
    if (h.q) {
      const k = el("td", { class: "strips" });
      k.append(strip(h.k[j], top.k, `k(“${shown(t)}”)`, h.dims, "k-strip"));
      const qk = el("td", { class: "strips" });
      qk.append(strip(products[j], prodTop, `q∘k(“${shown(t)}”)`, h.dims, "qk-strip"));
      tr.append(k, qk);
    }
    tr.append(el("td", { "data-testid": "inside-qk", "data-value": raw }, fmtSig(raw)));
    tr.append(el("td", { "data-testid": "inside-scaled", "data-value": raw / div }, masked ? ui("inside.masked") : fmtSig(raw / div)));
    if (h.bias) tr.append(el("td", {}, masked ? "" : fmtSig(h.bias[i][j])));
    tr.append(el("td", {}, masked ? "0" : fmtSig(exps[j])));
    const weight = el("td", { "data-testid": "inside-weight", "data-value": exps[j] / total, class: "weight" }, fmt(exps[j] / total, 4));
    weight.style.backgroundColor = rgbText(mix(level(exps[j] / total), BLUE));
    if (level(exps[j] / total) > 0.5) weight.classList.add("dark");
    tr.append(weight);
    if (masked) tr.classList.add("masked");
    body.append(tr);
  });
  table.append(body);
  const box2 = el("div", { class: "scroll inside-box" });
  box2.append(table);
  parts.push(box2);
  const sum = ui("inside.sum", { total: fmtSig(total), div: state.scale ? `÷ √${h.d_k}` : "", bias: h.bias ? " + bias" : "",
    max: fmtSig(max), mask: masked() ? ui("inside.sum_mask") : "" });
  parts.push(el("p", { class: "note" }, sum));
  if (h.weights && atStart()) {
    const own = h.weights[i];
    const diff = own.reduce((a, x, j) => Math.max(a, Math.abs(x - exps[j] / total)), 0);
    parts.push(el("p", { class: "note", "data-testid": "inside-own" },
      ui("inside.own", { diff: diff.toExponential(1) })));
  }
  box.replaceChildren(...parts);
}

// a small labelled matrix; with dropZero its all-zero rows are left out, and the title says so
function labelledTable(title, m, dropZero = false) {
  const keep = m.rows.map((_, i) => i).filter((i) => !dropZero || m.values[i].some((x) => x !== 0));
  const omitted = m.rows.length - keep.length;
  m = { rows: keep.map((i) => m.rows[i]), cols: m.cols, values: keep.map((i) => m.values[i]) };
  const table = el("table", { class: "small" });
  table.append(el("caption", {}, omitted ? ui("hand.zero_rows", { title, omitted, total: omitted + keep.length }) : title));
  const top = el("tr");
  top.append(el("th", {}), ...m.cols.map((c) => el("th", { scope: "col" }, c)));
  table.append(top);
  m.rows.forEach((r, i) => {
    const tr = el("tr");
    tr.append(tokenLabel("th", { scope: "row" }, r), ...m.values[i].map((x) => el("td", {}, fmtNum(x))));
    table.append(tr);
  });
  const box = el("div", { class: "scroll" });
  box.append(table);
  return box;
}

function renderHandMatrices() {
  const h = head();
  const parts = [];
  if (h.features) parts.push(labelledTable(ui("hand.features"), h.features));
  if (h.w_q) parts.push(labelledTable("W_Q", h.w_q, true));
  if (h.w_k) parts.push(labelledTable("W_K", h.w_k, true));
  byTestId("matrices").replaceChildren(...parts);
  byTestId("head-weights").hidden = parts.length === 0;
}

function renderHead() {
  renderBars();
  renderMatrix();
  highlightMatrix();
  renderInside();
  renderHandMatrices();
}
