// The stack chart: what ran when, per thread, over the timeline's samples.
import { HZ } from "./data.js";
import { fmtSeconds } from "./format.js";
import { fileColour } from "./colours.js";
import { upperBound } from "./decode.js";
import { N, SLOTS, depth, fnFile, fnLine, fnName, lanes, marks, nF, nodeFn, parent, threadName } from "./model.js";
import { state } from "./state.js";
import { derived } from "./figures.js";
import { el, text } from "./dom.js";
import { whereLink } from "./links.js";
import { TABS, tlCanvas, views } from "./page.js";
import { dirty, renderActive } from "./actions.js";
import { TL, markStrip, niceStep, tlGeometry } from "./timeline.js";
import { swatchFor } from "./tables.js";
import { fit, searchBox, searchTest, showTip, tip } from "./flame.js";
import { selectFunction } from "./bottomup.js";
import { TRACE, drawTraceLevel, traceClear, traceClick, traceFocusWindow, traceHit, traceHooks, tracePanel, traceSections, traceState, traceTip } from "./tracedraw.js";

// What ran when: per thread, the timeline's synthetic samples as frames over time (time to the
// right, call depth downwards), like speedscope's Time Order or DevTools' flame chart. A frame
// is a stretch of consecutive samples whose call paths share the same node at its depth (a
// node of the call tree: the same node means the same whole stack above it). Frames are built
// on first use, per lane and depth in time order, so that a draw finds the visible ones by
// binary search and draws a frame narrower than a pixel as that pixel, skipping the rest of
// it: a draw costs the pixels on screen, not the length of the run. The window follows the
// selected time range (whole run: aligned with the timeline's axis); wheel or +/- zoom, drag or
// arrow keys pan, click selects a function (the search everywhere, outlined here).
const SC = { row: 18, gap: 10, axis: 18, marks: 18, left: TL.left, minSpan: 2, label: 28, pad: 8 };
const sc = { t0: 0, t1: SLOTS, top: 0, key: null, thread: null, sections: [], geo: null, drawn: 0, drawMs: 0, lastMs: 0, times: [], pending: 0, drag: null, picked: -1, buildMs: 0 };
let scLevels = null; // per lane: { t, levels: [{ start, end, node }] per depth - 1 }
let scOpen = null; // per depth - 1: node and first slot of the frames open while building
function stackLevels() {
  if (!scLevels) scLevels = new Array(lanes.length).fill(null);
  for (let k = 0; k < lanes.length; k++) if (!scLevels[k]) stackLane(k);
  return scLevels;
}
function stackLane(k) {
  const began = performance.now();
  if (!scOpen) {
    let deepest = 0;
    for (let n = 0; n < N; n++) if (depth[n] > deepest) deepest = depth[n];
    scOpen = [new Int32Array(deepest + 1), new Int32Array(deepest + 1)];
  }
  const [openNode, openStart] = scOpen;
  {
    const lane = lanes[k];
    const { start, node, count } = lane;
    const acc = []; // per depth - 1: [starts, ends, nodes] while building
    let open = 0; // frames open now (depths 1..open)
    const close = (keep, at) => {
      for (; open > keep; open--) {
        const d = open - 1;
        const a = acc[d] || (acc[d] = [[], [], []]);
        a[0].push(openStart[d]);
        a[1].push(at);
        a[2].push(openNode[d]);
      }
    };
    let end = -1, prev = -1;
    for (let i = 0; i < start.length; i++) {
      const s = start[i], n = node[i];
      let common = 0; // depth of the deepest node this run shares with the previous one
      if (s === end && prev >= 0) {
        let a = prev, b = n;
        while (depth[a] > depth[b]) a = parent[a];
        while (depth[b] > depth[a]) b = parent[b];
        while (a !== b) {
          a = parent[a];
          b = parent[b];
        }
        common = depth[a];
      }
      close(common, end);
      for (let m = n; depth[m] > common; m = parent[m]) {
        openNode[depth[m] - 1] = m;
        openStart[depth[m] - 1] = s;
      }
      open = depth[n];
      end = s + count[i];
      prev = n;
    }
    close(0, end);
    const levels = acc.map(([s, e, n]) => ({ start: Int32Array.from(s), end: Int32Array.from(e), node: Int32Array.from(n) }));
    scLevels[k] = { t: lane.t, levels };
  }
  sc.buildMs += performance.now() - began;
}
// Built ahead, a lane at a time while the page is idle, so that opening the tab only draws.
if (window.requestIdleCallback) {
  const ahead = (deadline) => {
    if (!scLevels) scLevels = new Array(lanes.length).fill(null);
    const k = scLevels.indexOf(null);
    if (k < 0) return;
    if (deadline.timeRemaining() > 0) stackLane(k);
    requestIdleCallback(ahead);
  };
  requestIdleCallback(ahead);
}
// The first frame of a level that ends after slot x.
const endAfter = upperBound;
const scColours = new Map();
function scColour(f, dim) {
  const key = dim ? ~f : f;
  let c = scColours.get(key);
  if (c === undefined) scColours.set(key, (c = fileColour(fnFile[f], fnName[f], dim)));
  return c;
}

const stackCanvas = el("canvas", { id: "stack", tabindex: "0", "aria-label": "Stack chart: per thread, the call stack over time; wheel or + and - to zoom, drag or the arrow keys to pan, click a frame to select its function" });
const stackMarks = marks.length ? el("div", { class: "sc-marks", id: "stack-marks", "aria-hidden": "true" }) : null;
const stackWrap = el("div", { class: "stack-wrap" }, stackCanvas, stackMarks);
const stackWindow = el("span", { class: "matches", id: "stack-window" });
const stackPicked = el("span", { class: "picked", id: "stack-selected" });
const stackNote = el("p", { class: "note", id: "stack-note", hidden: true, text: "No samples on the timeline: nothing ran that the stack chart could show." });
views.stack.append(
  el(
    "div",
    { class: "toolbar" },
    el("span", { class: "seg" }, el("button", { id: "stack-zoom-in", title: "Zoom in (+)", text: "+", onclick: () => stackZoom(1 / 1.5) }), el("button", { id: "stack-zoom-out", title: "Zoom out (−)", text: "−", onclick: () => stackZoom(1.5) }), el("button", { id: "stack-fit", title: "Back to the time range (0)", text: "Fit", onclick: () => stackFit() })),
    stackWindow,
    stackPicked,
    el("span", { class: "hint", text: "Wheel or +/− to zoom, drag or arrow keys to pan, click a frame to select its function." }),
  ),
  stackNote,
  stackWrap,
  tracePanel,
);

function stackSections() {
  // The lanes shown (the thread menu), top to bottom, each as tall as its deepest stack.
  const out = [];
  let y = 0;
  for (const lane of stackLevels()) {
    if (state.thread >= 0 && lane.t !== state.thread) continue;
    const rows = Math.max(1, lane.levels.length);
    out.push({ lane, y, rows, trace: false });
    y += rows * SC.row + SC.gap;
  }
  // a session's app trace: its lanes under the capture's (tracedraw.js)
  const trace = traceSections(y + (out.length ? SC.gap : 0), SC.row, SC.gap);
  if (trace.sections.length) {
    out.push(...trace.sections);
    y += (out.length > trace.sections.length ? SC.gap : 0) + trace.height;
  }
  return { sections: out, height: y };
}
function stackGeometry() {
  const width = Math.max(320, stackCanvas.clientWidth || stackWrap.clientWidth || 1000);
  const head = (stackMarks ? SC.marks : 0) + SC.axis;
  let left = SC.left, plot = width - SC.left - SC.pad;
  // Aligned with the timeline: the same page x for the same time when the whole run is shown.
  const tl = tlCanvas.getBoundingClientRect(), me = stackCanvas.getBoundingClientRect();
  if (tl.width > 0 && me.width > 0) {
    const l = Math.round(tl.left + TL.left - me.left), p = tlGeometry().plot;
    if (l >= 60 && l + p <= width) [left, plot] = [l, p];
  }
  const { sections, height } = stackSections();
  const most = Math.max(240, Math.round((window.innerHeight || 800) * 0.72));
  const H = Math.min(head + height, most);
  return { width, height: Math.max(H, head + SC.row), head, left, plot: Math.max(10, plot), sections, content: height };
}
const scX = (g, slot) => g.left + ((slot - sc.t0) / (sc.t1 - sc.t0)) * g.plot;
const scSlot = (g, x) => sc.t0 + ((x - g.left) / g.plot) * (sc.t1 - sc.t0);
function stackFollow() {
  // A new time range (or thread) resets the window to it; zoom and pan move within the run.
  const key = state.range ? `${state.range[0]}:${state.range[1]}` : "all";
  if (key !== sc.key) {
    sc.key = key;
    [sc.t0, sc.t1] = state.range ? state.range : [0, SLOTS];
  }
  if (sc.thread !== state.thread) {
    sc.thread = state.thread;
    sc.top = 0;
  }
}
function renderStack() {
  if (!sc.pending) sc.pending = performance.now();
  stackFollow();
  drawStack();
}
// A range dragged on the timeline: its time runs from the pointer's release (this listener
// runs before the timeline's own).
tlCanvas.addEventListener("pointerup", (e) => state.tab === "stack" && (sc.pending = Math.min(e.timeStamp, performance.now())), true);
let scFrame = 0;
function stackSoon(e) {
  // Draw once per animation frame however many events came; the time from the first event
  // to the end of the draw is the interaction's (window.__report.stackChart().lastMs).
  if (!sc.pending) sc.pending = e && e.timeStamp ? Math.min(e.timeStamp, performance.now()) : performance.now();
  if (!scFrame) scFrame = requestAnimationFrame(() => {
    scFrame = 0;
    drawStack();
  });
}
function drawStack() {
  const t0 = performance.now();
  const g = (sc.geo = stackGeometry());
  const empty = lanes.length === 0 && !TRACE;
  stackNote.hidden = !empty;
  stackWrap.hidden = empty;
  const maxTop = Math.max(0, g.content - (g.height - g.head));
  sc.top = Math.min(Math.max(0, sc.top), maxTop);
  const dpr = window.devicePixelRatio || 1;
  stackCanvas.style.height = `${g.height}px`;
  if (stackCanvas.width !== Math.round(g.width * dpr)) stackCanvas.width = Math.round(g.width * dpr);
  if (stackCanvas.height !== Math.round(g.height * dpr)) stackCanvas.height = Math.round(g.height * dpr);
  const ctx = stackCanvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, g.width, g.height);
  ctx.font = "12px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  const span = sc.t1 - sc.t0;
  const test = searchTest();
  const known = test ? new Int8Array(nF) : null; // per function: 1 matches the search, 2 not
  const match = test && ((f) => (known[f] || (known[f] = test(f) ? 1 : 2)) === 1);
  sc.picked = stackPickedFn();
  const ROWH = SC.row;
  let drawn = 0;
  // axis: ticks in seconds over the window
  const seconds = span / HZ;
  const step = niceStep(seconds / Math.max(2, g.plot / 110));
  const axisTop = g.head - SC.axis;
  ctx.fillStyle = "#8d97a5";
  ctx.strokeStyle = "#eef0f3";
  ctx.textAlign = "center";
  for (let s = Math.ceil(sc.t0 / HZ / step) * step; s <= sc.t1 / HZ + 1e-9; s += step) {
    const x = scX(g, s * HZ);
    ctx.fillRect(x, g.head - 5, 1, 4);
    ctx.fillText(step >= 1 ? fmtSeconds(s) : `${s.toFixed(Math.min(6, Math.ceil(-Math.log10(step) - 1e-9)))} s`, Math.min(Math.max(x, g.left + 12), g.width - 24), axisTop + 7);
    ctx.beginPath();
    ctx.moveTo(Math.round(x) + 0.5, g.head);
    ctx.lineTo(Math.round(x) + 0.5, g.height);
    ctx.stroke();
  }
  // frames, section by section, only the rows in view
  const viewH = g.height - g.head;
  for (const sec of g.sections) {
    const y0 = g.head + sec.y - sc.top;
    if (y0 > g.height || y0 + sec.rows * ROWH < g.head) continue;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, g.head, g.width, viewH);
    ctx.clip();
    ctx.fillStyle = "#5f6b7a";
    ctx.textAlign = "right";
    const name = sec.trace ? sec.lane.name : threadName[sec.lane.t];
    ctx.fillText(name.length > 20 ? `${name.slice(0, 19)}…` : name, g.left - 10, Math.max(y0, g.head) + ROWH / 2);
    ctx.strokeStyle = "#e2e6eb";
    ctx.beginPath();
    ctx.moveTo(0, y0 - SC.gap / 2 + 0.5);
    ctx.lineTo(g.width, y0 - SC.gap / 2 + 0.5);
    ctx.stroke();
    ctx.beginPath();
    ctx.rect(g.left, g.head, g.plot, viewH);
    ctx.clip();
    ctx.textAlign = "left";
    const first = Math.max(0, Math.floor((g.head - y0) / ROWH)), last = Math.min(sec.lane.levels.length, Math.ceil((g.height - y0) / ROWH));
    if (sec.trace) {
      const xOf = (seconds) => scX(g, seconds * HZ);
      for (let d = first; d < last; d++) drawn += drawTraceLevel(ctx, g, sec, d, y0 + d * ROWH, ROWH, xOf, sc.t0 / HZ, sc.t1 / HZ);
    } else for (let d = first; d < last; d++) drawn += drawLevel(ctx, g, sec.lane.levels[d], y0 + d * ROWH, match);
    ctx.restore();
  }
  // outside the selected range: dimmed, as on the timeline
  if (state.range) {
    const a = Math.max(g.left, scX(g, state.range[0])), b = Math.min(g.left + g.plot, scX(g, state.range[1]));
    ctx.fillStyle = "rgba(29, 35, 48, 0.18)";
    if (a > g.left) ctx.fillRect(g.left, g.head, Math.min(a, g.left + g.plot) - g.left, viewH);
    if (b < g.left + g.plot) ctx.fillRect(Math.max(b, g.left), g.head, g.left + g.plot - Math.max(b, g.left), viewH);
  }
  if (g.content > viewH) {
    // where the rows in view are among all of them
    const h = Math.max(16, (viewH * viewH) / g.content), y = g.head + (sc.top / g.content) * viewH;
    ctx.fillStyle = "rgba(95, 107, 122, 0.35)";
    ctx.fillRect(g.width - 5, y, 4, h);
  }
  placeStackMarks(g);
  stackWindow.textContent = `${fmtSeconds(sc.t0 / HZ)} – ${fmtSeconds(sc.t1 / HZ)} (${fmtSeconds(span / HZ)} shown)`;
  renderStackPicked();
  sc.drawn = drawn;
  const now = performance.now();
  sc.drawMs = now - t0;
  if (sc.pending) {
    sc.lastMs = now - sc.pending;
    sc.times.push(sc.lastMs);
    if (sc.times.length > 200) sc.times.shift();
    sc.pending = 0;
  }
}
// One depth of one lane: frames wide enough drawn with their names, narrower ones as the
// pixel they fall in (the first frame there gives its colour), the rest of that pixel skipped;
// neighbouring pixels of one colour are one rectangle.
function drawLevel(ctx, g, lv, y, match) {
  const n = lv.start.length;
  const right = g.left + g.plot;
  const perPx = (sc.t1 - sc.t0) / g.plot;
  let i = endAfter(lv.end, sc.t0), count = 0;
  let dustFrom = 0, dustTo = 0, dustColour = null; // pixels not drawn yet
  const dust = () => {
    if (dustColour === null) return;
    ctx.fillStyle = dustColour;
    ctx.fillRect(dustFrom, y + 0.5, dustTo - dustFrom, SC.row - 1);
    dustColour = null;
  };
  while (i < n && lv.start[i] < sc.t1) {
    const f = nodeFn[lv.node[i]];
    const dim = (match && !match(f)) || (state.hideIdle && derived.hiddenFn[f] === 1);
    const x0 = scX(g, lv.start[i]), x1 = scX(g, lv.end[i]);
    count++;
    if (x1 - x0 >= 2) {
      dust();
      const a = Math.max(x0, g.left - 1), b = Math.min(x1, right + 1);
      ctx.fillStyle = scColour(f, dim);
      ctx.fillRect(a + 0.5, y + 0.5, Math.max(0.5, b - a - 1), SC.row - 1);
      if (f === sc.picked) {
        ctx.strokeStyle = "#111827";
        ctx.lineWidth = 1.5;
        ctx.strokeRect(a + 1, y + 1, Math.max(0.5, b - a - 2), SC.row - 2);
        ctx.lineWidth = 1;
      }
      if (b - a > SC.label) {
        const fitted = fit(ctx, fnName[f], b - a - 10);
        if (fitted) {
          ctx.fillStyle = dim ? "#8d97a5" : "#1d2330";
          ctx.fillText(fitted, a + 5, y + SC.row / 2 + 0.5);
        }
      }
      i++;
      continue;
    }
    const px = Math.floor(x0), pxEnd = Math.max(px + 1, Math.ceil(x1));
    const colour = scColour(f, dim);
    if (colour === dustColour && px <= dustTo) dustTo = Math.max(dustTo, pxEnd);
    else {
      dust();
      [dustFrom, dustTo, dustColour] = [px, pxEnd, colour];
    }
    i = Math.max(i + 1, endAfter(lv.end, sc.t0 + (pxEnd - g.left) * perPx));
  }
  dust();
  return count;
}
// The marks: a dashed line each with its label as text (elements over the canvas, as on the
// timeline, markStrip).
function placeStackMarks(g) {
  if (!stackMarks) return;
  stackMarks.style.height = `${g.height}px`;
  const points = [];
  for (const [at, label] of marks) {
    const slot = at * HZ;
    if (slot >= sc.t0 && slot <= sc.t1) points.push([Math.round(scX(g, slot)), at, label]);
  }
  markStrip(stackMarks, points, g.left + g.plot + 8, g.plot);
}
// The frame under a point of the canvas (within half a pixel: a frame drawn as a pixel).
function stackHit(x, y) {
  const g = sc.geo;
  if (!g || x < g.left || x > g.left + g.plot || y < g.head || y > g.height) return null;
  const cy = y - g.head + sc.top;
  const sec = g.sections.find((s) => cy >= s.y && cy < s.y + s.rows * SC.row);
  if (!sec) return null;
  const d = Math.floor((cy - sec.y) / SC.row);
  if (sec.trace) return traceHit(sec, d, scSlot(g, x) / HZ, (1.5 * (sc.t1 - sc.t0)) / g.plot / HZ);
  const lv = sec.lane.levels[d];
  if (!lv) return null;
  const slot = scSlot(g, x), half = (0.5 * (sc.t1 - sc.t0)) / g.plot;
  let i = endAfter(lv.end, slot);
  if (!(i < lv.start.length && lv.start[i] <= slot)) {
    i = endAfter(lv.end, slot - half);
    if (!(i < lv.start.length && lv.start[i] <= slot + half)) return null;
  }
  return { t: sec.lane.t, depth: d + 1, node: lv.node[i], start: lv.start[i], end: lv.end[i] };
}
// A thread's frames at a time (seconds), root first: what the hover shows there.
function stackAt(t, seconds) {
  const lane = stackLevels().find((l) => l.t === t);
  if (!lane) return [];
  const slot = seconds * HZ, out = [];
  for (const lv of lane.levels) {
    const i = endAfter(lv.end, slot);
    if (!(i < lv.start.length && lv.start[i] <= slot)) break;
    const n = lv.node[i], f = nodeFn[n];
    out.push({ node: n, fn: f, name: fnName[f], file: fnFile[f], line: fnLine[f], depth: depth[n], start: lv.start[i] / HZ, end: lv.end[i] / HZ });
  }
  return out;
}
function stackTip(hit, cx, cy) {
  showTip(hit.node, cx, cy);
  const body = tip.querySelector("table");
  const run = `${fmtSeconds((hit.end - hit.start) / HZ)}, from ${fmtSeconds(hit.start / HZ)} to ${fmtSeconds(hit.end / HZ)}`;
  body.prepend(el("tr", { class: "cur", "data-key": "frame" }, el("td", { text: "This frame" }), el("td", { text: run })));
  const w = tip.offsetWidth, h = tip.offsetHeight;
  tip.style.left = `${Math.min(cx + 14, window.innerWidth - w - 8)}px`;
  tip.style.top = `${cy + 16 + h > window.innerHeight ? cy - h - 10 : cy + 16}px`;
}
// Selecting a function: the selection every view shares (state.selected), and the page's
// search set to its name (the flame graph highlights it and sums its share); outlined here.
// Clearing it clears a search it had set.
function stackPickedFn() {
  const f = state.selected;
  return f >= 0 && f < nF && state.search === fnName[f] ? f : -1;
}
function stackSelect(f, e) {
  const was = stackPickedFn();
  if (f < 0 && was < 0) return; // a click on no frame with nothing selected
  if (!sc.pending) sc.pending = e && e.timeStamp ? Math.min(e.timeStamp, performance.now()) : performance.now();
  if (f >= 0) state.search = fnName[f];
  else if (was >= 0 && state.search === fnName[was]) state.search = "";
  searchBox.value = state.search;
  if (typeof selectFunction === "function") selectFunction(f);
  else {
    state.selected = f;
    for (const [key] of TABS) dirty.add(key);
    renderActive();
  }
}
function renderStackPicked() {
  stackPicked.replaceChildren();
  const f = stackPickedFn();
  if (f < 0) {
    if (state.search.trim()) stackPicked.append(text("Search: "), el("b", { text: state.search.trim() }));
    return;
  }
  stackPicked.append(swatchFor(f), el("b", { text: fnName[f] }), text(" "), whereLink(f), text(" "), el("button", { class: "btn", id: "stack-unselect", title: "Clear the selection (Esc)", text: "×", onclick: (e) => stackSelect(-1, e) }));
}
function stackZoom(factor, x, e) {
  // factor > 1 zooms out, around page x (the window's middle when not given)
  const g = sc.geo || stackGeometry();
  const at = x == null ? (sc.t0 + sc.t1) / 2 : scSlot(g, x);
  const span = Math.min(SLOTS, Math.max(SC.minSpan, (sc.t1 - sc.t0) * factor));
  const k = (at - sc.t0) / (sc.t1 - sc.t0);
  let a = at - k * span;
  a = Math.min(Math.max(0, a), SLOTS - span);
  sc.t0 = a;
  sc.t1 = a + span;
  stackSoon(e);
}
function stackPan(slots, px, e) {
  const span = sc.t1 - sc.t0;
  const a = Math.min(Math.max(0, sc.t0 + slots), SLOTS - span);
  sc.t0 = a;
  sc.t1 = a + span;
  sc.top += px;
  stackSoon(e);
}
function stackFit() {
  [sc.t0, sc.t1] = state.range ? state.range : [0, SLOTS];
  stackSoon();
}
stackCanvas.addEventListener(
  "wheel",
  (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    if (e.shiftKey) stackPan(0, e.deltaY * unit, e);
    else if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) stackPan((e.deltaX * unit * (sc.t1 - sc.t0)) / sc.geo.plot, 0, e);
    else stackZoom(Math.exp(e.deltaY * unit * 0.002), e.offsetX, e);
  },
  { passive: false },
);
stackCanvas.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return;
  sc.drag = { x: e.offsetX, y: e.offsetY, t0: sc.t0, top: sc.top, moved: false };
  stackCanvas.setPointerCapture(e.pointerId);
  stackCanvas.focus({ preventScroll: true });
});
stackCanvas.addEventListener("pointermove", (e) => {
  const d = sc.drag;
  if (d) {
    const dx = e.offsetX - d.x, dy = e.offsetY - d.y;
    if (Math.abs(dx) + Math.abs(dy) >= 3) d.moved = true;
    if (!d.moved) return;
    tip.hidden = true;
    const span = sc.t1 - sc.t0;
    sc.t0 = Math.min(Math.max(0, d.t0 - (dx / sc.geo.plot) * span), SLOTS - span);
    sc.t1 = sc.t0 + span;
    sc.top = d.top - dy;
    stackSoon(e);
    return;
  }
  const hit = stackHit(e.offsetX, e.offsetY);
  if (hit && hit.trace) traceTip(hit, e.clientX, e.clientY);
  else if (hit) stackTip(hit, e.clientX, e.clientY);
  else tip.hidden = true;
});
stackCanvas.addEventListener("pointerup", (e) => {
  const d = sc.drag;
  sc.drag = null;
  if (!d || d.moved) return;
  const hit = stackHit(e.offsetX, e.offsetY);
  if (hit && hit.trace) {
    if (!sc.pending) sc.pending = Math.min(e.timeStamp, performance.now());
    return traceClick(hit);
  }
  if (traceClear() && !hit) stackSoon(e);
  stackSelect(hit ? nodeFn[hit.node] : -1, e);
});
stackCanvas.addEventListener("pointerleave", () => {
  if (!sc.drag) tip.hidden = true;
});
document.addEventListener("keydown", (e) => {
  if (state.tab !== "stack" || e.altKey || e.ctrlKey || e.metaKey || (/** @type {Element} */ (e.target).closest && /** @type {Element} */ (e.target).closest("input, select, textarea"))) return;
  const span = sc.t1 - sc.t0;
  const keys = {
    "+": () => stackZoom(1 / 1.5, null, e),
    "=": () => stackZoom(1 / 1.5, null, e),
    "-": () => stackZoom(1.5, null, e),
    _: () => stackZoom(1.5, null, e),
    ArrowLeft: () => stackPan(-0.1 * span, 0, e),
    ArrowRight: () => stackPan(0.1 * span, 0, e),
    ArrowUp: () => stackPan(0, -3 * SC.row, e),
    ArrowDown: () => stackPan(0, 3 * SC.row, e),
    0: () => stackFit(),
    Escape: () => {
      if (traceClear()) stackSoon(e);
      stackSelect(-1, e);
    },
  };
  const act = keys[e.key];
  if (!act) return;
  e.preventDefault();
  act();
});
searchBox.addEventListener("input", () => dirty.add("stack"));
window.addEventListener("resize", () => {
  dirty.add("stack");
  if (state.tab === "stack") setTimeout(renderActive, 90); // after the timeline's own redraw
});
// The hooks the browser tests use (window.__report).
const stackHooks = {
  stackChart: () => ({ buildMs: sc.buildMs, t0: sc.t0 / HZ, t1: sc.t1 / HZ, top: sc.top, selected: state.selected, search: state.search, drawn: sc.drawn, drawMs: sc.drawMs, lastMs: sc.lastMs, times: sc.times.slice(), left: sc.geo && sc.geo.left, plot: sc.geo && sc.geo.plot, head: sc.geo && sc.geo.head, height: sc.geo && sc.geo.height, row: SC.row, sections: sc.geo ? sc.geo.sections.map((s) => ({ thread: s.lane.t, y: s.y, rows: s.rows })) : [] }),
  stackAt,
  // Where (canvas pixels) the frame of thread t at depth d (1: the thread's first frame) and
  // time `seconds` is drawn, or null when it is not in view.
  stackPoint: (t, seconds, d) => {
    const g = sc.geo;
    const sec = g && g.sections.find((s) => s.lane.t === t);
    if (!sec) return null;
    const x = scX(g, seconds * HZ), y = g.head + sec.y - sc.top + (d - 1) * SC.row + SC.row / 2;
    return x >= g.left && x <= g.left + g.plot && y >= g.head && y <= g.height ? { x, y } : null;
  },
  stackHit,
  // The app trace's lanes (a session with trace.perfetto-trace): their sections, what is
  // highlighted, and where (canvas pixels) slice i (of model.trace.slices) is drawn, or null.
  traceLanes: () => (sc.geo ? sc.geo.sections.filter((s) => s.trace).map((s) => ({ name: s.lane.name, kind: s.lane.trace, y: s.y, rows: s.rows })) : []),
  traceSelected: () => ({ slices: [...traceState.sel].sort((a, b) => a - b), frame: traceState.frame, finding: traceState.finding }),
  tracePoint: (i) => {
    const g = sc.geo;
    if (!g || !TRACE) return null;
    const sl = TRACE.slices, name = TRACE.lanes[sl.lane[i]].name;
    const sec = g.sections.find((s) => s.trace && s.lane.trace === "lane" && s.lane.name === name && s.lane.t === -2 - sl.lane[i]);
    if (!sec) return null;
    const a = Math.max(sl.start[i], sc.t0 / HZ), b = Math.min(sl.end[i], sc.t1 / HZ);
    const x = scX(g, ((a + b) / 2) * HZ), y = g.head + sec.y - sc.top + sl.depth[i] * SC.row + SC.row / 2;
    return b >= a && x >= g.left && x <= g.left + g.plot && y >= g.head && y <= g.height ? { x, y } : null;
  },
};

// The app trace's panel: show a finding's slices (the window around them, their lane scrolled
// into view), select a function, redraw.
traceHooks.redraw = () => stackSoon();
traceHooks.select = (f) => stackSelect(f);
traceHooks.focus = (span, first) => {
  const [a, b] = traceFocusWindow(span, SLOTS / HZ, Math.max(SC.minSpan / HZ, 0.02));
  [sc.t0, sc.t1] = [a * HZ, Math.max(a * HZ + SC.minSpan, b * HZ)];
  const g = sc.geo || stackGeometry();
  const lane = TRACE.slices.lane[first];
  const sec = g.sections.find((s) => s.trace && s.lane.t === -2 - lane);
  if (sec) {
    const y = sec.y + TRACE.slices.depth[first] * SC.row, view = g.height - g.head;
    if (y < sc.top || y + SC.row > sc.top + view) sc.top = Math.max(0, y - view / 2);
  }
  stackSoon();
};

export { renderStack, stackHooks };
