// attnlab attention explorer, part 6: the controls, what a change redraws, the served page's
// text box, and the start (state from the URL, if any).

// the parts of the page beyond the three first views, added once at the start: two more
// modes (the text shaded in place; attention composed across layers), the colour scale and
// zoom controls, the line that says how the weights were stored, a view's kind beside its
// name, why the causal switch does not govern a view, and a two-sequence view's source
function addChrome() {
  const modes = document.querySelector(".modes");
  modes.append(
    el("button", { type: "button", "data-testid": "mode-text" }, ui("mode.text")),
    el("button", { type: "button", "data-testid": "mode-composed" }, ui("mode.composed")),
  );
  const choice = (testid, label, options, key) => {
    const select = el("select", { "data-testid": testid });
    select.append(...Object.entries(options).map(([value, text]) => el("option", { value }, text)));
    const wrap = el("label", {}, label);
    wrap.append(select);
    select.addEventListener("change", () => {
      state[key] = select.value;
      render();
    });
    return wrap;
  };
  byTestId("layer-control").before(
    choice("colour-scale", ui("control.colours"), COLOUR_SCALES, "colours"),
    choice("zoom", ui("control.zoom"), ZOOMS, "zoom"),
  );
  const text = el("section", { "data-testid": "panel-text", hidden: "" });
  text.append(el("div", { class: "panel", "data-testid": "text-body" }));
  const composed = el("section", { "data-testid": "panel-composed", hidden: "" });
  composed.append(el("div", { "data-testid": "composed-body" }));
  byTestId("panel-overlay").after(text, composed);
  byTestId("description").after(el("p", { class: "note", "data-testid": "encoding", hidden: "" }));
  byTestId("view-control").after(el("span", { class: "kind", "data-testid": "view-kind", hidden: "" }));
  byTestId("fixed").after(el("p", { class: "fixed", "data-testid": "causal-reason", hidden: "" }));
  byTestId("words").after(el("p", { class: "sources", "data-testid": "sources", hidden: "" }));
}
addChrome();

function fillSelect(select, labels, selected) {
  select.replaceChildren(...labels.map((label, i) => el("option", { value: i }, label)));
  select.value = String(selected);
  select.disabled = labels.length < 2;
}

// a view's kind: the short label of its own mask, after its name in the list and beside it;
// and why the causal switch does not govern it
const KINDS = { causal: "kind.causal", bidirectional: "kind.bidirectional", cross: "kind.cross" };
const WHY_OWN_MASK = { causal: "attends.causal", bidirectional: "attends.bidirectional", cross: "attends.cross" };
const kindOf = (v) => (attendsOf(v) ? ui(KINDS[attendsOf(v)]) : "");
const viewLabel = (v) => (kindOf(v) ? `${v.name} (${kindOf(v)})` : v.name);

function renderControls() {
  fillSelect(byTestId("view-select"), data.views.map(viewLabel), state.view);
  byTestId("view-control").hidden = data.views.length < 2;
  fillSelect(byTestId("layer-select"), view().layers.map((_, i) => ui("layer.n", { n: i + 1 })), state.layer);
  fillSelect(byTestId("head-select"), layerHeads().map((h, i) => `${i + 1}: ${h.name}`), state.head);
  byTestId("layer-control").hidden = state.mode === "grid";
  byTestId("head-control").hidden = !["head", "text"].includes(state.mode);
  byTestId("colour-scale").value = state.colours;
  byTestId("zoom").value = state.zoom;
  const composed = byTestId("mode-composed");
  composed.disabled = !view().composed;
  composed.title = view().composed ? ui("composed.on") : composedReason();
  const fixed = isFixed(head());
  const attends = attendsOf();
  const kind = byTestId("view-kind");
  kind.hidden = !attends;
  kind.textContent = attends ? ui("kind.label", { kind: kindOf(view()) }) : "";
  kind.dataset.attends = attends || "";
  byTestId("causal").disabled = fixed || attends !== null; // the view's own mask, whatever the switch
  byTestId("scale").disabled = fixed;
  byTestId("causal").checked = masked();
  byTestId("scale").checked = state.scale && !fixed; // weights without q and k: no division known
  const reason = byTestId("fixed");
  reason.hidden = !fixed;
  reason.textContent = fixed ? ui("fixed.switches", { reason: view().fixed }) : "";
  const why = attends && !fixed ? ui("attends.reason", { reason: ui(WHY_OWN_MASK[attends]) }) : "";
  const causalReason = byTestId("causal-reason");
  causalReason.hidden = !why;
  causalReason.textContent = why;
  byTestId("causal").title = why || (fixed ? reason.textContent : "");
  for (const mode of MODES) byTestId(`mode-${mode}`).setAttribute("aria-pressed", String(state.mode === mode));
  for (const mode of MODES) byTestId(`panel-${mode}`).hidden = state.mode !== mode;
}

// the token buttons are rebuilt only for new tokens, so a focused one keeps its focus
let shownTokens = null;
function renderWords() {
  if (shownTokens !== view().tokens) {
    shownTokens = view().tokens;
    byTestId("words").classList.toggle("compact", view().tokens.length > CROWDED);
    byTestId("words").replaceChildren(
      ...view().tokens.map((token, i) => {
        const button = tokenLabel("button", { type: "button", "data-testid": "word", "data-index": i }, token);
        button.addEventListener("click", () => selectRow(i));
        hoverable(button, i, "query");
        return button;
      }),
    );
  }
  // the text itself is chosen from, except a two-sequence view's, which shades its source
  byTestId("words").hidden = state.mode === "text" && !twoSeq();
  byTestId("words").querySelectorAll("button").forEach((button, i) => {
    button.setAttribute("aria-pressed", String(state.row === i));
  });
  renderSources();
}

// a two-sequence view's source tokens under its tokens: hover one for its column
let shownSources = null;
function renderSources() {
  const box = byTestId("sources");
  box.hidden = !twoSeq();
  if (!twoSeq() || shownSources === view().sources) return;
  shownSources = view().sources;
  const spans = shownSources.map((token, j) => {
    const span = tokenLabel("span", { class: "source-token", "data-testid": "source-token", "data-index": j, tabindex: 0 }, token);
    hoverable(span, j, "key");
    return span;
  });
  box.replaceChildren(el("span", { class: "sources-label" }, ui("sources.label")), ...spans);
}

// what a head without q and k shows: weights given to show(), or the model's own
const fixedWeightsText = () => ui(view().given ? "fixed.given" : "fixed.model");

function renderFormula() {
  const h = head();
  const scale = state.scale ? ` / √${h.d_k}` : "";
  const bias = h.bias ? " + bias" : "";
  const mask = masked() ? ui("formula.mask", { window: h.window ? ui("formula.window", { window: h.window }) : "" }) : "";
  const own = h.weights && atStart() ? ui("formula.own") : "";
  byTestId("formula").textContent = isFixed(h)
    ? fixedWeightsText()
    : ui("formula", { scale, bias, mask, own });
  const note = state.mode === "head" ? h.note || "" : "";
  byTestId("note").textContent = note;
  byTestId("note").hidden = !note;
}

function render() {
  byTestId("title").textContent = data.title;
  byTestId("description").textContent = data.description;
  document.title = data.title;
  const stored = byTestId("encoding");
  stored.hidden = !(data.encoding && data.encoding.precision);
  stored.textContent = stored.hidden ? "" : ui("stored", { precision: data.encoding.precision });
  if (state.mode === "composed" && !view().composed) state.mode = "head";
  renderControls();
  renderWords();
  renderFormula();
  tip(null, null);
  ({ head: renderHead, grid: renderGrid, overlay: renderOverlay, text: renderText, composed: renderComposed })[state.mode]();
  writeURL();
  document.body.dataset.mode = state.mode;
  document.body.dataset.zoom = state.zoom;
}

// a hover changes only what shows the hovered token, never the element under the pointer
function onHover() {
  if (state.mode === "head") {
    renderBars();
    highlightMatrix();
    renderInside();
  } else if (state.mode === "overlay") {
    drawOverlayLines();
  } else if (state.mode === "text") {
    shadeText();
  }
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
// a new sentence keeps the layer and head shown (the Winograd page compares block 2 between
// its two sentences), within the new view's sizes
function keepPlace() {
  state.layer = Math.min(state.layer, view().layers.length - 1);
  state.head = Math.min(state.head, layerHeads().length - 1);
  if (state.row !== null && state.row >= view().tokens.length) state.row = null;
}
onChange("view-select", (t) => {
  state.view = Number(t.value);
  keepPlace();
  state.hidden.clear();
});
onChange("layer-select", (t) => {
  state.layer = Number(t.value);
  state.head = Math.min(state.head, layerHeads().length - 1);
  state.hidden.clear();
});
onChange("head-select", (t) => (state.head = Number(t.value)));
onChange("causal", (t) => (state.causal = t.checked));
onChange("scale", (t) => (state.scale = t.checked));
for (const mode of MODES) {
  byTestId(`mode-${mode}`).addEventListener("click", () => {
    state.mode = mode;
    state.hover = null;
    render();
  });
}
byTestId("export-png").addEventListener("click", exportPNG);
byTestId("export-csv").addEventListener("click", exportCSV);
byTestId("export-json").addEventListener("click", exportJSON);

// served mode: a text box whose sentence is sent to the local server
const form = byTestId("form");
async function ask(text, keepState) {
  const error = byTestId("error");
  const status = byTestId("status");
  error.hidden = true;
  if (config.maxChars && text.length > config.maxChars) {
    error.textContent = ui("ask.too_long", { n: text.length, limit: config.maxChars });
    error.hidden = false;
    return;
  }
  status.textContent = ui("ask.computing");
  try {
    const response = await fetch(`${config.api}?text=${encodeURIComponent(text)}`, {
      headers: { Accept: "application/json" },
    });
    const type = response.headers.get("Content-Type") || "";
    if (!type.includes("application/json")) throw new Error(ui("ask.answered", { status: `${response.status} ${response.statusText}`.trim() }));
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || ui("ask.answered", { status: response.status }));
    data = body;
    state.text = text;
    if (keepState) {
      readURL(keepState);
    } else {
      Object.assign(state, { view: 0, row: null, hover: null });
      keepPlace();
      state.causal = !!data.causal;
      state.scale = data.scale !== false;
      state.hidden.clear();
    }
    render();
  } catch (err) {
    error.textContent = err.message;
    error.hidden = false;
  } finally {
    status.textContent = "";
  }
}
if (form && config.api) {
  const input = byTestId("text");
  input.value = state.text;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ask(input.value, null);
  });
}

// a link followed within the page (or an edited address) moves the page to its state
window.addEventListener("hashchange", () => {
  const hash = window.location.hash;
  const text = readURL(hash);
  if (form && config.api && text && text !== state.text) ask(text, hash);
  else render();
});

// a narrower or wider window (or notebook cell) fits the table and maps anew
let resizing = null;
window.addEventListener("resize", () => {
  if (resizing) cancelAnimationFrame(resizing);
  resizing = requestAnimationFrame(() => {
    tableTokens = null;
    if (["head", "composed"].includes(state.mode)) render();
  });
});

const startHash = window.location.hash;
const askedText = startHash ? readURL(startHash) : null;
render();
if (form && config.api && askedText && askedText !== state.text) {
  byTestId("text").value = askedText;
  ask(askedText, startHash).then(() => (document.body.dataset.ready = "true"));
} else {
  document.body.dataset.ready = "true";
}
