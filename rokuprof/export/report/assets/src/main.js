// rokuprof report: the page's script (plain JavaScript, no library), joined into one by script.py.
// It reads the data model (data.js), decodes it into typed arrays (decode.js) and draws: a
// timeline strip (busy share per thread, live heap, and for a session its marks and the app's
// CPU % and memory; drag to pick a time range that every view follows), then tabs: flame graph /
// icicle, stack chart, call tree, bottom-up, functions, lines, source (report --source), memory
// and facts; a diff page (D.diff) is B's page with A beside it.
// This entry point imports every module in the order they run, registers the tabs' renderers,
// starts the page from the URL's tab and the kept choices, and installs window.__report, the
// page's console API (documented in docs/report.md; the browser tests drive it).
import { D, DF, HZ } from "./data.js";
import "./format.js";
import "./colours.js";
import "./units.js";
import "./diffrows.js";
import "./bottomupindex.js";
import "./decode.js";
import "./sorting.js";
import { COLS, MEM, SLOTS, fnFile, fnName, fnThread, nF, nodeFn, parent, threadName } from "./model.js";
import "./pagecolours.js";
import { state } from "./state.js";
import { compute, derived, fnSelf, fnTotal } from "./figures.js";
import "./dom.js";
import "./links.js";
import "./abfacts.js";
import { TABS } from "./page.js";
import { RENDER, dirty, redraw, renderActive, renderWaits, setHideIdle, setRange, setTab, setThread } from "./actions.js";
import { TL, drawTimeline, timelineInfo, tlGeometry } from "./timeline.js";
import "./tables.js";
import "./diffmodel.js";
import { flame, renderFlame, setMetric, zoomTo } from "./flame.js";
import { renderBottomUp } from "./bottomup.js";
import { renderStack, stackHooks } from "./stackchart.js";
import { renderTree } from "./calltree.js";
import { renderFunctions } from "./functions.js";
import { renderDiffFunctions, renderDiffLines, renderDiffSites, renderDiffTree } from "./diff.js";
import "./linefigures.js";
import { renderSource } from "./source.js";
import { renderLines } from "./lines.js";
import { memFlame, memFlameSoon } from "./growth.js";
import { renderMemory } from "./memory.js";
import { renderFacts } from "./facts.js";

// The tabs' renderers and the timeline, registered with the state changes (see actions.js).
Object.assign(RENDER, { flame: renderFlame, stack: renderStack, tree: renderTree, functions: renderFunctions, bottomup: renderBottomUp, lines: renderLines, source: renderSource, memory: renderMemory, facts: renderFacts });
if (DF) Object.assign(RENDER, { tree: renderDiffTree, functions: renderDiffFunctions, lines: renderDiffLines, memory: renderDiffSites });
redraw.timeline = drawTimeline;

let resizeTimer = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    drawTimeline();
    dirty.add("flame");
    renderActive();
    if (state.tab === "memory") memFlameSoon();
  }, 80);
});
const wanted = (window.location.hash || "").slice(1) || D.view;
if (TABS.some(([k]) => k === wanted)) state.tab = wanted;
renderWaits();
compute();
setRange(null);

// The hook the browser tests use (and a console API for the curious).
window.__report = {
  state,
  model: D,
  tabs: TABS.map(([k]) => k),
  setTab, setThread, setMetric, setRange, setHideIdle, zoomTo,
  ...stackHooks,
  flame: () => flame.rects.map((r) => ({
    node: r.node, depth: r.depth, x: r.x, w: r.w, y: r.y, value: r.value,
    fn: r.node >= 0 ? nodeFn[r.node] : -1,
    key: r.node >= 0 && nodeFn[r.node] >= 0 ? [threadName[fnThread[nodeFn[r.node]]], fnName[nodeFn[r.node]], fnFile[nodeFn[r.node]]] : null,
    parent: r.node >= 0 ? parent[r.node] : -1,
  })),
  flameSize: () => ({ width: flame.width, total: flame.total, height: flame.height, rows: flame.rows, chain: flame.chain.length }),
  flameMarks: () => flame.marks.map((m) => ({ kind: m.kind, node: m.node, depth: m.depth, x: m.x, w: m.w, y: m.y, count: m.count })),
  functionFigures: () => {
    const out = [];
    for (let f = 0; f < nF; f++) {
      const row = { module: threadName[fnThread[f]], function: fnName[f], file: fnFile[f] };
      for (const c of COLS) {
        row[`self_${c}`] = fnSelf[c][f];
        row[`total_${c}`] = fnTotal[c][f];
      }
      out.push(row);
    }
    return out;
  },
  memFlame: () => (memFlame.layout ? { zoom: memFlame.zoom, total: memFlame.layout.total, chain: memFlame.layout.chain, rects: memFlame.layout.rects.map((r) => ({ node: r.node, depth: r.depth, x: r.x, w: r.w, value: r.value, fn: r.node >= 0 ? nodeFn[r.node] : -1 })) } : null),
  memWindow: () => ({ ...derived.memW, buckets: MEM.buckets, merged: MEM.merged }),
  timeline: () => ({ slots: SLOTS, hz: HZ, busy: timelineInfo.busy, left: TL.left, plot: tlGeometry().plot, top: tlGeometry().top, vitals: timelineInfo.vitals, lanes: timelineInfo.lanes }),
};
requestAnimationFrame(() => {
  window.__reportReady = true;
  if (performance.mark) performance.mark("rokuprof-report-ready");
});
