// A session's app trace in the stack chart: its threads as lanes under the capture's stacks, on
// the same time axis, a Frames lane with each missed frame and its cause, and the findings panel
// (rendezvous, observers, script) whose rows highlight their slices. stackchart.js lays the
// lanes out with its own and calls the draw, hit and tip functions here; a click on a finding
// calls back into it (traceHooks). Device text (slice, thread names, call stacks) reaches the
// page as textContent and canvas text only.
import { D } from "./data.js";
import { fmtSeconds } from "./format.js";
import { fileColour } from "./colours.js";
import { fnName } from "./model.js";
import { el, text } from "./dom.js";
import { tip } from "./flame.js";
import { focusWindow, levelHit, levelWindow, refsSpan, traceLayout } from "./tracelanes.js";

const TRACE = D.trace || null;
const TRACE_LAYOUT = traceLayout(TRACE);
// The causes' colours (trace_lanes.CAUSES order): late to render, slow render, slow swap.
const CAUSE_COLOURS = ["#e0803a", "#d64550", "#8e5bd6"];
// What is highlighted: trace slices (a finding's, or the one clicked) and a missed frame.
const traceState = { sel: new Set(), frame: -1, finding: null };
// Set by stackchart.js: focus([from, to] seconds, first slice), select(fn), redraw().
const traceHooks = { focus: null, select: null, redraw: null };
const sliceColours = new Map();
function sliceColour(name, dim) {
  const key = dim ? `~${name}` : name;
  let c = sliceColours.get(key);
  if (c === undefined) sliceColours.set(key, (c = fileColour(name, name, dim)));
  return c;
}
const sliceName = (i) => TRACE.names[TRACE.slices.name[i]];
const fmtMs = (s) => (s < 1 ? `${(s * 1000).toFixed(s < 0.01 ? 2 : 1)} ms` : fmtSeconds(s));

// The sections the trace adds under the stack chart's, from y: the Frames lane, then a lane per
// thread ({ lane: { t, name, trace, levels }, y, rows, trace: true }, as stackchart.js's).
function traceSections(y, row, gap) {
  if (!TRACE_LAYOUT) return { sections: [], height: 0 };
  const out = [];
  let at = y;
  out.push({ lane: { t: -1, name: "Frames", trace: "frames", levels: [TRACE_LAYOUT.frames] }, y: at, rows: 1, trace: true });
  at += row + gap;
  TRACE_LAYOUT.lanes.forEach((L, k) => {
    out.push({ lane: { t: -2 - k, name: L.name, trace: "lane", levels: L.levels }, y: at, rows: L.rows, trace: true });
    at += L.rows * row + gap;
  });
  return { sections: out, height: at - y };
}
// One depth of a trace section between t0 and t1 seconds; xOf: seconds -> canvas x. Slices
// narrower than a pixel share it (the first one there is drawn).
function drawTraceLevel(ctx, g, sec, d, y, row, xOf, t0, t1) {
  const lv = sec.lane.levels[d];
  if (!lv) return 0;
  const frames = sec.lane.trace === "frames";
  const [a, b] = levelWindow(lv, t0, t1);
  const right = g.left + g.plot;
  const any = frames ? traceState.frame >= 0 : traceState.sel.size > 0;
  let lastPx = -Infinity, count = 0;
  for (let k = a; k < b; k++) {
    const x0 = xOf(lv.start[k]), x1 = xOf(lv.end[k]);
    if (x1 < g.left || x0 > right) continue;
    if (x1 - x0 < 1 && Math.floor(x0) <= lastPx) continue;
    lastPx = Math.floor(Math.max(x0, x1 - 1));
    count++;
    const i = lv.idx[k];
    const picked = frames ? i === traceState.frame : traceState.sel.has(i);
    const dim = any && !picked;
    const label = frames ? TRACE.frames.causes[TRACE.frames.missed[i][2]] : sliceName(i);
    ctx.fillStyle = frames ? CAUSE_COLOURS[TRACE.frames.missed[i][2]] || "#d64550" : sliceColour(label, dim);
    if (frames && dim) ctx.globalAlpha = 0.35;
    const xa = Math.max(x0, g.left - 1), xb = Math.min(Math.max(x1, x0 + 1), right + 1);
    ctx.fillRect(xa + 0.5, y + 0.5, Math.max(1, xb - xa - 1), row - 1);
    ctx.globalAlpha = 1;
    if (picked) {
      ctx.strokeStyle = "#111827";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(xa + 1, y + 1, Math.max(1, xb - xa - 2), row - 2);
      ctx.lineWidth = 1;
    }
    if (xb - xa > 28) {
      ctx.fillStyle = frames ? "#fff" : dim ? "#8d97a5" : "#1d2330";
      const room = Math.floor((xb - xa - 10) / 6.5);
      if (room > 1) ctx.fillText(label.length <= room ? label : `${label.slice(0, room - 1)}…`, xa + 5, y + row / 2 + 0.5);
    }
  }
  return count;
}
// The slice (or missed frame) of a section's depth d at `seconds`, within tol seconds.
function traceHit(sec, d, seconds, tol) {
  const lv = sec.lane.levels[d];
  if (!lv) return null;
  const k = levelHit(lv, seconds, tol);
  if (k < 0) return null;
  const i = lv.idx[k];
  if (sec.lane.trace === "frames") return { trace: "frame", index: i, start: lv.start[k], end: lv.end[k], depth: d + 1, t: sec.lane.t };
  return { trace: "slice", index: i, start: lv.start[k], end: lv.end[k], depth: d + 1, t: sec.lane.t, fn: TRACE.slices.fn[i] };
}
function callstackOf(i) {
  const found = TRACE.stacks.find(([k]) => k === i);
  return found ? found[1] : null;
}
// The tooltip of a trace slice or missed frame (text only).
function traceTip(hit, cx, cy) {
  tip.replaceChildren();
  const rows = [];
  if (hit.trace === "frame") {
    const [a, b, c] = TRACE.frames.missed[hit.index];
    tip.append(el("div", { class: "name", text: `Missed frame: ${TRACE.frames.causes[c]}` }));
    rows.push(["Interval", `${fmtMs(b - a)}, from ${fmtSeconds(a)}`]);
  } else {
    const i = hit.index;
    tip.append(el("div", { class: "name", text: sliceName(i) }));
    const stack = callstackOf(i);
    if (stack) tip.append(el("div", { class: "where", text: stack }));
    rows.push(["Thread", TRACE.lanes[TRACE.slices.lane[i]].name]);
    rows.push(["This slice", `${fmtMs(TRACE.slices.end[i] - TRACE.slices.start[i])}, from ${fmtSeconds(TRACE.slices.start[i])}`]);
    if (hit.fn >= 0) rows.push(["Function", `${fnName[hit.fn]} (click to select it)`]);
  }
  const body = el("table");
  for (const [k, v] of rows) body.append(el("tr", {}, el("td", { text: k }), el("td", { text: v })));
  tip.append(body);
  tip.hidden = false;
  const w = tip.offsetWidth, h = tip.offsetHeight;
  tip.style.left = `${Math.min(cx + 14, window.innerWidth - w - 8)}px`;
  tip.style.top = `${cy + 16 + h > window.innerHeight ? cy - h - 10 : cy + 16}px`;
}
// A click on a trace slice or missed frame: it alone is highlighted; a script slice whose call
// stack names a function of the capture selects that function everywhere.
function traceClick(hit) {
  traceState.finding = null;
  markFinding(null);
  if (hit.trace === "frame") {
    traceState.sel = new Set();
    traceState.frame = hit.index;
  } else {
    traceState.sel = new Set([hit.index]);
    traceState.frame = -1;
    if (hit.fn >= 0 && traceHooks.select) return traceHooks.select(hit.fn);
  }
  if (traceHooks.redraw) traceHooks.redraw();
}
function traceClear() {
  const had = traceState.sel.size > 0 || traceState.frame >= 0;
  traceState.sel = new Set();
  traceState.frame = -1;
  traceState.finding = null;
  markFinding(null);
  return had;
}

// The findings panel: how the trace was aligned, the frame figures, the top rendezvous rows, the
// observers and the script slices; a row's click highlights its slices and shows them.
const findingRows = [];
function markFinding(key) {
  for (const r of findingRows) r.classList.toggle("selected", r.dataset.finding === key);
}
function pickFinding(key, refs, fn) {
  traceState.sel = new Set(refs);
  traceState.frame = -1;
  traceState.finding = key;
  markFinding(key);
  const span = refsSpan(TRACE, refs);
  if (span && traceHooks.focus) traceHooks.focus(span, refs[0]);
  if (fn >= 0 && traceHooks.select) traceHooks.select(fn);
  else if (traceHooks.redraw) traceHooks.redraw();
}
function findingRow(key, cells, refs, fn) {
  const tr = el("tr", { "data-finding": key, tabindex: "0", title: refs.length ? "Show its slices in the lanes" : null }, ...cells.map((c) => el("td", { text: c })));
  const go = () => pickFinding(key, refs, fn);
  tr.addEventListener("click", go);
  tr.addEventListener("keydown", (e) => e.key === "Enter" && go());
  findingRows.push(tr);
  return tr;
}
function findingTable(head, rows) {
  return el("table", { class: "grid trace-findings" }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))), el("tbody", {}, ...rows));
}
function buildPanel() {
  if (!TRACE) return null;
  const F = TRACE.findings, fr = TRACE.frames.figures;
  const panel = el("section", { class: "trace-panel", id: "trace-panel" });
  panel.append(el("h3", { text: "App trace (Perfetto)" }));
  panel.append(el("p", { class: "note", id: "trace-alignment", "data-alignment": TRACE.alignment, text: `Aligned ${TRACE.alignment === "clock" ? "by the trace's clock" : "by arrival"}: ${TRACE.alignmentNote}.` }));
  for (const n of TRACE.notes) panel.append(el("p", { class: "note trace-note", text: n }));
  const causes = [0, 0, 0];
  for (const m of TRACE.frames.missed) causes[m[2]] = (causes[m[2]] || 0) + 1;
  const legend = el("p", { class: "note", id: "trace-frames" }, text(`Frames: ${fr.frames ?? 0} swaps, ${fr.missed ?? 0} missed (${fr.missed_by_two ?? 0} by two budgets, worst ${fr.worst_ms ?? 0} ms), ${fr.slow_swaps ?? 0} slow swaps. Causes: `));
  TRACE.frames.causes.forEach((c, i) => {
    const s = el("span", { class: "cause", text: `${c} ${causes[i] || 0}` });
    s.style.borderLeft = `10px solid ${CAUSE_COLOURS[i]}`;
    legend.append(s, text(" "));
  });
  panel.append(legend);
  const rv = F.rendezvous.map((r, k) => findingRow(`rendezvous:${k}`, [r.thread, r.field, String(r.count), `${r.total_ms} ms`, `${r.max_latency_ms} ms`, `${r.max_exec_ms} ms`], r.refs, -1));
  panel.append(el("h4", { text: "Rendezvous (calling thread blocked on the render thread)" }), rv.length ? findingTable(["Thread", "Field", "Count", "Blocked", "Max latency", "Max execution"], rv) : el("p", { class: "note", text: "None in this trace." }));
  const o = F.observers;
  panel.append(el("h4", { text: "Observers" }), findingTable(["Callbacks", "Outermost", "All (nested counted twice)", "Deepest cascade"], [findingRow("observers", [String(o.count), `${o.outermost_ms} ms`, `${o.naive_ms} ms`, String(o.max_depth)], o.refs, -1)]));
  const sc = F.script.map((r, k) => findingRow(`script:${k}`, [r.callstack, r.fn >= 0 ? fnName[r.fn] : "(not in the capture)", String(r.slices), `${r.wall_ms} ms`, r.cpu_ms == null ? "—" : `${r.cpu_ms} ms`, r.state], r.refs, r.fn));
  panel.append(el("h4", { text: "Script (ExecBrightScript per call stack)" }), sc.length ? findingTable(["Call stack", "Function", "Slices", "Wall", "CPU", "State"], sc) : el("p", { class: "note", text: "None in this trace." }));
  return panel;
}
const tracePanel = buildPanel();
// The window (seconds) that shows a finding's slices.
const traceFocusWindow = focusWindow;

export { CAUSE_COLOURS, TRACE, TRACE_LAYOUT, drawTraceLevel, traceClear, traceClick, traceFocusWindow, traceHit, traceHooks, tracePanel, traceSections, traceState, traceTip };
