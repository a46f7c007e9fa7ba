// A session's app trace (the model's `trace`, trace_lanes.py) laid out for the stack chart's
// trace lanes: per lane and depth, its slices in time order as typed arrays, so that a draw
// finds the visible ones by binary search (a draw costs the slices in view, not the trace);
// the Frames lane's missed frames the same way. Pure: no DOM, unit-tested in Node
// (tests/js/tracelanes.test.mjs). Times are seconds since the run's start.

import { upperBound } from "./decode.js";

// The first index whose value is above x (reach: running maxima of the ends, so sorted).
const above = upperBound;
// The first index whose value is at least x.
function atLeast(arr, x) {
  let lo = 0, hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
// One level: the given items (indexes into start/end) in time order, with the running maximum
// of their ends (`reach`) to find the first one that may reach into a window.
function traceLevel(ids, start, end) {
  const order = ids.slice().sort((a, b) => start[a] - start[b] || a - b);
  const n = order.length;
  const s = new Float64Array(n), e = new Float64Array(n), reach = new Float64Array(n);
  let most = -Infinity;
  order.forEach((i, k) => {
    s[k] = start[i];
    e[k] = end[i];
    most = Math.max(most, end[i]);
    reach[k] = most;
  });
  return { start: s, end: e, reach, idx: Int32Array.from(order) };
}
// The lanes of a trace entry: [{ name, rows, levels: [level per depth] }], and the Frames lane's
// level (its items are the missed frames' indexes). null without a trace.
function traceLayout(T) {
  if (!T) return null;
  const { lane, start, end, depth } = T.slices;
  const lanes = T.lanes.map((l) => ({ name: l.name, rows: Math.max(1, l.rows), ids: Array.from({ length: Math.max(1, l.rows) }, () => []) }));
  for (let i = 0; i < lane.length; i++) {
    const L = lanes[lane[i]];
    if (L && depth[i] >= 0 && depth[i] < L.rows) L.ids[depth[i]].push(i);
  }
  const missed = T.frames.missed;
  return {
    lanes: lanes.map((L) => ({ name: L.name, rows: L.rows, levels: L.ids.map((ids) => traceLevel(ids, start, end)) })),
    frames: traceLevel(
      missed.map((_, i) => i),
      missed.map((m) => m[0]),
      missed.map((m) => m[1]),
    ),
  };
}
// The positions [from, to) in a level of the items that overlap the window [t0, t1].
function levelWindow(lv, t0, t1) {
  return [above(lv.reach, t0 - 1e-12), atLeast(lv.start, t1 + 1e-12)];
}
// The item of a level at time t: one that holds t (the latest starting), else the nearest one
// within `tol` seconds; -1 when none. Returns its position in the level.
function levelHit(lv, t, tol) {
  const [a, b] = levelWindow(lv, t - tol, t + tol);
  let best = -1, gap = Infinity;
  for (let k = a; k < b; k++) {
    const d = t < lv.start[k] ? lv.start[k] - t : t > lv.end[k] ? t - lv.end[k] : 0;
    if (d <= tol && d <= gap) [best, gap] = [k, d];
  }
  return best;
}
// The time span [from, to] of the slices named by `refs` (indexes into the trace's slices), or
// null when there are none.
function refsSpan(T, refs) {
  let a = Infinity, b = -Infinity;
  for (const i of refs) {
    a = Math.min(a, T.slices.start[i]);
    b = Math.max(b, T.slices.end[i]);
  }
  return refs.length ? [a, b] : null;
}
// The window that shows a span [a, b] of seconds with room around it: widened by half its length
// on each side, at least `least` long, kept within [0, total] when it fits.
function focusWindow([a, b], total, least) {
  const len = Math.max(least, (b - a) * 2);
  let from = (a + b) / 2 - len / 2;
  from = Math.min(Math.max(0, from), Math.max(0, total - len));
  return [from, Math.min(total, from + len)];
}

export { focusWindow, levelHit, levelWindow, refsSpan, traceLayout, traceLevel };
