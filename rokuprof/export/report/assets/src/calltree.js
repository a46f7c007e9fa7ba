// The call tree tab: the call paths as an expandable table.
import { facts } from "./data.js";
import { CPU_TITLE, NO_MEMORY, fmtBytes, fmtCount, fmtCpu, grouped } from "./format.js";
import { METRIC, fmtWall } from "./units.js";
import { COLS, N, kids, nodeFn, nodeThread } from "./model.js";
import { state } from "./state.js";
import { self, threadRoots, total } from "./figures.js";
import { el, fnWhere, text } from "./dom.js";
import { shortWhereLink } from "./links.js";
import { views } from "./page.js";
import { sortableHead, swatchFor } from "./tables.js";
import { compareOn } from "./sorting.js";
import { nodeLabel } from "./flame.js";
import { isSelected } from "./bottomup.js";

function renderTree() {
  const v = views.tree;
  v.replaceChildren();
  const m = state.metric;
  v.append(el("p", { class: "note", text: `Each row is a call path; expand a row to see what it called. Sorting orders siblings. The flame graph's metric (${METRIC[m].label.toLowerCase()}) picks which branches open first.` }));
  if (!facts.memoryOps) v.append(el("p", { class: "note nomem", text: `${NO_MEMORY}: no allocation or live-heap columns.` }));
  const cols = [
    { key: "name", label: "Function", text: true, get: (n) => nodeLabel(n) },
    { key: "total:wall", label: "Total wall", get: (n) => total.wall[n], fmt: fmtWall, bar: true },
    { key: "self:wall", label: "Self wall", get: (n) => self.wall[n], fmt: fmtWall },
    { key: "total:cpu", label: "Total CPU", title: CPU_TITLE, get: (n) => total.cpu[n], fmt: fmtCpu },
    { key: "self:cpu", label: "Self CPU", title: CPU_TITLE, get: (n) => self.cpu[n], fmt: fmtCpu },
    { key: "self:calls", label: "Calls", title: "How often the function was called on this call path", get: (n) => self.calls[n], fmt: fmtCount },
    ...(facts.memoryOps
      ? [
          { key: "total:allocBytes", label: "Alloc bytes", title: "Bytes allocated on this call path and below", get: (n) => total.allocBytes[n], fmt: fmtBytes },
          { key: "total:liveBytes", label: "Live at end", title: "Bytes allocated on this call path and below still live at the end", get: (n) => total.liveBytes[n], fmt: fmtBytes },
        ]
      : []),
    { key: "loc", label: "Location", text: true, get: (n) => (nodeFn[n] >= 0 ? fnWhere(nodeFn[n]) : ""), render: (td, n) => {
        if (nodeFn[n] < 0) return;
        td.append(shortWhereLink(nodeFn[n]));
        td.title = fnWhere(nodeFn[n]);
      } },
  ];
  const sortState = state.sort.tree;
  const col = cols.find((c) => c.key === sortState.key) || cols[1];
  const roots = threadRoots();
  if (state.expanded.size === 0) {
    // open the heaviest branch a few levels deep
    for (const r of roots) {
      let n = r;
      for (let d = 0; d < 4 && n >= 0; d++) {
        state.expanded.add(n);
        const ks = kids[n].filter((k) => total[m][k] > 0).sort((a, b) => total[m][b] - total[m][a]);
        n = ks.length ? ks[0] : -1;
      }
    }
  }
  const thead = sortableHead(cols, col, sortState, renderTree);
  const tbody = el("tbody");
  const cmp = (a, b) => compareOn(col, a, b) * sortState.dir || a - b;
  const maxWall = Math.max(1e-12, ...roots.map((r) => total.wall[r]));
  let count = 0;
  const LIMIT = 3000, MAX_INDENT = 40;
  const row = (n, d) => {
    count++;
    const open = state.expanded.has(n);
    const ks = kids[n].filter((k) => COLS.some((c) => total[c][k] > 0));
    const tr = el("tr", { "data-node": n, "data-depth": d, class: isSelected(nodeFn[n]) ? "selected" : null });
    for (const c of cols) {
      const v = c.get(n);
      const td = el("td", { class: c.key === "name" ? "text fn" : c.key === "loc" ? "text loc" : null, "data-key": c.key });
      if (c.key === "name") {
        td.style.paddingLeft = `${8 + Math.min(d, MAX_INDENT) * 16}px`;
        if (d > MAX_INDENT) td.append(el("span", { class: "depth", title: "Call depth", text: `${d} ` }));
        const tog = el("span", { class: "toggle", text: ks.length ? (open ? "▾" : "▸") : "" });
        td.append(tog);
        if (nodeFn[n] >= 0) td.append(swatchFor(nodeFn[n]));
        td.append(text(v));
        td.title = v;
        if (ks.length)
          td.addEventListener("click", () => {
            if (open) state.expanded.delete(n);
            else state.expanded.add(n);
            renderTree();
          });
        td.style.cursor = ks.length ? "pointer" : "default";
      } else if (c.text) {
        if (c.render) c.render(td, n);
        else td.textContent = v;
        td.title = v;
      } else {
        td.textContent = c.fmt(v);
        td.setAttribute("data-value", String(v));
        td.title = Number.isInteger(v) ? grouped(v) : String(v);
        if (c.bar && v > 0) {
          td.classList.add("bar");
          td.style.backgroundImage = `linear-gradient(to left, var(--bar) ${((100 * v) / maxWall).toFixed(1)}%, transparent 0)`;
        }
      }
      tr.append(td);
    }
    tbody.append(tr);
    return open ? ks.sort(cmp) : [];
  };
  // Rows in depth-first order with an explicit stack (call paths may be thousands deep).
  const stack = roots.slice().sort(cmp).reverse().map((r) => [r, 0]);
  while (stack.length && count < LIMIT) {
    const [n, d] = stack.pop();
    if (!COLS.some((c) => total[c][n] > 0)) continue;
    const open = row(n, d);
    for (let i = open.length - 1; i >= 0; i--) stack.push([open[i], d + 1]);
  }
  const wrap = el("div", { class: "tablewrap" }, el("table", { class: "data", id: "calltree" }, el("thead", null, thead), tbody));
  if (count >= LIMIT) wrap.append(el("div", { class: "more", text: `Showing the first ${LIMIT} rows; collapse branches to see more.` }));
  v.append(
    el("div", { class: "toolbar" }, el("button", { class: "btn", text: "Collapse all", onclick: () => { state.expanded = new Set(roots); renderTree(); } }), el("button", { class: "btn", text: "Expand all", onclick: () => { for (let n = 0; n < N; n++) if (roots.includes(nodeThread[n])) state.expanded.add(n); renderTree(); } })),
    wrap,
  );
}

export { renderTree };
