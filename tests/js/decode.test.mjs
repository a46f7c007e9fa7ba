// The model's decoding (assets/src/decode.js) on a small model written by hand to the contract
// (contract.js): the call tree, the timeline's lanes, the live heap, the memory buckets, a
// session's vitals.
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeModel, upperBound } from "../../rokuprof/export/report/assets/src/decode.js";

const COLS = ["cpu", "wall", "calls", "allocCount", "allocBytes", "frees", "reallocs", "freedBytes", "liveCount", "liveBytes", "callLine"];
const column = (values) => Object.fromEntries(COLS.map((c, i) => [c, values.map((v) => v[i] ?? 0)]));

function model() {
  return {
    schema: "rokuprof-report/1",
    facts: { wallPerSecond: 1e6 },
    totals: { liveBytes: 60, liveCount: 2 },
    strings: ["main", "pkg:/source/main.brs", "a", "b", "render"],
    threads: [[0, 0], [1, 4]],
    functions: { thread: [0, 0, 1], name: [2, 3, 2], file: [1, 1, 1], line: [10, 20, 0] },
    // thread roots 0 and 1; main → a → b; render → a
    nodes: { parent: [-1, -1, 0, 2, 1], fn: [-1, -1, 0, 1, 2] },
    paths: { node: [3, 4], id: [7, 8], ...column([[5, 50, 1, 2, 100], [3, 30, 2, 1, 8]]) },
    sites: [],
    lines: [],
    allocLines: [],
    timeline: {
      hz: 100,
      slots: 50,
      // (gap, node, count): main runs b at 2..6 and a at 7..12; render runs a at 0..10
      lanes: [[0, [2, 3, 4, 1, 2, 5]], [1, [0, 4, 10]]],
      heap: [5, 100, 10, -40], // +100 bytes at slot 5, -40 at slot 15
      memory: {
        // bucket at slot 5: path 0 allocates 2 blocks, 100 bytes; at slot 15: path 0 frees 40
        // bytes, path 1 allocates 8
        flat: [5, 1, 0, 2, 100, 0, 0, 0, 10, 2, 0, 0, 0, 1, 0, 40, 1, 1, 8, 0, 0, 0],
        buckets: 2,
        merged: 0,
        unplaced: [0, 0],
      },
    },
    session: { marks: [[0.5, "start"]], cpu: [0, 10, 1, 30], mem: [], readings: 2, notes: [] },
  };
}

test("the call tree: depth, children and thread of every node", () => {
  const m = decodeModel(model());
  assert.equal(m.T, 2);
  assert.deepEqual(m.threadName, ["main", "render"]);
  assert.deepEqual(m.fnName, ["a", "b", "a"]);
  assert.deepEqual([...m.depth], [0, 0, 1, 2, 1]);
  assert.deepEqual([...m.nodeThread], [0, 1, 0, 0, 1]);
  assert.deepEqual(m.kids, [[2], [4], [3], [], []]);
  assert.deepEqual([...m.pathCol.wall], [50, 30]);
});

test("the timeline's lanes: runs from (gap, node, count) triples, samples per node", () => {
  const m = decodeModel(model());
  assert.equal(m.SLOTS, 50);
  assert.deepEqual(m.lanes.map((l) => [l.t, [...l.start], [...l.node], [...l.count]]), [
    [0, [2, 7], [3, 2], [4, 5]],
    [1, [0], [4], [10]],
  ]);
  assert.deepEqual([...m.nodeSamples], [0, 0, 5, 4, 10]);
});

test("the live heap: cumulative steps, its value at any slot, its peak", () => {
  const m = decodeModel(model());
  assert.deepEqual(m.heap, [[5, 100], [15, 60]]);
  assert.deepEqual([0, 4, 5, 14, 15, 49].map(m.heapAt), [0, 0, 100, 100, 60, 60]);
  assert.equal(m.heapPeak, 100);
  assert.equal(m.heapEnd, 60);
});

test("memory buckets: a range's figures are the buckets inside it, exact", () => {
  const m = decodeModel(model());
  assert.deepEqual([...m.memSlot], [5, 15]);
  assert.deepEqual([...m.memStart], [0, 1, 3]);
  assert.deepEqual(m.memWindow(null), { first: 0, end: 2, from: 0, to: 50, whole: true });
  const later = m.memWindow([5, 15]);
  assert.deepEqual(later, { first: 1, end: 2, from: 5, to: 15, whole: false });
  const sums = m.memSums(later);
  assert.deepEqual([...sums.freedBytes], [40, 0]);
  assert.deepEqual([...sums.allocBytes], [0, 8]);
  const all = m.memSums(m.memWindow(null));
  assert.deepEqual([...all.allocBytes], [100, 8]);
  assert.deepEqual([...all.allocCount], [2, 1]);
  assert.deepEqual(m.memWindow([20, 40]), { first: 2, end: 2, from: 15, to: 15, whole: false });
});

test("a session's marks and vitals; a series without points is left out", () => {
  const m = decodeModel(model());
  assert.deepEqual(m.marks, [[0.5, "start"]]);
  assert.deepEqual(m.VITALS.map((v) => [v.key, v.points, v.peak]), [["cpu", [[0, 10], [1, 30]], 30]]);
  const plain = model();
  delete plain.session;
  assert.deepEqual(decodeModel(plain).VITALS, []);
  assert.equal(decodeModel(plain).SESSION, null);
});

test("upperBound: the first index past x", () => {
  const a = Int32Array.from([1, 3, 3, 7]);
  assert.deepEqual([0, 1, 2, 3, 6, 7, 9].map((x) => upperBound(a, x)), [0, 1, 1, 3, 3, 4, 4]);
});
