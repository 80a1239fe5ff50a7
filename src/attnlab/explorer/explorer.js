// attnlab attention explorer: turns raw q·k scores into weights and draws them.
// Input: the JSON in #attnlab-data (see attnlab.explorer.page). Every piece of
// user text goes into the page through textContent, never innerHTML.
(() => {
  "use strict";

  const byTestId = (id) => document.querySelector(`[data-testid="${id}"]`);
  const readJSON = (id) => JSON.parse(document.getElementById(id).textContent);
  const config = readJSON("attnlab-config");
  let data = readJSON("attnlab-data");
  const state = { view: 0, layer: 0, head: 0, row: null, causal: !!data.causal, scale: true };

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  // softmax over each row of scores (divided by sqrt(d_k) when scale is on);
  // with the causal mask, keys after the query get a weight of exactly 0.
  function weights(head, causal, scale) {
    const div = scale ? Math.sqrt(head.d_k) : 1;
    return head.scores.map((row, i) => {
      const allowed = (j) => !causal || j <= i;
      let max = -Infinity;
      row.forEach((s, j) => {
        if (allowed(j)) max = Math.max(max, s / div);
      });
      const e = row.map((s, j) => (allowed(j) ? Math.exp(s / div - max) : 0));
      const total = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / total);
    });
  }

  // effective number of tokens a row spreads over: exp(entropy), 1 .. n
  function effective(row) {
    let h = 0;
    for (const w of row) if (w > 0) h -= w * Math.log(w);
    return Math.exp(h);
  }

  // an exact 0 (masked) prints as "0"; a tiny weight as "0.00"
  const fmt = (w, digits) => (w === 0 ? "0" : w.toFixed(digits));
  const fmtNum = (x) => String(Number(x.toFixed(2)));

  const view = () => data.views[state.view];
  const head = () => view().layers[state.layer].heads[state.head];

  function fillSelect(select, labels, selected) {
    select.replaceChildren(...labels.map((label, i) => el("option", { value: i }, label)));
    select.value = String(selected);
    select.disabled = labels.length < 2;
  }

  function renderControls() {
    const views = data.views.map((v) => v.name);
    fillSelect(byTestId("view-select"), views, state.view);
    byTestId("view-control").hidden = views.length < 2;
    fillSelect(byTestId("layer-select"), view().layers.map((_, i) => `layer ${i + 1}`), state.layer);
    fillSelect(
      byTestId("head-select"),
      view().layers[state.layer].heads.map((h, i) => `${i + 1}: ${h.name}`),
      state.head,
    );
    byTestId("causal").checked = state.causal;
    byTestId("scale").checked = state.scale;
  }

  // the word buttons are rebuilt only for new tokens, so a focused word keeps its focus
  let shownTokens = null;
  function renderWords() {
    if (shownTokens === view().tokens) {
      byTestId("words").querySelectorAll("button").forEach((button, i) => {
        button.setAttribute("aria-pressed", String(state.row === i));
      });
      return;
    }
    shownTokens = view().tokens;
    const words = view().tokens.map((token, i) => {
      const button = el("button", { type: "button", "data-testid": "word", "data-index": i }, token);
      button.setAttribute("aria-pressed", String(state.row === i));
      button.addEventListener("click", () => selectRow(i));
      return button;
    });
    byTestId("words").replaceChildren(...words);
  }

  function renderFormula() {
    const h = head();
    const scale = state.scale ? ` / √${h.d_k}` : "";
    const mask = state.causal ? "; keys after the query masked (weight 0)" : "";
    byTestId("formula").textContent = `weights = softmax(q·k${scale}) along each row${mask}`;
    byTestId("note").textContent = h.note || "";
  }

  function renderRow(w) {
    const tokens = view().tokens;
    const title = byTestId("row-title");
    const list = byTestId("row");
    if (state.row === null) {
      title.textContent = "Choose a word to see its row of weights";
      byTestId("row-eff").textContent = "";
      list.replaceChildren();
      return;
    }
    const i = state.row;
    title.textContent = `“${tokens[i]}” attends to:`;
    const other = weights(head(), state.causal, !state.scale)[i];
    const eff = byTestId("row-eff");
    eff.textContent =
      `effective tokens ${fmtNum(effective(w[i]))} ` +
      `(${fmtNum(effective(other))} ${state.scale ? "without" : "with"} ÷√d_k)`;
    eff.dataset.value = String(effective(w[i]));
    const items = tokens.map((token, j) => {
      const item = el("li", { "data-testid": "row-bar", "data-index": j, "data-weight": w[i][j] });
      const fill = el("span", { class: "fill" });
      fill.style.width = `${(100 * w[i][j]).toFixed(1)}%`;
      const bar = el("span", { class: "bar" });
      bar.append(fill);
      item.append(el("span", { class: "tok" }, token), bar, el("span", { class: "val" }, fmt(w[i][j], 3)));
      return item;
    });
    list.replaceChildren(...items);
  }

  function renderMatrix(w) {
    const tokens = view().tokens;
    const corner = el("th", { scope: "col", class: "corner" }, "query \\ key");
    const keys = tokens.map((t) => el("th", { scope: "col", title: t }, t));
    const effHead = el("th", { scope: "col", title: "effective tokens = exp(entropy of the row)" }, "eff.");
    const headRow = el("tr");
    headRow.append(corner, ...keys, effHead);
    const rows = tokens.map((token, i) => {
      const tr = el("tr", { "data-testid": "matrix-row", "data-row": i });
      if (state.row === i) tr.classList.add("selected");
      tr.append(el("th", { scope: "row", title: token }, token));
      w[i].forEach((x, j) => {
        const td = el("td", { "data-testid": "cell", "data-i": i, "data-j": j, "data-weight": x }, fmt(x, 2));
        td.style.backgroundColor = `rgba(37, 99, 235, ${x.toFixed(3)})`;
        if (x > 0.5) td.classList.add("dark");
        tr.append(td);
      });
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

  function labelledTable(title, m) {
    const table = el("table", { class: "small" });
    table.append(el("caption", {}, title));
    const top = el("tr");
    top.append(el("th", {}), ...m.cols.map((c) => el("th", { scope: "col" }, c)));
    table.append(top);
    m.rows.forEach((r, i) => {
      const tr = el("tr");
      tr.append(el("th", { scope: "row" }, r), ...m.values[i].map((x) => el("td", {}, fmtNum(x))));
      table.append(tr);
    });
    const box = el("div", { class: "scroll" });
    box.append(table);
    return box;
  }

  function renderMatrices() {
    const h = head();
    const parts = [];
    if (h.features) parts.push(labelledTable("X: features of each word", h.features));
    if (h.w_q) parts.push(labelledTable("W_Q (rows not shown are zero)", h.w_q));
    if (h.w_k) parts.push(labelledTable("W_K (rows not shown are zero)", h.w_k));
    byTestId("matrices").replaceChildren(...parts);
    byTestId("head-weights").hidden = parts.length === 0;
  }

  function render() {
    byTestId("title").textContent = data.title;
    byTestId("description").textContent = data.description;
    document.title = data.title;
    renderControls();
    renderWords();
    renderFormula();
    const w = weights(head(), state.causal, state.scale);
    renderRow(w);
    renderMatrix(w);
    renderMatrices();
  }

  function selectRow(i) {
    state.row = i;
    render();
  }

  function onChange(id, update) {
    byTestId(id).addEventListener("change", (event) => {
      update(event.target);
      render();
    });
  }
  onChange("view-select", (t) => {
    state.view = Number(t.value);
    state.layer = 0;
    state.head = 0;
    if (state.row !== null && state.row >= view().tokens.length) state.row = null;
  });
  onChange("layer-select", (t) => {
    state.layer = Number(t.value);
    state.head = Math.min(state.head, view().layers[state.layer].heads.length - 1);
  });
  onChange("head-select", (t) => (state.head = Number(t.value)));
  onChange("causal", (t) => (state.causal = t.checked));
  onChange("scale", (t) => (state.scale = t.checked));

  // served mode: a text box whose sentence is sent to the local server
  const form = byTestId("form");
  if (form && config.api) {
    const input = byTestId("text");
    const error = byTestId("error");
    input.value = config.text || "";
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.hidden = true;
      const status = byTestId("status");
      status.textContent = "computing…";
      try {
        const response = await fetch(`${config.api}?text=${encodeURIComponent(input.value)}`, {
          headers: { Accept: "application/json" },
        });
        const body = await response.json();
        if (!response.ok) throw new Error(body.error || `server answered ${response.status}`);
        data = body;
        state.view = 0;
        state.layer = 0;
        state.head = 0;
        state.row = null;
        state.causal = !!data.causal;
        render();
        status.textContent = "";
      } catch (err) {
        status.textContent = "";
        error.textContent = err.message;
        error.hidden = false;
      }
    });
  }

  render();
  document.body.dataset.ready = "true";
})();
