// The timeline: busy share per thread, the live heap and the device's vitals, the marks; drag to
// pick a time range that every view follows.
import { HZ } from "./data.js";
import { fmtSeconds, grouped } from "./format.js";
import { SLOTS, VITALS, heap, heapPeak, lanes, marks, nodeFn, threadName } from "./model.js";
import { threadColour } from "./pagecolours.js";
import { state } from "./state.js";
import { derived } from "./figures.js";
import { el, text } from "./dom.js";
import { timelineView, tlCanvas, tlLabels, tlMarks, tlSection, tlToggle } from "./page.js";
import { dirty, renderActive, setRange } from "./actions.js";

// Compact: a thread lane is TL.lane px high, the counters (live heap, the device's CPU and
// memory) share one strip, each line scaled to its own peak.
const TL = { lane: 11, gap: 2, counter: 30, axis: 16, left: 150, marks: 16 };
const HEAP_COLOUR = "#3559d6";
let tlDrag = null;
function tlGeometry() {
  const width = tlCanvas.clientWidth || 1000;
  const heapOn = heap.length > 0;
  const top = marks.length ? TL.marks : 0; // a strip for the marks' labels
  const lanesTop = top + TL.axis;
  const counters = heapOn || VITALS.length > 0;
  const counterTop = lanesTop + lanes.length * (TL.lane + TL.gap) + 4;
  const height = counters ? counterTop + TL.counter + 2 : counterTop - 2;
  return { width, height, heapOn, top, lanesTop, counters, counterTop, plot: width - TL.left - 8 };
}
const slotX = (g, s) => TL.left + (s / SLOTS) * g.plot;
const secondsX = (g, at) => TL.left + Math.min(1, Math.max(0, (at * HZ) / SLOTS)) * g.plot;
const xSlot = (g, x) => Math.min(SLOTS, Math.max(0, ((x - TL.left) / g.plot) * SLOTS));
// The lanes' names (and the counters' legend) as text in the canvas's left margin.
let labelsKey = "";
function placeLabels(g) {
  const key = `${g.lanesTop}:${g.counterTop}`;
  if (labelsKey === key) return;
  labelsKey = key;
  const rows = lanes.map((lane, i) => {
    const name = threadName[lane.t];
    const swatch = el("i", { class: "swatch" });
    swatch.style.background = threadColour(name);
    const row = el("div", { class: "lane", "data-thread": name, title: name }, swatch, el("span", { class: "name", text: name }));
    row.style.top = `${g.lanesTop + i * (TL.lane + TL.gap)}px`;
    row.style.height = row.style.lineHeight = `${TL.lane}px`;
    return row;
  });
  if (g.counters) {
    const legend = el("div", { class: "counter", id: "timeline-counters" });
    const series = [...(g.heapOn ? [["live heap", HEAP_COLOUR]] : []), ...VITALS.map((v) => [v.label, v.colour])];
    series.forEach(([label, colour], i) => {
      const item = el("span", { text: label });
      item.style.color = colour;
      if (i) legend.append(text(" · "));
      legend.append(item);
    });
    legend.style.top = `${g.counterTop}px`;
    legend.style.height = `${TL.counter}px`;
    rows.push(legend);
  }
  tlLabels.replaceChildren(...rows);
}
function drawTimeline() {
  if (!timelineView.open) return;
  const g = tlGeometry();
  const dpr = window.devicePixelRatio || 1;
  tlCanvas.style.height = `${g.height}px`;
  tlCanvas.width = Math.round(g.width * dpr);
  tlCanvas.height = Math.round(g.height * dpr);
  const ctx = tlCanvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, g.width, g.height);
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  placeLabels(g);
  // axis
  const seconds = SLOTS / HZ;
  const step = niceStep(seconds / Math.max(2, g.plot / 110));
  ctx.fillStyle = "#8d97a5";
  ctx.strokeStyle = "#eef0f3";
  for (let s = 0; s <= seconds + 1e-9; s += step) {
    const x = slotX(g, s * HZ);
    ctx.fillRect(x, g.top + TL.axis - 4, 1, 3);
    ctx.textAlign = "center";
    ctx.fillText(fmtSeconds(s).replace(/^0$/, "0 s"), Math.min(x, g.width - 24), g.top + 6);
    ctx.beginPath();
    ctx.moveTo(x + 0.5, g.top + TL.axis);
    ctx.lineTo(x + 0.5, g.height);
    ctx.stroke();
  }
  timelineInfo.busy = drawLanes(ctx, g);
  if (g.counters) drawCounters(ctx, g);
  placeMarks(g);
  // selection
  const sel = tlDrag ? [Math.min(tlDrag.a, tlDrag.b), Math.max(tlDrag.a, tlDrag.b)] : state.range;
  if (sel) {
    const x0 = slotX(g, sel[0]), x1 = slotX(g, sel[1]);
    ctx.fillStyle = "rgba(29, 35, 48, 0.28)";
    const top = g.top + TL.axis, h = g.height - top;
    ctx.fillRect(TL.left, top, x0 - TL.left, h);
    ctx.fillRect(x1, top, TL.left + g.plot - x1, h);
    ctx.strokeStyle = "#3559d6";
    ctx.lineWidth = 2;
    ctx.strokeRect(x0, top, Math.max(1, x1 - x0), h - 1);
    ctx.lineWidth = 1;
  }
}
// Each thread's busy share per pixel column, in its lane (idle functions left out when hidden).
function drawLanes(ctx, g) {
  const cols = Math.max(1, Math.floor(g.plot));
  const per = SLOTS / cols;
  const busyAll = [];
  const laneBoxes = [];
  lanes.forEach((lane, i) => {
    const busy = new Float64Array(cols);
    const { start, node, count } = lane;
    for (let k = 0; k < start.length; k++) {
      const f = nodeFn[node[k]];
      if (state.hideIdle && f >= 0 && derived.hiddenFn[f]) continue;
      let a = start[k];
      const b = start[k] + count[k];
      while (a < b) {
        const c = Math.min(cols - 1, Math.floor(a / per));
        const edge = Math.min(b, (c + 1) * per);
        busy[c] += Math.max(0, edge - a);
        a = edge > a ? edge : b;
      }
    }
    busyAll.push(Array.from(busy));
    const y = g.lanesTop + i * (TL.lane + TL.gap);
    laneBoxes.push({ thread: threadName[lane.t], top: y, height: TL.lane });
    ctx.fillStyle = "#f1f3f6";
    ctx.fillRect(TL.left, y, g.plot, TL.lane);
    ctx.fillStyle = threadColour(threadName[lane.t]);
    for (let c = 0; c < cols; c++) {
      const share = Math.min(1, busy[c] / per);
      if (share > 0) {
        const h = Math.max(1, share * TL.lane);
        ctx.fillRect(TL.left + c, y + TL.lane - h, 1, h);
      }
    }
  });
  timelineInfo.lanes = laneBoxes;
  return busyAll;
}
// The counters in one strip: the live heap as an area, the device's vitals as lines, each
// scaled to its own peak (0 at the bottom); their figures are in the head row.
function drawCounters(ctx, g) {
  const y = g.counterTop, H = TL.counter;
  ctx.fillStyle = "#f1f3f6";
  ctx.fillRect(TL.left, y, g.plot, H);
  if (g.heapOn) {
    const max = Math.max(1, heapPeak);
    ctx.beginPath();
    ctx.moveTo(TL.left, y + H);
    let lastY = y + H;
    for (const [s, b] of heap) {
      const x = slotX(g, s);
      const hy = y + H - (b / max) * (H - 3);
      ctx.lineTo(x, lastY);
      ctx.lineTo(x, hy);
      lastY = hy;
    }
    ctx.lineTo(TL.left + g.plot, lastY);
    ctx.lineTo(TL.left + g.plot, y + H);
    ctx.closePath();
    ctx.fillStyle = "rgba(53, 89, 214, 0.16)";
    ctx.fill();
    ctx.strokeStyle = HEAP_COLOUR;
    ctx.lineWidth = 1.2;
    ctx.stroke();
  }
  timelineInfo.vitals = {};
  for (const v of VITALS) {
    const max = Math.max(v.key === "cpu" ? 100 : 1, v.peak);
    const py = (x) => y + H - (x / max) * (H - 3);
    ctx.beginPath();
    v.points.forEach(([at, x], i) => (i ? ctx.lineTo(secondsX(g, at), py(x)) : ctx.moveTo(secondsX(g, at), py(x))));
    if (v.points.length === 1) ctx.lineTo(secondsX(g, v.points[0][0]) + 2, py(v.points[0][1]));
    ctx.strokeStyle = v.colour;
    ctx.lineWidth = 1.2;
    ctx.stroke();
    timelineInfo.vitals[v.key] = { points: v.points.length, top: y, height: H, max };
  }
  ctx.lineWidth = 1;
}
const timelineInfo = { busy: [], vitals: {}, lanes: [] };
// The marks: a dashed line across the timeline each, its label in the strip above the axis
// (cut to the room before the next mark; the whole label in its title and in the list below).
// Marks closer than MARK_GAP px share the first one's line (its title counts the others).
// Placed again when the timeline's size changes.
const MARK_GAP = 4;
let marksKey = "";
function placeMarks(g) {
  if (!tlMarks || marksKey === `${g.width}x${g.height}`) return;
  marksKey = `${g.width}x${g.height}`;
  tlMarks.style.height = `${g.height}px`;
  markStrip(tlMarks, marks.map(([at, label]) => [Math.round(secondsX(g, at)), at, label]), TL.left + g.plot + 8, g.plot);
}
// A strip of marks over a time axis (the timeline's, the stack chart's): `points` are
// [x px, seconds, label] in time order; a mark closer than MARK_GAP px to the one before shares its
// line; each label is cut to the room before the next mark (the last one's: up to `end` px).
function markStrip(into, points, end, plot) {
  const drawn = [];
  for (const [x, at, label] of points) {
    const last = drawn[drawn.length - 1];
    if (last && x - last.x < MARK_GAP) last.more += 1;
    else drawn.push({ x, at, label, more: 0 });
  }
  into.classList.toggle("dense", drawn.length > plot / 24); // many: fainter lines
  into.replaceChildren(
    ...drawn.map(({ x, at, label, more }, i) => {
      const room = (i + 1 < drawn.length ? drawn[i + 1].x : end) - x - 6;
      const chars = Math.floor(room / 6.5);
      const shown = label.length <= chars ? label : chars > 1 ? `${label.slice(0, chars - 1)}…` : "";
      const title = `${label} — ${fmtSeconds(at)}${more ? ` (and ${grouped(more)} more mark${more > 1 ? "s" : ""} right after it)` : ""}`;
      const mark = el("div", { class: "mark", "data-at": at, "data-label": label, "data-count": 1 + more, title }, shown ? el("span", { class: "label", text: shown }) : null);
      mark.style.left = `${x}px`;
      return mark;
    }),
  );
}
function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
tlCanvas.addEventListener("pointerdown", (e) => {
  const g = tlGeometry();
  const s = xSlot(g, e.offsetX);
  tlDrag = { a: s, b: s, x: e.offsetX };
  tlCanvas.setPointerCapture(e.pointerId);
});
tlCanvas.addEventListener("pointermove", (e) => {
  if (!tlDrag) return;
  tlDrag.b = xSlot(tlGeometry(), e.offsetX);
  drawTimeline();
});
tlCanvas.addEventListener("pointerup", (e) => {
  if (!tlDrag) return;
  const d = tlDrag;
  tlDrag = null;
  if (Math.abs(e.offsetX - d.x) < 3) setRange(null);
  else setRange([Math.min(d.a, d.b), Math.max(d.a, d.b)]);
});

function setTimelineOpen(open) {
  timelineView.open = open;
  tlSection.classList.toggle("collapsed", !open);
  tlToggle.setAttribute("aria-expanded", String(open));
  try {
    localStorage.setItem("rokuprof.timeline", open ? "open" : "collapsed");
  } catch {
    /* not kept */
  }
  if (open) drawTimeline();
  dirty.add("flame"); // the flame graph's box takes the room that was freed or taken
  renderActive();
}
tlToggle.addEventListener("click", () => setTimelineOpen(!timelineView.open));

export { TL, markStrip, drawTimeline, niceStep, timelineInfo, tlGeometry };
