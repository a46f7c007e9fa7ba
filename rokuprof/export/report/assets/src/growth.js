// What grew the heap: the Memory tab's view of a time range.
import { D, HZ } from "./data.js";
import { fmtBytes, fmtCount, fmtSeconds, grouped } from "./format.js";
import { MEM, P, SLOTS, T, fnFile, fnLine, fnName, heapAt, nF, nodeFn, parent, pathCol, pathNode, threadName } from "./model.js";
import { state } from "./state.js";
import { derived, fnSelf } from "./figures.js";
import { el, text } from "./dom.js";
import { srcLink } from "./links.js";
import { views } from "./page.js";
import { dataTable, fnColumns, visibleFn } from "./tables.js";
import { VROOT, fillCrumbs, flameLayout, paintFlame, rectAt, searchTest, showTip, tip } from "./flame.js";

// The Memory tab's range view (issue 22, item 5): per call path and per function, the bytes
// allocated and freed in the range, exact (the buckets of memory operations inside it, see
// memWindow), their difference the heap's growth; the allocation flame graph of the range
// (the flame graph's own layout and drawing, sized by the bytes allocated in it) with its own
// zoom; a leak site's "Show path" zooms it to that call path. A free counts on the call path
// that freed (as the device reports it and the tables count it).
const fmtSigned = (v) => `${v > 0 ? "+" : v < 0 ? "−" : ""}${fmtBytes(Math.abs(v))}`;
function pathChain(n, lines) {
  const out = el("div", { class: "chain" });
  const nodes = [];
  for (let m = n; m >= 0 && nodeFn[m] >= 0; m = parent[m]) nodes.push(m);
  const HEAD = 3, TAIL = 8; // a deep path shows its ends
  nodes.reverse().forEach((m, i) => {
    if (nodes.length > HEAD + TAIL + 1 && i >= HEAD && i < nodes.length - TAIL) {
      if (i === HEAD) out.append(text(" › "), el("span", { class: "elided", text: `… ${grouped(nodes.length - HEAD - TAIL)} frames` }));
      return;
    }
    const f = nodeFn[m];
    const line = (lines && lines[nodes.length - 1 - i]) || fnLine[f];
    if (i) out.append(text(" › "));
    const item = el("span", { title: `${fnFile[f]}:${line}` });
    item.append(i === nodes.length - 1 ? el("b", { text: fnName[f] }) : text(fnName[f]), srcLink(fnFile[f], line, `:${line}`));
    out.append(item);
  });
  return out;
}
const siteLines = new Map(D.sites.map(([p, lines]) => [p, lines]));
const memFlame = { zoom: -1, layout: null };
const memFlameCanvas = el("canvas", { id: "mem-flame", "aria-label": "Allocation flame graph of the range: frames sized by the bytes allocated in it; click a frame to zoom" });
const memFlameWrap = el("div", { class: "flame-wrap", id: "mem-flame-wrap" }, memFlameCanvas);
const memCrumbs = el("div", { class: "crumbs", id: "mem-crumbs" });
const memFlameNote = el("p", { class: "note", id: "mem-flame-note" });
memFlameCanvas.addEventListener("click", (e) => {
  const r = memFlame.layout && rectAt(e.offsetX, e.offsetY, true, memFlame.layout, true);
  if (r) memZoom(r.node);
});
memFlameCanvas.addEventListener("mousemove", (e) => {
  const r = memFlame.layout && rectAt(e.offsetX, e.offsetY, false, memFlame.layout, true);
  if (r) showTip(r.node, e.clientX, e.clientY);
  else tip.hidden = true;
});
memFlameCanvas.addEventListener("mouseleave", () => (tip.hidden = true));
function memZoom(n) {
  memFlame.zoom = n === VROOT || (n >= 0 && n < T && state.thread === n) ? -1 : n;
  drawMemFlame();
}
// Drawn top-down (the roots at the top: nothing to scroll to), in the frame after the tab is
// built, so that its width is read in the one layout that frame needs anyway.
let memFlameFrame = 0;
function memFlameSoon() {
  if (!memFlameFrame) memFlameFrame = requestAnimationFrame(drawMemFlame);
}
function drawMemFlame() {
  memFlameFrame = 0;
  if (!memFlameWrap.isConnected || views.memory.hidden) return;
  const width = Math.max(300, memFlameWrap.clientWidth - 2 || 1000);
  const layout = (memFlame.layout = flameLayout(width, "allocBytes", memFlame));
  paintFlame(memFlameCanvas, layout, true, searchTest(), null);
  fillCrumbs(memCrumbs, layout, memZoom);
  const top = layout.chain[layout.chain.length - 1];
  memFlameNote.replaceChildren(
    text("Frames sized by the bytes allocated in the range: "),
    el("b", { id: "mem-flame-total", "data-value": layout.total, text: fmtBytes(layout.total) }),
    text(top >= 0 && nodeFn[top] >= 0 ? ` on the call path to ${fnName[nodeFn[top]]}` : ` on ${state.thread < 0 ? "all threads" : threadName[state.thread]}`),
    text(layout.total > 0 ? ". Click a frame to zoom in, a crumb to go back out." : ": nothing allocated there in this range."),
  );
}
function showPathButton(n) {
  return el("button", {
    class: "btn small show-path", "data-node": n, title: "Show this call path in the allocation flame graph above", text: "Show path",
    onclick: () => {
      memZoom(n);
      memFlameWrap.scrollIntoView({ block: "nearest" });
    },
  });
}
function renderGrowth(renderMemoryNow) {
  const w = derived.memW;
  const box = el("div", { class: "growth", id: "growth", "data-from": w.from, "data-to": w.to, "data-buckets": w.end - w.first });
  const span = state.range ? `${fmtSeconds(state.range[0] / HZ)} – ${fmtSeconds(state.range[1] / HZ)}` : "the whole run";
  box.append(el("h2", { class: "section", text: `What grew the heap: ${span}` }));
  const step = MEM.buckets ? fmtSeconds(SLOTS / HZ / MEM.buckets) : "–";
  const merged = MEM.merged ? ` (every ${grouped(2 ** MEM.merged)} of them merged to keep this page small)` : "";
  const snapped = w.whole ? "these figures are the whole run's." : `a range snaps to them: these figures are every operation that arrived after ${fmtSeconds(w.from / HZ)} and up to ${fmtSeconds(w.to / HZ)}.`;
  box.append(el("p", { class: "note", id: "mem-resolution", "data-buckets": MEM.buckets, "data-merged": MEM.merged, text: `Memory operations carry no time of their own: each is timed by where it arrived in the stream, in ${grouped(MEM.buckets)} steps about ${step} apart on average, on the live heap's line${merged}; ${snapped} A free counts on the call path that freed.` }));
  const sums = derived.memRange || pathCol;
  const rows = [];
  let alloc = 0, freed = 0, allocs = 0, frees = 0;
  for (let p = 0; p < P; p++) {
    const n = pathNode[p];
    if (!(sums.allocCount[p] || sums.frees[p] || sums.reallocs[p]) || !visibleFn(nodeFn[n])) continue;
    rows.push(p);
    alloc += sums.allocBytes[p];
    freed += sums.freedBytes[p];
    allocs += sums.allocCount[p];
    frees += sums.frees[p] + sums.reallocs[p];
  }
  const stat = (k, val, id, value) => el("div", { class: "stat", id, "data-value": value }, el("div", { class: "k", text: k }), el("div", { class: "v", text: val }));
  const live = [heapAt(w.from), w.whole ? D.totals.liveBytes : heapAt(w.to)];
  box.append(
    el(
      "div",
      { class: "stats" },
      stat("Allocated", `${fmtBytes(alloc)} in ${fmtCount(allocs)}`, "growth-alloc", alloc),
      stat("Freed", `${fmtBytes(freed)} in ${fmtCount(frees)}`, "growth-freed", freed),
      stat("Net growth", fmtSigned(alloc - freed), "growth-net", alloc - freed),
      stat("Live heap", `${fmtBytes(live[0])} → ${fmtBytes(live[1])}`, "growth-live", live[1] - live[0]),
    ),
  );
  const net = (p) => sums.allocBytes[p] - sums.freedBytes[p];
  const onSort = () => renderMemoryNow();
  box.append(el("h3", { class: "section", text: "By call path (allocation site): bytes allocated minus bytes freed on it in the range" }));
  box.append(
    dataTable("growth-paths", [
      { key: "net", label: "Net growth", get: net, fmt: fmtSigned, bar: true },
      { key: "allocBytes", label: "Allocated", get: (p) => sums.allocBytes[p], fmt: fmtBytes },
      { key: "allocCount", label: "Allocs", get: (p) => sums.allocCount[p], fmt: fmtCount },
      { key: "freedBytes", label: "Freed", get: (p) => sums.freedBytes[p], fmt: fmtBytes },
      { key: "frees", label: "Frees", title: "Frees and frees by reallocation", get: (p) => sums.frees[p] + sums.reallocs[p], fmt: fmtCount },
      { key: "liveBytes", label: "Live at end", title: "Of the whole run", get: (p) => pathCol.liveBytes[p], fmt: fmtBytes },
      { key: "fn", label: "Function", text: true, cls: "fn", get: (p) => fnName[nodeFn[pathNode[p]]] },
      { key: "path", label: "Call path", text: true, get: (p) => p, render: (td, p) => td.append(pathChain(pathNode[p], siteLines.get(p))) },
      { key: "show", label: "", text: true, get: () => "", render: (td, p) => td.append(showPathButton(pathNode[p])) },
    ], rows, state.sort.growthPaths, onSort, 30, (p) => ({ "data-path": p, "data-node": pathNode[p] })),
  );
  const fns = [];
  for (let f = 0; f < nF; f++) if (visibleFn(f) && (fnSelf.allocCount[f] || fnSelf.frees[f] || fnSelf.reallocs[f])) fns.push(f);
  const fnNet = (f) => fnSelf.allocBytes[f] - fnSelf.freedBytes[f];
  box.append(el("h3", { class: "section", text: "By function: its call paths' bytes allocated minus bytes freed in the range" }));
  box.append(
    dataTable("growth-fns", [
      ...fnColumns(),
      { key: "net", label: "Net growth", get: fnNet, fmt: fmtSigned, bar: true },
      { key: "allocBytes", label: "Allocated", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes },
      { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
      { key: "freedBytes", label: "Freed", get: (f) => fnSelf.freedBytes[f], fmt: fmtBytes },
      { key: "frees", label: "Frees", get: (f) => fnSelf.frees[f] + fnSelf.reallocs[f], fmt: fmtCount },
    ], fns, state.sort.growthFns, onSort, 100, (f) => ({ "data-fn": f })),
  );
  box.append(el("h3", { class: "section", text: "Allocation flame graph of the range" }), memCrumbs, memFlameNote, memFlameWrap);
  return box;
}

export { fmtSigned, memFlame, memFlameSoon, pathChain, renderGrowth, showPathButton };
