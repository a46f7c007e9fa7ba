// The app trace's lane layout (assets/src/tracelanes.js) on a small trace entry written by hand
// to the contract (contract.js ReportTrace): levels per lane and depth in time order, the
// visible window by binary search, hits within a tolerance, a finding's span and window.
import assert from "node:assert/strict";
import { test } from "node:test";
import { focusWindow, levelHit, levelWindow, refsSpan, traceLayout, traceLevel } from "../../rokuprof/export/report/assets/src/tracelanes.js";

function entry() {
  return {
    lanes: [
      { name: "RenderThr:Main", tid: 100, rows: 1, slices: 3 },
      { name: "BrightScript", tid: 102, rows: 2, slices: 3 },
    ],
    // given out of time order, as the model's lane-then-time order would not be per depth
    slices: {
      lane: [0, 0, 0, 1, 1, 1, 1],
      start: [0.5, 0.0, 0.2, 1.0, 1.1, 1.5, 0.9],
      end: [0.6, 0.1, 0.3, 1.4, 1.2, 1.6, 0.95],
      depth: [0, 0, 0, 0, 1, 0, 5],
      name: [0, 0, 0, 1, 2, 1, 1],
      fn: [-1, -1, -1, 3, -1, -1, -1],
    },
    frames: { figures: {}, causes: ["late to render", "slow render", "slow swap"], missed: [[0.1, 0.2, 1], [0.3, 0.34, 0]] },
  };
}

test("lanes hold their slices per depth in time order; deeper than the lane's rows left out", () => {
  const L = traceLayout(entry());
  assert.equal(L.lanes.length, 2);
  assert.deepEqual(Array.from(L.lanes[0].levels[0].idx), [1, 2, 0]);
  assert.deepEqual(Array.from(L.lanes[1].levels[0].idx), [3, 5]);
  assert.deepEqual(Array.from(L.lanes[1].levels[1].idx), [4]);
  assert.equal(L.lanes[1].levels.length, 2); // slice 6 at depth 5: not drawn
  assert.deepEqual(Array.from(L.frames.idx), [0, 1]);
  assert.deepEqual(Array.from(L.frames.start), [0.1, 0.3]);
  assert.equal(traceLayout(null), null);
});

test("the window finds the slices that overlap it, a long one starting before it too", () => {
  const lv = traceLevel([0, 1, 2, 3], [0, 1, 2, 3], [10, 1.5, 2.5, 3.5]);
  assert.deepEqual(Array.from(lv.reach), [10, 10, 10, 10]);
  assert.deepEqual(levelWindow(lv, 2.2, 2.4), [0, 3]); // slice 0 reaches over it
  const short = traceLevel([0, 1, 2], [0, 1, 2], [0.5, 1.5, 2.5]);
  assert.deepEqual(levelWindow(short, 1.2, 1.4), [1, 2]);
  assert.deepEqual(levelWindow(short, 3, 4), [3, 3]);
  assert.deepEqual(levelWindow(short, -2, -1), [0, 0]);
});

test("a hit is the slice holding the time, else the nearest within the tolerance", () => {
  const lv = traceLevel([0, 1], [0, 1], [0.5, 1.5]);
  assert.equal(levelHit(lv, 0.25, 0), 0);
  assert.equal(levelHit(lv, 1.2, 0), 1);
  assert.equal(levelHit(lv, 0.75, 0.1), -1);
  assert.equal(levelHit(lv, 0.55, 0.1), 0);
  assert.equal(levelHit(lv, 0.95, 0.1), 1);
});

test("a finding's span and the window that shows it with room around it", () => {
  const T = entry();
  assert.deepEqual(refsSpan(T, [3, 5]), [1.0, 1.6]);
  assert.equal(refsSpan(T, []), null);
  const [a, b] = focusWindow([1.0, 1.6], 6, 0.02);
  assert.ok(a < 1.0 && b > 1.6 && Math.abs(b - a - 1.2) < 1e-9);
  assert.deepEqual(focusWindow([0, 0.001], 6, 0.02), [0, 0.02]); // at least `least`, from 0
  const [c, d] = focusWindow([5.9, 6], 6, 0.02);
  assert.ok(d <= 6 && Math.abs(d - c - 0.2) < 1e-9); // kept within the run
});
