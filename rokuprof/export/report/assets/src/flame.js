// The flame graph (and icicle): layout, drawing, zoom, search, tooltips and the legend.
import { DF, facts } from "./data.js";
import { NO_MEMORY, fmtCount, fmtCpu, grouped, pct } from "./format.js";
import { fileColour } from "./colours.js";
import { METRIC, METRICS, fmtWall } from "./units.js";
import { N, T, fnFile, fnName, fnThread, kids, nodeFn, nodeThread, parent, threadName } from "./model.js";
import { fileOrder } from "./pagecolours.js";
import { state } from "./state.js";
import { rootValue, self, threadRoots, total } from "./figures.js";
import { el, text } from "./dom.js";
import { whereLink } from "./links.js";
import { views } from "./page.js";
import { dirty, renderActive } from "./actions.js";
import { changeColour, diffTipRow, flameQuad, renderDiffLegend } from "./diffmodel.js";

const ROW = 20;
const flameCanvas = el("canvas", { id: "flame", "aria-label": "Flame graph" });
const flameWrap = el("div", { class: "flame-wrap" }, flameCanvas);
const crumbs = el("div", { class: "crumbs", id: "crumbs" });
const searchBox = el("input", { type: "search", id: "search", placeholder: "Search functions or files", "aria-label": "Search" });
const matchesText = el("span", { class: "matches", id: "matches" });
const metricSeg = el("span", { class: "seg", id: "metric", role: "group", "aria-label": "Size frames by" });
for (const m of METRICS) {
  const off = m.memory && !facts.memoryOps;
  metricSeg.append(el("button", { "data-metric": m.key, "aria-pressed": "false", class: off ? "nodata" : null, title: off ? NO_MEMORY : null, text: m.label, onclick: () => setMetric(m.key) }));
}
const shapeSeg = el(
  "span",
  { class: "seg", id: "shape" },
  el("button", { "data-shape": "flame", "aria-pressed": "true", text: "Flame", onclick: () => setShape(false) }),
  el("button", { "data-shape": "icicle", "aria-pressed": "false", text: "Icicle", onclick: () => setShape(true) }),
);
const legend = el("div", { class: "legend", id: "legend" });
const flameNote = el("p", { class: "note nomem", id: "flame-note", hidden: true, text: `${NO_MEMORY}: nothing to size the frames by.` });
const tip = el("div", { class: "tip", hidden: true, role: "tooltip" });
document.body.append(tip);
searchBox.addEventListener("input", () => {
  state.search = searchBox.value;
  dirty.add("flame");
  renderActive();
});
views.flame.append(
  el("div", { class: "toolbar" }, metricSeg, shapeSeg, searchBox, matchesText),
  crumbs,
  flameNote,
  flameWrap,
  legend,
);
function setMetric(key) {
  state.metric = key;
  dirty.add("flame");
  dirty.add("tree");
  dirty.add("bottomup");
  renderActive();
}
function setShape(icicle) {
  state.icicle = icicle;
  dirty.add("flame");
  renderActive();
}
function searchTest() {
  const q = state.search.trim().toLowerCase();
  if (!q) return null;
  return (f) => f >= 0 && (fnName[f].toLowerCase().includes(q) || fnFile[f].toLowerCase().includes(q));
}
const VROOT = -2; // the "all threads" frame
// Deep call paths: at most MAX_LEVELS levels are drawn below the frame at the top (a frame
// at the last one that has callees gets a "more levels" row: click to zoom in there), and a
// zoom chain longer than CHAIN_HEAD + CHAIN_TAIL + 1 frames shows its ends around one
// "… N frames" row (click: half-way up). Figures never change, only what is drawn.
const MAX_LEVELS = 400, CHAIN_HEAD = 2, CHAIN_TAIL = 8;
const flame = { rects: [], marks: [], chain: [], width: 0, total: 0, rows: 0, chainLength: 0 };
// `view.zoom`: the frame zoomed into (the flame graph's is state.zoom; the Memory tab's
// allocation flame graph has its own); `c`: the metric that sizes the frames.
/**
 * @param {number} width
 * @param {string} [c]
 * @param {{zoom: number}} [view]
 */
function flameLayout(width, c = state.metric, view = state) {
  const t = total[c];
  const rects = [], marks = [];
  const roots = threadRoots();
  // The chain above the zoomed frame, each drawn full width.
  const chain = [];
  let focus = view.zoom;
  if (focus >= 0 && !roots.includes(nodeThread[focus])) focus = -1;
  view.zoom = focus;
  if (focus >= 0) for (let n = focus; n >= 0; n = parent[n]) chain.push(n);
  if (state.thread < 0) chain.push(VROOT);
  else if (chain.length === 0) chain.push(state.thread);
  chain.reverse();
  const top = chain[chain.length - 1];
  const value = top === VROOT ? rootValue(c) : t[top];
  let shown = chain;
  if (chain.length > CHAIN_HEAD + CHAIN_TAIL + 1) {
    const hidden = chain.length - CHAIN_HEAD - CHAIN_TAIL;
    shown = [...chain.slice(0, CHAIN_HEAD), null, ...chain.slice(chain.length - CHAIN_TAIL)];
    marks.push({ kind: "elided", node: chain[CHAIN_HEAD + (hidden >> 1)], x: 0, w: width, depth: CHAIN_HEAD, count: hidden });
  }
  shown.forEach((n, d) => {
    if (n !== null) rects.push({ node: n, x: 0, w: width, depth: d, value });
  });
  const scale = value > 0 ? width / value : 0;
  const first = shown.length, last = first + MAX_LEVELS - 1;
  let rows = first;
  const children = (n) => (n === VROOT ? roots : kids[n]);
  const order = (list) => list.filter((k) => t[k] > 0).sort((a, b) => t[b] - t[a] || a - b);
  // Depth-first with an explicit stack: [node, x, depth] of frames still to place.
  const stack = value > 0 ? [[top, 0, first]] : [];
  while (stack.length) {
    const [n, x, d] = stack.pop();
    const ks = order(children(n));
    if (!ks.length) continue;
    if (d > last) {
      marks.push({ kind: "deeper", node: n, x, w: n === top ? width : t[n] * scale, depth: d, count: levelsBelow(n, t) });
      rows = Math.max(rows, d + 1);
      continue;
    }
    let cx = x;
    const next = [];
    for (const k of ks) {
      const w = t[k] * scale;
      rects.push({ node: k, x: cx, w, depth: d, value: t[k] });
      next.push([k, cx, d + 1]); // every frame, drawn or not: the layout is exact
      cx += w;
    }
    rows = Math.max(rows, d + 1);
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
  }
  return { rects, marks, chain, width, total: value, rows, chainLength: shown.filter((n) => n !== null).length };
}
function levelsBelow(n, t) {
  // the longest chain of frames with a value below n (explicit stack)
  let most = 0;
  const stack = [[n, 0]];
  while (stack.length) {
    const [m, d] = stack.pop();
    if (d > most) most = d;
    for (const k of kids[m]) if (t[k] > 0) stack.push([k, d + 1]);
  }
  return most;
}
function nodeLabel(n) {
  if (n === VROOT) return "all threads";
  if (nodeFn[n] < 0) return threadName[n];
  return fnName[nodeFn[n]];
}
const textWidths = new Map();
// The flame graph's box ends above the window's bottom edge, so its root row (where a flame
// graph is read from) is on the first screen: at most 70 % of the window, at least FLAME_MIN px.
const FLAME_MIN = 180;
function fitFlameBox() {
  if (flameWrap.hidden || views.flame.hidden) return;
  const top = flameWrap.getBoundingClientRect().top + window.scrollY;
  const room = Math.floor(window.innerHeight - top - 12);
  flameWrap.style.maxHeight = `${Math.max(FLAME_MIN, Math.min(Math.round(window.innerHeight * 0.7), room))}px`;
}
function renderFlame() {
  for (const b of metricSeg.children) b.setAttribute("aria-pressed", b.dataset.metric === state.metric ? "true" : "false");
  for (const b of shapeSeg.children) b.setAttribute("aria-pressed", (b.dataset.shape === "icicle") === state.icicle ? "true" : "false");
  const width = Math.max(300, flameWrap.clientWidth - 2 || 1000);
  Object.assign(flame, flameLayout(width));
  const noData = METRIC[state.metric].memory && !facts.memoryOps;
  flameNote.hidden = !noData;
  flameWrap.hidden = noData;
  const match = searchTest();
  paintFlame(flameCanvas, flame, state.icicle, match, DF ? (n) => changeColour(flameQuad(n)) : null);
  fitFlameBox();
  if (!state.icicle) flameWrap.scrollTop = flameWrap.scrollHeight;
  renderCrumbs();
  renderSearchShare(match);
  renderLegend();
}
// Draw a layout of flameLayout() on a canvas (the flame graph's, or the Memory tab's).
function paintFlame(canvas, layout, icicle, match, diff) {
  const width = layout.width;
  const H = Math.max(layout.rows, 1) * ROW + 4;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(H * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${H}px`;
  layout.height = H;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, H);
  ctx.font = "12px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  for (const r of layout.rects) {
    r.y = icicle ? r.depth * ROW : H - (r.depth + 1) * ROW;
    if (r.w < 0.5) continue;
    const n = r.node;
    const f = n >= 0 ? nodeFn[n] : -1;
    let fill;
    if (diff && n >= 0) fill = diff(n);
    else if (f < 0) fill = n === VROOT ? "#d5dae2" : "#aab4c3";
    else fill = fileColour(fnFile[f], fnName[f], match && !match(f));
    if (f < 0 && match) fill = "#e7eaef";
    ctx.fillStyle = fill;
    ctx.fillRect(r.x + 0.5, r.y + 0.5, Math.max(0.5, r.w - 1), ROW - 1);
    if (match && match(f)) {
      ctx.strokeStyle = "#111827";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(r.x + 1, r.y + 1, Math.max(0.5, r.w - 2), ROW - 2);
      ctx.lineWidth = 1;
    }
    if (r.w > 28) {
      const label = nodeLabel(n);
      const room = r.w - 10;
      const fitted = fit(ctx, label, room);
      if (fitted) {
        ctx.fillStyle = "#1d2330";
        if (f >= 0 && match && !match(f)) ctx.fillStyle = "#8d97a5";
        ctx.fillText(fitted, r.x + 5, r.y + ROW / 2 + 0.5);
      }
    }
  }
  for (const m of layout.marks) {
    m.y = icicle ? m.depth * ROW : H - (m.depth + 1) * ROW;
    if (m.w < 0.5) continue;
    ctx.fillStyle = "#eef0f3";
    ctx.fillRect(m.x + 0.5, m.y + 0.5, Math.max(0.5, m.w - 1), ROW - 1);
    ctx.strokeStyle = "#8d97a5";
    ctx.setLineDash([3, 3]);
    ctx.strokeRect(m.x + 1, m.y + 1, Math.max(0.5, m.w - 2), ROW - 2);
    ctx.setLineDash([]);
    const label = m.kind === "elided" ? `… ${grouped(m.count)} frames (click to go up)` : `… ${grouped(m.count)} more levels (click to zoom in)`;
    const fitted = m.w > 28 ? fit(ctx, label, m.w - 10) : "";
    if (fitted) {
      ctx.fillStyle = "#5f6b7a";
      ctx.fillText(fitted, m.x + 5, m.y + ROW / 2 + 0.5);
    }
  }
}
function fit(ctx, label, room) {
  const w = measure(ctx, label);
  if (w <= room) return label;
  if (room < 24) return "";
  let lo = 1, hi = label.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(ctx, `${label.slice(0, mid)}…`) <= room) lo = mid;
    else hi = mid - 1;
  }
  return `${label.slice(0, lo)}…`;
}
function measure(ctx, s) {
  let w = textWidths.get(s);
  if (w === undefined) {
    w = ctx.measureText(s).width;
    if (textWidths.size < 50000) textWidths.set(s, w);
  }
  return w;
}
const renderCrumbs = () => fillCrumbs(crumbs, flame, zoomTo);
function fillCrumbs(box, layout, go) {
  box.replaceChildren();
  const elided = layout.marks.find((m) => m.kind === "elided");
  layout.rects.slice(0, layout.chainLength).forEach((r, i) => {
    if (i) box.append(el("span", { class: "sep", text: "›" }));
    if (elided && i === CHAIN_HEAD) {
      box.append(el("button", { class: "elided", "data-node": elided.node, title: "Go half-way up", text: `… ${grouped(elided.count)} frames`, onclick: () => go(elided.node) }));
      box.append(el("span", { class: "sep", text: "›" }));
    }
    box.append(el("button", { "data-node": r.node, text: nodeLabel(r.node), onclick: () => go(r.node) }));
  });
}
function renderSearchShare(match) {
  matchesText.replaceChildren();
  if (!match) return;
  // Sum the outermost matching frames under the zoomed frame (nested matches count once).
  let sum = 0, frames = 0;
  const fns = new Set();
  const t = total[state.metric];
  const under = new Uint8Array(N); // 1: the frame is a match or below one (parents come first)
  for (const r of flame.rects.slice(flame.chainLength)) {
    const f = r.node >= 0 ? nodeFn[r.node] : -1;
    const above = parent[r.node] >= 0 ? under[parent[r.node]] : 0;
    under[r.node] = above;
    if (!match(f)) continue;
    frames++;
    fns.add(f);
    under[r.node] = 1;
    if (!above) sum += t[r.node];
  }
  state.searchShare = flame.total > 0 ? sum / flame.total : 0;
  matchesText.append(
    el("b", { text: `${fns.size} function${fns.size === 1 ? "" : "s"}` }),
    text(` in ${frames} frame${frames === 1 ? "" : "s"}: `),
    el("b", { id: "match-share", text: pct(sum, flame.total) }),
    text(` of ${METRIC[state.metric].label.toLowerCase()} (${METRIC[state.metric].fmt(sum)})`),
  );
}
function renderLegend() {
  legend.replaceChildren();
  if (DF) {
    renderDiffLegend(legend);
    return;
  }
  const files = [...fileOrder.entries()].sort((a, b) => a[1] - b[1]).slice(0, 12);
  for (const [file] of files) {
    const sw = el("i");
    sw.style.background = fileColour(file, "", false);
    legend.append(el("span", null, sw, text(file)));
  }
}
function zoomTo(n) {
  state.zoom = n === VROOT || (n >= 0 && n < T && state.thread === n) ? -1 : n;
  dirty.add("flame");
  renderActive();
}
function rectAt(x, y, withMarks, layout = flame, icicle = state.icicle) {
  const d = icicle ? Math.floor(y / ROW) : Math.floor((layout.height - y) / ROW);
  for (const r of layout.rects) if (r.depth === d && x >= r.x && x < r.x + r.w && r.w >= 0.5) return r;
  if (withMarks) for (const m of layout.marks) if (m.depth === d && x >= m.x && x < m.x + m.w) return m;
  return null;
}
flameCanvas.addEventListener("click", (e) => {
  const r = rectAt(e.offsetX, e.offsetY, true);
  if (r) zoomTo(r.node);
});
flameCanvas.addEventListener("mousemove", (e) => {
  const r = rectAt(e.offsetX, e.offsetY, false);
  if (!r) {
    tip.hidden = true;
    return;
  }
  showTip(r.node, e.clientX, e.clientY);
});
flameCanvas.addEventListener("mouseleave", () => (tip.hidden = true));
document.addEventListener("keydown", (e) => {
  // Escape: one level out of a zoom (not while typing in a field)
  if (e.key !== "Escape" || state.tab !== "flame" || state.zoom < 0 || /** @type {Element} */ (e.target).closest("input, select")) return;
  const up = parent[state.zoom];
  zoomTo(up >= 0 ? up : VROOT);
});
function showTip(n, cx, cy) {
  tip.replaceChildren();
  const f = n >= 0 ? nodeFn[n] : -1;
  tip.append(el("div", { class: "name", text: nodeLabel(n) }));
  if (f >= 0) tip.append(el("div", { class: "where" }, whereLink(f), text(` · ${threadName[fnThread[f]]}`)));
  const body = el("table");
  const rows = [];
  const value = (c, which) => (n === VROOT ? rootValue(c) : which[c][n]);
  for (const m of METRICS) {
    if (m.key === "calls") continue; // below: a frame's own calls, not its callees' as well
    const cur = m.key === state.metric;
    if (m.memory && !facts.memoryOps) {
      rows.push([m.key, m.label, NO_MEMORY, cur]);
      continue;
    }
    const tv = value(m.key, total);
    const sv = n === VROOT ? 0 : self[m.key][n];
    rows.push([m.key, m.label, `${m.fmt(tv)} total (${pct(tv, rootValue(m.key))}) · ${m.fmt(sv)} self`, cur]);
  }
  // Calls: how often this function was called on this call path (the path's call count, as
  // in the call tree and `inspect`); a thread frame has only calls below it.
  const calls = value("calls", total);
  const ownCalls = n === VROOT || f < 0 ? 0 : self.calls[n];
  if (f >= 0) {
    const width = state.metric === "calls" && calls !== ownCalls ? ` · ${fmtCount(calls)} with its callees (the frame's width)` : "";
    rows.push(["calls", "Calls", `${fmtCount(ownCalls)}${width}`, state.metric === "calls"]);
  } else rows.push(["calls", "Calls below", fmtCount(calls), state.metric === "calls"]);
  if (ownCalls > 0) rows.push(["perCall", "Per call", `${fmtWall(value("wall", total) / ownCalls)} wall · ${fmtCpu(value("cpu", total) / ownCalls)}`, false]);
  if (DF && n >= 0) rows.push(diffTipRow(n));
  for (const [key, k, v, cur] of rows) body.append(el("tr", { class: cur ? "cur" : null, "data-key": key }, el("td", { text: k }), el("td", { text: v })));
  tip.append(body);
  tip.hidden = false;
  const w = tip.offsetWidth, h = tip.offsetHeight;
  tip.style.left = `${Math.min(cx + 14, window.innerWidth - w - 8)}px`;
  tip.style.top = `${cy + 16 + h > window.innerHeight ? cy - h - 10 : cy + 16}px`;
}

export { VROOT, fillCrumbs, fit, flame, flameLayout, nodeLabel, paintFlame, rectAt, renderFlame, searchBox, searchTest, setMetric, showTip, tip, zoomTo };
