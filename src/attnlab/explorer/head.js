// attnlab attention explorer, part 2: one head. The chosen (or hovered) token's row — what
// it attends to — and column — what attends to it —, the full matrix, and inside the head:
// the token's q against every key, q·k, the √d_k division, the softmax, as numbers.

// the token the panels show: the hovered or focused one, else the chosen one
const focusIndex = () => (state.hover ? state.hover.index : state.row);

function bars(testid, tokens, values) {
  return tokens.map((token, j) => {
    const item = el("li", { "data-testid": testid, "data-index": j, "data-weight": values[j] });
    const fill = el("span", { class: "fill" });
    fill.style.width = `${(100 * values[j]).toFixed(1)}%`;
    const bar = el("span", { class: "bar" });
    bar.append(fill);
    item.append(tokenLabel("span", { class: "tok" }, token), bar, el("span", { class: "val" }, fmt(values[j], 3)));
    return item;
  });
}

function renderBars() {
  const tokens = view().tokens;
  const h = head();
  const i = focusIndex();
  const eff = byTestId("row-eff");
  if (i === null) {
    byTestId("row-title").textContent = "Choose or hover a token to see what it attends to";
    byTestId("col-title").textContent = "… and what attends to it";
    eff.textContent = "";
    byTestId("row").replaceChildren();
    byTestId("col").replaceChildren();
    return;
  }
  const w = weightsOf(h);
  byTestId("row-title").textContent = `“${shown(tokens[i])}” attends to:`;
  eff.textContent = `effective tokens ${fmtNum(effective(w[i]))}`;
  if (!isFixed(h)) {
    const other = computeWeights(h, state.causal, !state.scale)[i];
    eff.textContent += ` (${fmtNum(effective(other))} ${state.scale ? "without" : "with"} ÷√d_k)`;
  }
  eff.dataset.value = String(effective(w[i]));
  byTestId("row").replaceChildren(...bars("row-bar", tokens, w[i]));
  byTestId("col-title").textContent = `What attends to “${shown(tokens[i])}”:`;
  byTestId("col").replaceChildren(...bars("col-bar", tokens, w.map((r) => r[i])));
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
function renderMatrix() {
  const tokens = view().tokens;
  const w = weightsOf(head());
  const headRow = el("tr");
  headRow.append(el("th", { scope: "col", class: "corner" }, "query \\ key"));
  tokens.forEach((t, j) => {
    const th = tokenLabel("th", { scope: "col", "data-testid": "key-head", "data-index": j }, t);
    hoverable(th, j, "key");
    headRow.append(th);
  });
  headRow.append(el("th", { scope: "col", title: "effective tokens = exp(entropy of the row)" }, "eff."));
  matrixCells = [];
  const rows = tokens.map((token, i) => {
    const tr = el("tr", { "data-testid": "matrix-row", "data-row": i });
    if (state.row === i) tr.classList.add("selected");
    const th = tokenLabel("th", { scope: "row", "data-testid": "query-head", "data-index": i }, token);
    hoverable(th, i, "query");
    tr.append(th);
    matrixCells.push(
      w[i].map((x, j) => {
        const td = el("td", { "data-testid": "cell", "data-i": i, "data-j": j, "data-weight": x }, fmt(x, 2));
        td.style.backgroundColor = `rgba(37, 99, 235, ${x.toFixed(3)})`;
        if (x > 0.5) td.classList.add("dark");
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
  byTestId("matrix").replaceChildren(thead, tbody);
}

// outline the focused token's row (what it attends to) and column (what attends to it)
function highlightMatrix() {
  const i = focusIndex();
  matrixCells.forEach((row, r) =>
    row.forEach((td, c) => {
      td.classList.toggle("hl-row", r === i);
      td.classList.toggle("hl-col", c === i);
    }),
  );
}

function vectorText(values, dims) {
  const parts = values.map((x, m) => (dims ? `${dims[m]} ${fmtSig(x)}` : fmtSig(x)));
  return `[${parts.join(", ")}]`;
}

function renderInside() {
  const box = byTestId("inside-body");
  const h = head();
  const tokens = view().tokens;
  const i = focusIndex();
  if (isFixed(h)) {
    box.replaceChildren(el("p", {}, `This head's q and k are not available: ${view().fixed}`));
    return;
  }
  if (i === null) {
    box.replaceChildren(el("p", {}, "Choose a token: its query against every key, step by step, appears here."));
    return;
  }
  const parts = [];
  const div = state.scale ? Math.sqrt(h.d_k) : 1;
  if (h.q) {
    const q = el("p", { class: "vec", "data-testid": "inside-q" }, `q(“${shown(tokens[i])}”) = `);
    q.append(el("code", {}, vectorText(h.q[i], h.dims)));
    parts.push(q);
  } else {
    parts.push(el("p", {}, "This head has no q and k: its scores are given directly."));
  }
  const steps = tokens.map((_, j) => score(h, state.causal, state.scale, i, j));
  const max = steps.reduce((a, b) => Math.max(a, b), -Infinity);
  const exps = steps.map((s) => (s === -Infinity ? 0 : Math.exp(s - max)));
  const total = exps.reduce((a, b) => a + b, 0);
  const table = el("table", { class: "small inside", "data-testid": "inside-table" });
  const top = el("tr");
  const divLabel = state.scale ? `÷ √${h.d_k} (= ${fmtSig(div)})` : "÷ 1 (switch off)";
  const heads = ["key", h.q ? "k" : null, "q·k", divLabel, h.bias ? "+ bias" : null, "exp(s − max)", "weight"];
  top.append(...heads.filter((x) => x !== null).map((x) => el("th", { scope: "col" }, x)));
  table.append(top);
  tokens.forEach((t, j) => {
    const tr = el("tr", { "data-testid": "inside-row", "data-j": j });
    const raw = rawScores(h)[i][j];
    const masked = steps[j] === -Infinity;
    tr.append(tokenLabel("th", { scope: "row" }, t));
    if (h.q) tr.append(el("td", { class: "vec" }, vectorText(h.k[j], h.dims)));
    tr.append(el("td", { "data-testid": "inside-qk", "data-value": raw }, fmtSig(raw)));
    tr.append(el("td", { "data-testid": "inside-scaled", "data-value": raw / div }, masked ? "masked" : fmtSig(raw / div)));
    if (h.bias) tr.append(el("td", {}, masked ? "" : fmtSig(h.bias[i][j])));
    tr.append(el("td", {}, masked ? "0" : fmtSig(exps[j])));
    tr.append(el("td", { "data-testid": "inside-weight", "data-value": exps[j] / total }, fmt(exps[j] / total, 4)));
    if (masked) tr.classList.add("masked");
    table.append(tr);
  });
  const box2 = el("div", { class: "scroll" });
  box2.append(table);
  parts.push(box2);
  const sum = `Σ exp = ${fmtSig(total)}; weight = exp(s − max) / Σ exp, where s = q·k ${state.scale ? `÷ √${h.d_k}` : ""}` +
    `${h.bias ? " + bias" : ""} and max = ${fmtSig(max)}${state.causal ? "; keys after the query are masked" : ""}.`;
  parts.push(el("p", { class: "note" }, sum));
  if (h.weights && atStart()) {
    const own = h.weights[i];
    const diff = own.reduce((a, x, j) => Math.max(a, Math.abs(x - exps[j] / total)), 0);
    parts.push(el("p", { class: "note", "data-testid": "inside-own" },
      `The model's own weights for this row (shown in the other panels) differ from these by at most ${diff.toExponential(1)}.`));
  }
  box.replaceChildren(...parts);
}

function labelledTable(title, m) {
  const table = el("table", { class: "small" });
  table.append(el("caption", {}, title));
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
  if (h.features) parts.push(labelledTable("X: features of each word", h.features));
  if (h.w_q) parts.push(labelledTable("W_Q (rows not shown are zero)", h.w_q));
  if (h.w_k) parts.push(labelledTable("W_K (rows not shown are zero)", h.w_k));
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
