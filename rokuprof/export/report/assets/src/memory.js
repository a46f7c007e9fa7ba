// The Memory tab: the live heap, leaks, allocations and churn per function and call path.
import { D, facts } from "./data.js";
import { NO_MEMORY, fmtBytes, fmtCount } from "./format.js";
import { fnName, heapPeak, nF, nodeFn, nodeThread, pathCol, pathNode, threadName } from "./model.js";
import { state } from "./state.js";
import { derived, fnSelf, fnTotal } from "./figures.js";
import { el } from "./dom.js";
import { views } from "./page.js";
import { dirty } from "./actions.js";
import { dataTable, fnColumns, visibleFn } from "./tables.js";
import { fmtSigned, memFlameSoon, pathChain, renderGrowth, showPathButton } from "./growth.js";

function renderMemory() {
  const v = views.memory;
  v.replaceChildren();
  if (!facts.memoryOps) {
    v.append(el("p", { class: "note nomem", id: "memory-note", text: `${NO_MEMORY}. Add it to the app's manifest to see allocations, frees, the live heap and leaks.` }));
    return;
  }
  const tt = D.totals;
  const stat = (k, val, id) => el("div", { class: "stat", id }, el("div", { class: "k", text: k }), el("div", { class: "v", text: val }));
  v.append(
    el(
      "div",
      { class: "stats" },
      stat("Allocations", `${fmtCount(tt.allocCount)}`),
      stat("Allocated", fmtBytes(tt.allocBytes)),
      stat("Frees", fmtCount(tt.frees)),
      stat("Reallocations", fmtCount(tt.reallocs)),
      stat("Peak live heap", fmtBytes(heapPeak), "live-peak"),
      stat("Live heap at end", `${fmtBytes(tt.liveBytes)} in ${fmtCount(tt.liveCount)} blocks`, "live-total"),
      stat("Frees of unknown addresses", fmtCount(tt.unknownFrees)),
    ),
  );
  // leak sites: what was live at the end (a fact of the end: exact, whatever the range), and
  // what their call paths allocated and grew by in the range
  const leaks = [];
  for (const [p, lines] of D.sites) {
    const n = pathNode[p];
    if (!visibleFn(nodeFn[n])) continue;
    const live = pathCol.liveBytes[p];
    if (live > 0) leaks.push({ p, n, lines, live, count: pathCol.liveCount[p] });
  }
  const inRange = derived.memRange || pathCol;
  v.append(renderGrowth(renderMemoryNow));
  v.append(el("h2", { class: "section", text: "Leak sites: memory still allocated at the end, by the call path that allocated it" }));
  v.append(
    dataTable("leaks", [
      { key: "liveBytes", label: "Live at end", get: (s) => s.live, fmt: fmtBytes, bar: true },
      { key: "liveCount", label: "Blocks", get: (s) => s.count, fmt: fmtCount },
      { key: "rangeAlloc", label: state.range ? "Allocated in range" : "Allocated", title: "Bytes its call path allocated (in the selected range)", get: (s) => inRange.allocBytes[s.p], fmt: fmtBytes },
      { key: "rangeNet", label: state.range ? "Growth in range" : "Net growth", title: "Bytes its call path allocated minus bytes it freed (in the selected range)", get: (s) => inRange.allocBytes[s.p] - inRange.freedBytes[s.p], fmt: fmtSigned },
      { key: "fn", label: "Allocated by", text: true, cls: "fn", get: (s) => fnName[nodeFn[s.n]] },
      { key: "thread", label: "Thread", text: true, get: (s) => threadName[nodeThread[s.n]] },
      { key: "path", label: "Call path (root › … › allocating function, with lines)", text: true, get: (s) => s.p, render: (td, s) => td.append(pathChain(s.n, s.lines)) },
      { key: "show", label: "", text: true, get: () => "", render: (td, s) => td.append(showPathButton(s.n)) },
    ], leaks, state.sort.leaks, () => { dirty.add("memory"); renderMemoryNow(); }, 200, (s) => ({ "data-node": s.n })),
  );
  // allocation per function and realloc churn
  const rows = [];
  for (let f = 0; f < nF; f++) if (visibleFn(f) && (fnSelf.allocCount[f] || fnSelf.frees[f] || fnSelf.reallocs[f] || fnTotal.allocBytes[f])) rows.push(f);
  v.append(el("h2", { class: "section", text: "Allocation per function" }));
  v.append(
    dataTable("allocs", [
      ...fnColumns(),
      { key: "allocBytes", label: "Alloc bytes", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes, bar: true },
      { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
      { key: "avg", label: "Avg size", get: (f) => (fnSelf.allocCount[f] ? fnSelf.allocBytes[f] / fnSelf.allocCount[f] : 0), fmt: fmtBytes, exact: false },
      { key: "totalAlloc", label: "Total alloc bytes", title: "Including what its callees allocated", get: (f) => fnTotal.allocBytes[f], fmt: fmtBytes },
      { key: "frees", label: "Frees", get: (f) => fnSelf.frees[f], fmt: fmtCount },
      { key: "freedBytes", label: "Freed bytes", get: (f) => fnSelf.freedBytes[f], fmt: fmtBytes },
      { key: "liveBytes", label: "Live at end", get: (f) => fnSelf.liveBytes[f], fmt: fmtBytes },
    ], rows, state.sort.allocs, renderMemoryNow, 300),
  );
  const churn = rows.filter((f) => fnSelf.reallocs[f] > 0);
  v.append(el("h2", { class: "section", text: "Reallocation churn: functions that grow buffers by reallocating" }));
  if (!churn.length) v.append(el("p", { class: "note", text: "No reallocations in this selection." }));
  else
    v.append(
      dataTable("churn", [
        ...fnColumns(),
        { key: "reallocs", label: "Reallocations", get: (f) => fnSelf.reallocs[f], fmt: fmtCount, bar: true },
        { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
        { key: "ratio", label: "Realloc share", get: (f) => (fnSelf.allocCount[f] ? (100 * fnSelf.reallocs[f]) / fnSelf.allocCount[f] : 0), fmt: (x) => `${x.toFixed(1)}%`, exact: false },
        { key: "allocBytes", label: "Alloc bytes", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes },
      ], churn, state.sort.churn, renderMemoryNow, 100),
    );
  memFlameSoon();
}
function renderMemoryNow() {
  const top = window.scrollY;
  renderMemory();
  window.scrollTo(0, top);
}

export { renderMemory };
