// The Source tab (report --source): the hot functions' source with figures per line.
import { S, facts } from "./data.js";
import { fmtBytes, fmtCpu, grouped } from "./format.js";
import { fmtWall } from "./units.js";
import { T, fnFile, fnName, fnThread, threadName } from "./model.js";
import { state } from "./state.js";
import { fnSelf } from "./figures.js";
import { el, fnWhere, text } from "./dom.js";
import { SRC, srcLink, whereLink } from "./links.js";
import { tabButtons, views } from "./page.js";
import { dirty, setTab } from "./actions.js";
import { swatchFor, visibleFn } from "./tables.js";
import { isSelected } from "./bottomup.js";
import { lineFigures } from "./linefigures.js";

// The hot functions' source (report --source): the functions on the left, the chosen one's
// lines on the right, each with its CPU, wall time and allocations in the margin (lineFigures:
// the Lines tab's figures, in the same selection) and the hottest lines marked. Source text is
// the user's file: it reaches the page through textContent only. Only the chosen function's
// lines are drawn, so choosing another one costs its excerpt (300 lines at most).
const SRC_FILES = SRC ? SRC.files : []; // [file string, note, [[first line, [text...]]...]]
const SRC_FNS = new Map((SRC ? SRC.fns : []).map((r) => [r[0], { fn: r[0], file: r[1], first: r[2], last: r[3], note: r[4] }]));
const HOT_LINES = 3; // lines marked as the hottest in each function
const source = { picked: -1, seen: -1, ms: 0 };
function sourceLine(file, n) {
  for (const [first, lines] of SRC_FILES[file][2]) if (n >= first && n < first + lines.length) return lines[n - first];
  return null;
}
function sourceButton(f) {
  const r = SRC_FNS.get(f);
  if (!r || r.note || !tabButtons.source) return null;
  return el("button", { class: "btn src-open", "data-fn": f, title: "Show this function's source with its figures per line", text: "Source", onclick: () => showSource(f) });
}
function showSource(f) {
  source.picked = f;
  dirty.add("source");
  setTab("source");
}
function sourceFns() {
  return [...SRC_FNS.values()].filter((r) => visibleFn(r.fn)).sort((a, b) => fnSelf.cpu[b.fn] - fnSelf.cpu[a.fn] || fnSelf.wall[b.fn] - fnSelf.wall[a.fn] || a.fn - b.fn);
}
function renderSource() {
  const t0 = performance.now();
  const v = views.source;
  v.replaceChildren();
  const fns = sourceFns();
  const byNote = new Map(); // one line per reason: "not in the source: a, b"
  for (const [file, note] of SRC_FILES) if (note) byNote.set(note, [...(byNote.get(note) || []), S[file]]);
  const notes = [...byNote.entries()].map(([note, files]) => `${note}: ${files.join(", ")}`);
  v.append(el("p", { class: "note", id: "source-about" }, text(`Source from ${SRC.label}: the hot functions (most self CPU, wall time or allocated bytes), each line with its figures in this selection; the ${HOT_LINES} hottest lines of a function are marked.`)));
  if (!facts.lineData) notes.unshift("This capture has no line data, so no figures per line: build the app with bsprof_enable_lines=1 (rokuprof profile --lines)");
  for (const n of [...SRC.notes, ...notes]) v.append(el("p", { class: "note src-note", text: n }));
  if (!fns.length) {
    v.append(el("p", { class: "note", text: "No function with source in this selection." }));
    return;
  }
  // a function selected elsewhere since the last look is shown
  if (isSelected(state.selected) && state.selected !== source.seen && SRC_FNS.has(state.selected) && visibleFn(state.selected)) source.picked = state.selected;
  source.seen = state.selected;
  if (!fns.some((r) => r.fn === source.picked)) source.picked = fns[0].fn;
  const list = el("ol", { class: "src-fns", id: "src-fns" });
  const pane = el("div", { class: "src-pane", id: "src-pane" });
  for (const r of fns) {
    const f = r.fn;
    list.append(
      el(
        "li",
        { "data-fn": f, class: f === source.picked ? "picked" : null, onclick: () => pickSource(f, list, pane) },
        swatchFor(f),
        el("span", { class: "name", title: `${fnName[f]} — ${fnWhere(f)} · ${threadName[fnThread[f]]}`, text: fnName[f] }),
        T > 1 ? el("span", { class: "thread", text: threadName[fnThread[f]] }) : null,
        el("span", { class: "fig", text: fmtCpu(fnSelf.cpu[f]) }),
      ),
    );
  }
  v.append(el("div", { class: "src-wrap" }, list, pane));
  drawSourcePane(pane);
  source.ms = performance.now() - t0;
}
function pickSource(f, list, pane) {
  const t0 = performance.now();
  source.picked = f;
  for (const li of list.children) li.classList.toggle("picked", Number(li.dataset.fn) === f);
  drawSourcePane(pane);
  source.ms = performance.now() - t0;
}
function drawSourcePane(pane) {
  const r = SRC_FNS.get(source.picked);
  const f = r.fn, file = fnFile[f];
  pane.replaceChildren(
    el("h3", { id: "src-title", "data-fn": f }, swatchFor(f), el("b", { text: fnName[f] }), text(" "), whereLink(f), text(` · ${threadName[fnThread[f]]} · self CPU ${fmtCpu(fnSelf.cpu[f])}, self wall ${fmtWall(fnSelf.wall[f])}`)),
  );
  if (r.note) {
    pane.append(el("p", { class: "note src-note", text: `${fnWhere(f)}: ${r.note}` }));
    return;
  }
  const figs = lineFigures();
  const cpu = figs.cpu.get(f) || new Map(), alloc = figs.alloc.get(f) || new Map();
  const heat = [...cpu.entries()].filter(([, x]) => x[0] > 0 || x[1] > 0).sort((a, b) => b[1][0] - a[1][0] || b[1][1] - a[1][1] || a[0] - b[0]);
  const hot = new Map(heat.slice(0, HOT_LINES).map(([n], i) => [n, i + 1]));
  const maxCpu = heat.length ? Math.max(1e-12, heat[0][1][0]) : 1;
  const outside = [...new Set([...cpu.keys(), ...alloc.keys()])].filter((n) => n < r.first || n > r.last).length;
  const body = el("tbody");
  for (let n = r.first; n <= r.last; n++) {
    const line = sourceLine(r.file, n);
    if (line === null) continue;
    const c = cpu.get(n), a = alloc.get(n), rank = hot.get(n);
    const tr = el("tr", { "data-line": n, "data-hot": rank || null, class: rank ? "hot" : null });
    const fig = (key, value, shown, title) => el("td", { class: "fig", "data-key": key, "data-value": value == null ? null : String(value), title: title || null, text: shown });
    const cpuTd = fig("cpu", c ? c[0] : null, c ? fmtCpu(c[0]) : "", c ? `${grouped(c[0])} operations` : null);
    if (c && c[0] > 0) cpuTd.style.backgroundImage = `linear-gradient(to left, var(--bar) ${((100 * c[0]) / maxCpu).toFixed(1)}%, transparent 0)`;
    const allocTd = fig("allocBytes", a ? a.bytes : null, a ? fmtBytes(a.bytes) : "", a ? `${grouped(a.bytes)} bytes in ${grouped(a.count)} allocations` : null);
    if (a) allocTd.setAttribute("data-count", String(a.count));
    tr.append(
      cpuTd,
      fig("wall", c ? c[1] : null, c ? fmtWall(c[1]) : ""),
      allocTd,
      el("td", { class: "mark", text: rank ? `#${rank}` : "", title: rank ? `The ${["", "hottest", "second hottest", "third hottest"][rank] || "hot"} line of this function by CPU` : null }),
      el("td", { class: "ln", "data-key": "line" }, srcLink(file, n, String(n))),
      el("td", { class: "code", "data-key": "code" }, el("code", { text: line })),
    );
    body.append(tr);
  }
  const head = el("tr", null, ...[["cpu", "CPU"], ["wall", "Wall"], ["allocBytes", "Alloc"], ["mark", ""], ["line", "Line"], ["code", "Source"]].map(([k, label]) => el("th", { "data-key": k, text: label })));
  pane.append(el("div", { class: "tablewrap" }, el("table", { class: "data source", id: "src-code" }, el("thead", null, head), body)));
  if (outside) pane.append(el("p", { class: "note", text: `${grouped(outside)} line(s) with figures are outside this excerpt (the Lines tab lists them).` }));
}

export { renderSource, sourceButton };
