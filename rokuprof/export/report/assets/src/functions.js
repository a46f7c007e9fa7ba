// The Functions tab: every function's self and total figures, filtered and sorted.
import { facts } from "./data.js";
import { CPU_TITLE, NO_MEMORY, fmtBytes, fmtCount, fmtCpu } from "./format.js";
import { fmtWall } from "./units.js";
import { COLS, fnFile, fnLine, fnName, fnThread, nF, threadName } from "./model.js";
import { state } from "./state.js";
import { fnSelf, fnTotal, threadRoots, total } from "./figures.js";
import { el, fnWhere } from "./dom.js";
import { EDITOR, editorHref } from "./links.js";
import { views } from "./page.js";
import { dirty, renderActive } from "./actions.js";
import { clip, dataTable, swatchFor, visibleFn } from "./tables.js";
import { isSelected } from "./bottomup.js";

const fnFilterBox = el("input", { type: "search", id: "fn-filter", placeholder: "Filter by name or file" });
fnFilterBox.addEventListener("input", () => {
  state.fnFilter = fnFilterBox.value;
  dirty.add("functions");
  renderActive();
});
function fnRows() {
  const q = state.fnFilter.trim().toLowerCase();
  const rows = [];
  for (let f = 0; f < nF; f++) {
    if (!visibleFn(f)) continue;
    if (q && !fnName[f].toLowerCase().includes(q) && !fnFile[f].toLowerCase().includes(q)) continue;
    if (!COLS.some((c) => fnTotal[c][f] || fnSelf[c][f])) continue;
    rows.push(f);
  }
  return rows;
}
function renderFunctions() {
  const v = views.functions;
  v.replaceChildren();
  const rows = fnRows();
  const wallAll = threadRoots().reduce((s, t) => s + total.wall[t], 0);
  // Sized to fit 1,280 px: names, threads and files are clipped (the whole text in the cell's
  // title); the memory columns only when the capture has memory data.
  const cols = [
    { key: "function", label: "Function", text: true, cls: "fn", get: (f) => fnName[f], render: (td, f) => { td.append(swatchFor(f), clip(fnName[f], "name")); td.title = fnName[f]; } },
    { key: "module", label: "Thread", text: true, get: (f) => threadName[fnThread[f]], render: (td, f) => { td.append(clip(threadName[fnThread[f]], "thread")); td.title = threadName[fnThread[f]]; } },
    { key: "selfWall", label: "Self wall", get: (f) => fnSelf.wall[f], fmt: fmtWall, bar: true },
    { key: "selfPct", label: "Self %", title: "Self wall time, share of the run's wall time", get: (f) => (wallAll ? (100 * fnSelf.wall[f]) / wallAll : 0), fmt: (v) => `${v.toFixed(1)}%`, exact: false },
    { key: "totalWall", label: "Total wall", get: (f) => fnTotal.wall[f], fmt: fmtWall },
    { key: "selfCpu", label: "Self CPU", get: (f) => fnSelf.cpu[f], fmt: fmtCpu, title: CPU_TITLE },
    { key: "totalCpu", label: "Total CPU", get: (f) => fnTotal.cpu[f], fmt: fmtCpu, title: CPU_TITLE },
    { key: "calls", label: "Calls", get: (f) => fnSelf.calls[f], fmt: fmtCount },
    { key: "perCall", label: "Wall/call", title: "Total wall time per call", get: (f) => (fnSelf.calls[f] ? fnTotal.wall[f] / fnSelf.calls[f] : 0), fmt: (v) => (v ? fmtWall(v) : "–"), exact: false },
    ...(facts.memoryOps
      ? [
          { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
          { key: "allocBytes", label: "Alloc bytes", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes },
          { key: "frees", label: "Frees", title: "Frees and realloc frees made by the function", get: (f) => fnSelf.frees[f] + fnSelf.reallocs[f], fmt: fmtCount },
          { key: "liveBytes", label: "Live at end", title: "Bytes it allocated that were still live at the end", get: (f) => fnSelf.liveBytes[f], fmt: fmtBytes },
        ]
      : []),
    { key: "file", label: "File", text: true, cls: "loc", get: (f) => fnWhere(f), render: (td, f) => { td.append(EDITOR ? el("a", { class: "src", href: editorHref(fnFile[f], fnLine[f]) }, clip(fnWhere(f), "path")) : clip(fnWhere(f), "path")); td.title = fnWhere(f); } },
  ];
  v.append(
    el("div", { class: "toolbar" }, fnFilterBox, el("span", { class: "matches", id: "fn-count", text: `${rows.length} function${rows.length === 1 ? "" : "s"}` })),
    ...(facts.memoryOps ? [] : [el("p", { class: "note nomem", text: `${NO_MEMORY}: no allocation, free or live-heap columns.` })]),
    dataTable("functions", cols, rows, state.sort.functions, renderFunctions, 1000, (f) => ({ "data-fn": f, class: isSelected(f) ? "selected" : null })),
  );
}

export { fnFilterBox, renderFunctions };
