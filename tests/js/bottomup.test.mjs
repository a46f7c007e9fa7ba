// The Bottom-up tab's index and sums (assets/src/bottomupindex.js) on a small recursive tree:
// main → a → b → a, and main → b.
import assert from "node:assert/strict";
import { test } from "node:test";
import { calleesOf, chainCallers, framesFigures, treeIndex } from "../../rokuprof/export/report/assets/src/bottomupindex.js";

const A = 0, B = 1;
const tree = {
  N: 5,
  T: 1,
  nF: 2,
  parent: Int32Array.from([-1, 0, 1, 2, 0]),
  nodeFn: Int32Array.from([-1, A, B, A, B]),
  kids: [[1, 4], [2], [3], [], []],
};
const self = Float64Array.from([0, 1, 2, 4, 8]);
const total = Float64Array.from([15, 7, 6, 4, 8]); // each node's self plus its subtree's

test("the index: pre-order, where each subtree ends, each function's frames in pre-order", () => {
  const index = treeIndex(tree);
  assert.deepEqual([...index.pre], [0, 1, 2, 3, 4]);
  assert.deepEqual([...index.end], [5, 4, 4, 4, 5]);
  assert.deepEqual([...index.fnStart], [0, 2, 4]);
  assert.deepEqual([...index.fnNodes], [1, 3, 2, 4]);
});

test("a function's figures: every frame's self, a recursive frame's total counted once", () => {
  const index = treeIndex(tree);
  const frames = (f) => index.fnNodes.subarray(index.fnStart[f], index.fnStart[f + 1]);
  assert.deepEqual(framesFigures(frames(A), self, total, index), [5, 7]); // a inside a: not again
  assert.deepEqual(framesFigures(frames(B), self, total, index), [10, 14]);
});

test("callers one level up (the thread itself is not a caller), and callees one level down", () => {
  const index = treeIndex(tree);
  const frames = index.fnNodes.subarray(index.fnStart[A], index.fnStart[A + 1]);
  const root = { key: String(A), fn: A, depth: 0, frames, tips: frames, callers: null };
  const up = chainCallers(root, tree);
  assert.deepEqual(up.map((c) => [c.key, c.fn, c.depth, [...c.frames], [...c.tips]]), [["0,1", B, 1, [3], [2]]]);
  assert.deepEqual(chainCallers(up[0], tree).map((c) => [c.key, [...c.frames], [...c.tips]]), [["0,1,0", [3], [1]]]);
  assert.deepEqual(calleesOf(A, tree, index).map((c) => [c.fn, [...c.frames]]), [[B, [2]]]);
  assert.deepEqual(calleesOf(B, tree, index).map((c) => [c.fn, [...c.frames]]), [[A, [3]]]);
});

test("a deep chain costs no recursion: 200,000 frames", () => {
  const n = 200_000;
  const deep = { N: n, T: 1, nF: 1, parent: Int32Array.from({ length: n }, (_, i) => i - 1), nodeFn: Int32Array.from({ length: n }, (_, i) => (i ? 0 : -1)), kids: Array.from({ length: n }, (_, i) => (i + 1 < n ? [i + 1] : [])) };
  const index = treeIndex(deep);
  assert.equal(index.end[0], n);
  assert.equal(index.fnStart[1], n - 1);
});
