// The figures for the state: per node and per function, self and total of every column in the
// selected range and thread, idle functions left out when hidden (compute(), run by actions.js).
import { facts } from "./data.js";
import { upperBound } from "./decode.js";
import { COLS, N, P, T, fnName, kids, lanes, memSums, memWindow, nF, nodeFn, nodeSamples, parent, pathCol, pathNode } from "./model.js";
import { state } from "./state.js";

// self[c][node]: a node's own figures in the selected range, idle functions removed when hidden.
// Memory figures in a range are exact: the buckets inside it (memWindow), not apportioned.
const self = {}, total = {}, fnSelf = {}, fnTotal = {};
// What compute() derived last from the state besides the columns above (replaced by each compute):
// the range's share per node, the functions left out as idle, the line figures' cache, the memory
// window of the range and its exact sums.
const derived = { rangeFactor: null, hiddenFn: null, lineCache: null, memW: memWindow(null), memRange: null };
function compute() {
  derived.lineCache = null;
  derived.hiddenFn = new Uint8Array(nF);
  if (state.hideIdle) for (let f = 0; f < nF; f++) if (state.waits.has(fnName[f])) derived.hiddenFn[f] = 1;
  derived.rangeFactor = null;
  derived.memW = memWindow(state.range);
  derived.memRange = state.range && facts.memoryOps ? memSums(derived.memW) : null;
  if (state.range) {
    const [a, b] = state.range;
    const inRange = new Float64Array(N);
    for (const lane of lanes) {
      const { start, node, count } = lane;
      let i = upperBound(start, a) - 1;
      if (i < 0) i = 0;
      for (; i < start.length && start[i] < b; i++) {
        const s = Math.max(a, start[i]), e = Math.min(b, start[i] + count[i]);
        if (e > s) inRange[node[i]] += e - s;
      }
    }
    derived.rangeFactor = new Float64Array(N);
    for (let n = 0; n < N; n++) derived.rangeFactor[n] = nodeSamples[n] > 0 ? inRange[n] / nodeSamples[n] : 0;
  }
  for (const c of COLS) {
    const s = new Float64Array(N);
    const exact = derived.memRange ? derived.memRange[c] : null;
    const col = exact || pathCol[c];
    for (let p = 0; p < P; p++) s[pathNode[p]] += col[p];
    for (let n = 0; n < N; n++) {
      if (derived.rangeFactor && !exact) s[n] *= derived.rangeFactor[n];
      if (nodeFn[n] >= 0 && derived.hiddenFn[nodeFn[n]]) s[n] = 0;
    }
    self[c] = s;
    const t = Float64Array.from(s);
    for (let n = N - 1; n >= 0; n--) if (parent[n] >= 0) t[parent[n]] += t[n];
    total[c] = t;
    fnSelf[c] = new Float64Array(nF);
    fnTotal[c] = new Float64Array(nF);
  }
  // Per function: self from the nodes it is the leaf of; total once per call path (recursion
  // counts once), as `inspect` does: the totals of its outermost frames.
  for (let n = 0; n < N; n++) {
    const f = nodeFn[n];
    if (f >= 0) for (const c of COLS) fnSelf[c][f] += self[c][n];
  }
  for (const n of outermostFrames()) for (const c of COLS) fnTotal[c][nodeFn[n]] += total[c][n];
}
// The frames with no frame of the same function above them (a walk with an explicit stack,
// so that a call path thousands of frames deep costs no more than a shallow one).
let outermostCache = null;
function outermostFrames() {
  if (outermostCache) return outermostCache;
  const out = [];
  const onPath = new Int32Array(nF); // frames of each function on the current path
  const stack = []; // node, or ~node to leave it
  for (let t = T - 1; t >= 0; t--) stack.push(t);
  while (stack.length) {
    const n = stack.pop();
    if (n < 0) {
      const f = nodeFn[~n];
      if (f >= 0) onPath[f]--;
      continue;
    }
    const f = nodeFn[n];
    if (f >= 0) {
      if (onPath[f] === 0) out.push(n);
      onPath[f]++;
    }
    stack.push(~n);
    const ks = kids[n];
    for (let i = ks.length - 1; i >= 0; i--) stack.push(ks[i]);
  }
  outermostCache = out;
  return out;
}
const threadRoots = () => (state.thread < 0 ? [...Array(T).keys()] : [state.thread]);
const rootValue = (c) => threadRoots().reduce((s, t) => s + total[c][t], 0);

export { compute, derived, fnSelf, fnTotal, rootValue, self, threadRoots, total };
