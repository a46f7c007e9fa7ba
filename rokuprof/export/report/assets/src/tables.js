// Sortable tables (the views' tables) and the function rows' swatch, clipping and filters.
import { grouped, shortPath } from "./format.js";
import { fileColour } from "./colours.js";
import { fnFile, fnName, fnThread, threadName } from "./model.js";
import { state } from "./state.js";
import { derived } from "./figures.js";
import { el, text } from "./dom.js";
import { pathRoom } from "./links.js";
import { compareOn } from "./sorting.js";

// A sortable table's header row: `col` (of `columns`) is the one sorted by; a click on a column
// sorts by it (on the one sorted by: the other way; text columns start A → Z, figures largest
// first) and calls onSort. titleOf(c): a column's tooltip.
function sortableHead(columns, col, sortState, onSort, titleOf = (c) => c.title || null) {
  const thead = el("tr");
  for (const c of columns) {
    const th = el("th", { class: c.text ? "text" : null, "data-key": c.key, title: titleOf(c), "aria-sort": c.key === col.key ? (sortState.dir < 0 ? "descending" : "ascending") : null, text: c.label });
    th.addEventListener("click", () => {
      if (sortState.key === c.key) sortState.dir = -sortState.dir;
      else {
        sortState.key = c.key;
        sortState.dir = c.text ? 1 : -1;
      }
      onSort();
    });
    thead.append(th);
  }
  return thead;
}
// The Function (with its thread's swatch) and Thread columns of a table of functions (f: rows).
function fnColumns() {
  return [
    { key: "function", label: "Function", text: true, cls: "fn", get: (f) => fnName[f], render: (td, f) => td.append(swatchFor(f), text(fnName[f])) },
    { key: "thread", label: "Thread", text: true, get: (f) => threadName[fnThread[f]] },
  ];
}
// columns: {key, label, text?, cls?, get(row), fmt?(v, row), title?}
function dataTable(id, columns, rows, sortState, onSort, limit = 1000, extra) {
  const col = columns.find((c) => c.key === sortState.key) || columns[0];
  const sorted = rows.slice().sort((a, b) => compareOn(col, a, b) * sortState.dir || (columns[0].get(a) < columns[0].get(b) ? -1 : 1));
  const thead = sortableHead(columns, col, sortState, onSort);
  const maxes = {};
  for (const c of columns) if (c.bar) maxes[c.key] = Math.max(1e-12, ...rows.map((r) => c.get(r)));
  const tbody = el("tbody");
  for (const row of sorted.slice(0, limit)) {
    const tr = el("tr", extra ? extra(row) : null);
    for (const c of columns) {
      const v = c.get(row);
      const td = el("td", { class: [c.text ? "text" : "", c.cls || "", c.bar ? "bar" : ""].join(" ").trim() || null, "data-key": c.key });
      if (c.render) c.render(td, row);
      else td.textContent = c.fmt ? c.fmt(v, row) : String(v);
      if (!c.text) {
        const exact = c.value ? c.value(row) : v; // null: no figure (a side without it)
        if (exact !== null) td.setAttribute("data-value", String(exact));
        if (c.exact !== false) td.title = Number.isInteger(v) ? grouped(v) : String(v);
      }
      if (c.bar && v > 0) td.style.backgroundImage = `linear-gradient(to left, var(--bar) ${((100 * v) / maxes[c.key]).toFixed(1)}%, transparent 0)`;
      tr.append(td);
    }
    tbody.append(tr);
  }
  const table = el("table", { class: "data", id }, el("thead", null, thead), tbody);
  const wrap = el("div", { class: "tablewrap" }, table);
  if (sorted.length > limit) wrap.append(el("div", { class: "more", text: `… and ${sorted.length - limit} more (sort by another column to see them)` }));
  return wrap;
}
const swatchFor = (f) => {
  const s = el("span", { class: "swatch" });
  s.style.background = fileColour(fnFile[f], fnName[f], false);
  return s;
};
// A clipped text (ellipsis where it does not fit); a path is shortened at "/" instead (shortPath,
// the whole path in its title).
const clip = (t, kind) => (kind === "path" ? el("span", { class: "clip path", title: t, text: shortPath(t, pathRoom(false)) }) : el("span", { class: `clip ${kind}`, text: t }));
const visibleFn = (f) => (state.thread < 0 || fnThread[f] === state.thread) && !derived.hiddenFn[f];

export { clip, dataTable, fnColumns, sortableHead, swatchFor, visibleFn };
