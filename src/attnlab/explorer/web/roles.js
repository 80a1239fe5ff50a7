// attnlab attention explorer, head roles: for each score in data.roles (attnlab.explorer.sources.roles),
// a table of layers × heads shaded by the score (captioned by data.roles.names, in the page's
// language); choosing a cell opens that head in the one-head view. Runs after main.js,
// inside the same function scope; a page without data.roles shows nothing here.

function renderRoles() {
  const roles = data.roles;
  if (!roles) return;
  const section = el("section", { class: "roles", "data-testid": "roles" });
  section.append(el("h2", {}, roles.title), el("p", { class: "note" }, roles.note));
  for (const [name, grid] of Object.entries(roles.scores)) {
    const table = el("table", { class: "matrix", "data-testid": `roles-${name}` });
    const said = (roles.names || {})[name] || name;
    table.append(el("caption", {}, said));
    const top = el("tr");
    top.append(el("th", {}, ui("roles.corner")), ...grid[0].map((_, h) => el("th", {}, h + 1)));
    table.append(top);
    grid.forEach((row, l) => {
      const tr = el("tr");
      tr.append(el("th", {}, ui("roles.layer", { n: l + 1 })));
      row.forEach((v, h) => {
        const cell = el("td", {
          tabindex: 0, role: "button", "data-testid": `role-${name}-${l}-${h}`,
          title: ui("roles.cell", { layer: l + 1, head: h + 1, score: said, value: v.toFixed(3) }),
        }, v.toFixed(2));
        const shade = Math.max(0, Math.min(1, v));
        cell.style.background = `rgba(37, 99, 235, ${shade})`;
        cell.style.color = shade > 0.5 ? "white" : "black";
        const open = () => {
          if (l >= view().layers.length || h >= view().layers[l].heads.length) return;
          Object.assign(state, { mode: "head", layer: l, head: h });
          render();
        };
        cell.addEventListener("click", open);
        cell.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            open();
          }
        });
        tr.append(cell);
      });
      table.append(tr);
    });
    section.append(table);
  }
  byTestId("words").before(section);
}
renderRoles();
