// The Lines tab: CPU, wall time and allocations per source line.
import { D, facts } from "./data.js";
import { NO_MEMORY, fmtBytes, fmtCount, fmtCpu } from "./format.js";
import { fmtWall } from "./units.js";
import { fnFile, fnLine, fnName, fnThread, nodeFn, parent, pathCol, pathNode, threadName } from "./model.js";
import { state } from "./state.js";
import { derived, fnSelf } from "./figures.js";
import { el, text } from "./dom.js";
import { srcLink, whereLink } from "./links.js";
import { views } from "./page.js";
import { dataTable, swatchFor, visibleFn } from "./tables.js";
import { lineFigures } from "./linefigures.js";
import { sourceButton } from "./source.js";

function renderLines() {
  const v = views.lines;
  v.replaceChildren();
  const factor = (p) => (derived.rangeFactor ? derived.rangeFactor[pathNode[p]] : 1);
  if (!facts.lineData) {
    v.append(el("p", { class: "note", text: "This capture has no line data. Set bsprof_enable_lines=1 in the app's manifest (it needs rsg_version=1.2) to see CPU and wall time per source line." }));
  } else {
    const byFn = lineFigures().cpu;
    const hot = [...byFn.keys()].sort((a, b) => fnSelf.cpu[b] - fnSelf.cpu[a]).slice(0, 16);
    v.append(el("h2", { class: "section", text: "Hot lines: the functions with most self CPU, their lines ranked by CPU" }));
    const cards = el("div", { class: "cards", id: "line-cards" });
    for (const f of hot) {
      const lines = [...byFn.get(f).entries()].map(([line, [cpu, wall]]) => ({ line, cpu, wall }));
      const cpuSum = lines.reduce((s, l) => s + l.cpu, 0);
      const sortState = (state.sort[`lines:${f}`] ||= { key: "cpu", dir: -1 });
      const card = el("div", { class: "card", "data-fn": f });
      const draw = () => {
        card.replaceChildren(
          el("h3", null, swatchFor(f), text(fnName[f])),
          el("div", { class: "where" }, srcLink(fnFile[f], fnLine[f], fnFile[f]), text(` · ${threadName[fnThread[f]]} · self CPU ${fmtCpu(fnSelf.cpu[f])}, self wall ${fmtWall(fnSelf.wall[f])}`), sourceButton(f)),
          dataTable(null, [
            { key: "line", label: "Line", get: (l) => l.line, render: (td, l) => td.append(srcLink(fnFile[f], l.line, String(l.line))) },
            { key: "cpu", label: "CPU", get: (l) => l.cpu, fmt: fmtCpu, bar: true },
            { key: "share", label: "% of function", get: (l) => (cpuSum ? (100 * l.cpu) / cpuSum : 0), fmt: (x) => `${x.toFixed(1)}%`, exact: false },
            { key: "wall", label: "Wall", get: (l) => l.wall, fmt: fmtWall },
          ], lines, sortState, draw, 12),
        );
      };
      draw();
      cards.append(card);
    }
    if (!hot.length) cards.append(el("p", { class: "note", text: "No line figures in this selection." }));
    v.append(cards);
  }
  if (!facts.memoryOps) {
    v.append(el("h2", { class: "section", text: "Allocation sites" }), el("p", { class: "note nomem", text: `${NO_MEMORY}.` }));
    return;
  }
  const A = D.allocLines || [];
  if (A.length) renderAllocLines(v);
  else renderAllocCallers(v, factor);
}
// Allocation sites at their source lines (function line + line offset - 1), ranked by bytes.
function renderAllocLines(v) {
  v.append(el("h2", { class: "section", text: "Allocation sites: the functions that allocate most, their lines ranked by bytes" }));
  const byFn = lineFigures().alloc;
  const top = [...byFn.keys()].sort((a, b) => fnSelf.allocBytes[b] - fnSelf.allocBytes[a]).slice(0, 12);
  const cards = el("div", { class: "cards", id: "alloc-cards" });
  for (const f of top) {
    const lines = [...byFn.get(f).values()];
    const bytesSum = lines.reduce((s, l) => s + l.bytes, 0);
    const sortState = (state.sort[`allocLines:${f}`] ||= { key: "bytes", dir: -1 });
    const card = el("div", { class: "card", "data-fn": f });
    const draw = () =>
      card.replaceChildren(
        el("h3", null, swatchFor(f), text(fnName[f])),
        el("div", { class: "where" }, srcLink(fnFile[f], fnLine[f], fnFile[f]), text(` · ${threadName[fnThread[f]]} · ${fmtBytes(fnSelf.allocBytes[f])} in ${fmtCount(fnSelf.allocCount[f])} allocations`), sourceButton(f)),
        dataTable(null, [
          { key: "line", label: "Line", get: (l) => l.line, render: (td, l) => td.append(srcLink(fnFile[f], l.line, String(l.line))) },
          { key: "bytes", label: "Bytes", get: (l) => l.bytes, fmt: fmtBytes, bar: true },
          { key: "share", label: "% of function", get: (l) => (bytesSum ? (100 * l.bytes) / bytesSum : 0), fmt: (x) => `${x.toFixed(1)}%`, exact: false },
          { key: "count", label: "Allocs", get: (l) => l.count, fmt: fmtCount },
          { key: "avg", label: "Avg size", get: (l) => (l.count ? l.bytes / l.count : 0), fmt: fmtBytes, exact: false },
        ], lines, sortState, draw, 12),
      );
    draw();
    cards.append(card);
  }
  if (!top.length) cards.append(el("p", { class: "note", text: "No allocations in this selection." }));
  v.append(cards);
}
// Without allocations per line (no line data): where each allocating function was called from.
function renderAllocCallers(v, factor) {
  v.append(el("h2", { class: "section", text: "Allocation sites: where each allocating function was called from, ranked by bytes" }));
  const byFn = new Map();
  for (const [p, lines] of D.sites) {
    const n = pathNode[p], f = nodeFn[n];
    if (!visibleFn(f)) continue;
    const k = factor(p);
    const bytes = pathCol.allocBytes[p] * k;
    if (!bytes) continue;
    const caller = parent[n] >= 0 ? nodeFn[parent[n]] : -1;
    const key = `${caller}:${lines[1] || 0}`;
    let m = byFn.get(f);
    if (!m) byFn.set(f, (m = new Map()));
    const cur = m.get(key) || { caller, line: lines[1] || 0, bytes: 0, count: 0, live: 0 };
    cur.bytes += bytes;
    cur.count += pathCol.allocCount[p] * k;
    cur.live += pathCol.liveBytes[p] * k;
    m.set(key, cur);
  }
  const top = [...byFn.keys()].sort((a, b) => fnSelf.allocBytes[b] - fnSelf.allocBytes[a]).slice(0, 12);
  const cards = el("div", { class: "cards", id: "alloc-cards" });
  for (const f of top) {
    const sites = [...byFn.get(f).values()];
    const sortState = (state.sort[`sites:${f}`] ||= { key: "bytes", dir: -1 });
    const card = el("div", { class: "card", "data-fn": f });
    const draw = () =>
      card.replaceChildren(
        el("h3", null, swatchFor(f), text(fnName[f])),
        el("div", { class: "where" }, whereLink(f), text(` · ${fmtBytes(fnSelf.allocBytes[f])} in ${fmtCount(fnSelf.allocCount[f])} allocations`)),
        dataTable(null, [
          { key: "site", label: "Called from", text: true, cls: "loc", get: (s) => (s.caller >= 0 ? `${fnName[s.caller]} (${fnFile[s.caller]}:${s.line})` : "(thread root)"), render: (td, s) => (s.caller >= 0 ? td.append(text(`${fnName[s.caller]} (`), srcLink(fnFile[s.caller], s.line), text(")")) : td.append(text("(thread root)"))) },
          { key: "bytes", label: "Bytes", get: (s) => s.bytes, fmt: fmtBytes, bar: true },
          { key: "count", label: "Allocs", get: (s) => s.count, fmt: fmtCount },
          { key: "live", label: "Live at end", get: (s) => s.live, fmt: fmtBytes },
        ], sites, sortState, draw, 12),
      );
    draw();
    cards.append(card);
  }
  v.append(cards);
}

export { renderLines };
