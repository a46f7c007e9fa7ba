// The model's decoding: the page's data (the contract, see contract.js) as typed arrays and the
// figures every view reads. A pure function of the data: no DOM, so that it is unit-tested in Node.
// The first index whose value is above x in a sorted array (binary search).

function upperBound(arr, x) {
  let lo = 0, hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The model as the page uses it, decoded from the report's data.
 * @param {import("./contract.js").ReportModel} D
 */
function decodeModel(D) {
  const S = D.strings;
  const T = D.threads.length;
  const threadName = D.threads.map((t) => S[t[1]]);
  const FN = D.functions;
  const nF = FN.name.length;
  const fnName = FN.name.map((i) => S[i]);
  const fnFile = FN.file.map((i) => S[i]);
  const fnThread = Int32Array.from(FN.thread);
  const fnLine = FN.line;
  const N = D.nodes.parent.length;
  const parent = Int32Array.from(D.nodes.parent);
  const nodeFn = Int32Array.from(D.nodes.fn);
  const depth = new Int32Array(N);
  const nodeThread = new Int32Array(N);
  const kids = Array.from({ length: N }, () => []);
  for (let i = 0; i < N; i++) {
    const p = parent[i];
    if (p >= 0) {
      depth[i] = depth[p] + 1;
      nodeThread[i] = nodeThread[p];
      kids[p].push(i);
    } else {
      nodeThread[i] = i;
    }
  }
  const P = D.paths.node.length;
  const pathNode = Int32Array.from(D.paths.node);
  const COLS = ["cpu", "wall", "calls", "allocCount", "allocBytes", "frees", "reallocs", "freedBytes", "liveCount", "liveBytes"];
  const pathCol = {};
  for (const c of COLS) pathCol[c] = Float64Array.from(D.paths[c]);
  const callLine = D.paths.callLine;

  // Timeline lanes: per thread, runs (start slot, node, samples).
  const lanes = [];
  const nodeSamples = new Float64Array(N);
  for (const [t, flat] of D.timeline.lanes) {
    const k = flat.length / 3;
    const start = new Int32Array(k), node = new Int32Array(k), count = new Int32Array(k);
    let end = 0;
    for (let i = 0; i < k; i++) {
      start[i] = end + flat[3 * i];
      node[i] = flat[3 * i + 1];
      count[i] = flat[3 * i + 2];
      end = start[i] + count[i];
      nodeSamples[node[i]] += count[i];
    }
    lanes.push({ t, start, node, count });
  }
  const SLOTS = Math.max(1, D.timeline.slots);
  const heap = [];
  {
    let s = 0, b = 0;
    const h = D.timeline.heap;
    for (let i = 0; i < h.length; i += 2) {
      s += h[i];
      b += h[i + 1];
      heap.push([s, b]);
    }
  }
  // Memory operations by when they arrived (the model's timeline.memory): bucket i at slot
  // memSlot[i] holds what arrived after the previous bucket's slot and up to its own (the live
  // heap's step there), as rows memStart[i]..memStart[i+1] of (path, MEM_COLS). The stream has
  // no time for a memory operation: a range's memory figures are the buckets inside it, exact.
  const MEM_COLS = ["allocCount", "allocBytes", "frees", "reallocs", "freedBytes"];
  const MEM = D.timeline.memory || { flat: [], buckets: 0, merged: 0 };
  const memSlot = new Int32Array(MEM.buckets), memStart = new Int32Array(MEM.buckets + 1);
  const memRows = (() => {
    const f = MEM.flat;
    let rows = 0;
    for (let i = 0; i < f.length; i += 2 + 6 * f[i + 1]) rows += f[i + 1];
    return rows;
  })();
  const memPath = new Int32Array(memRows);
  const memCol = Object.fromEntries(MEM_COLS.map((c) => [c, new Float64Array(memRows)]));
  {
    const f = MEM.flat;
    let i = 0, slot = 0, r = 0;
    for (let b = 0; b < MEM.buckets; b++) {
      slot += f[i];
      const k = f[i + 1];
      i += 2;
      memSlot[b] = slot;
      memStart[b] = r;
      let p = 0;
      for (let j = 0; j < k; j++, r++, i += 6) {
        p += f[i];
        memPath[r] = p;
        for (let c = 0; c < 5; c++) memCol[MEM_COLS[c]][r] = f[i + 1 + c];
      }
    }
    memStart[MEM.buckets] = r;
  }
  // The buckets of the slots (a, b]: [first, end) and the times they cover (from, to].
  function memWindow(range) {
    if (!range) return { first: 0, end: MEM.buckets, from: 0, to: SLOTS, whole: true };
    const [a, b] = range;
    const first = upperBound(memSlot, a), end = upperBound(memSlot, b);
    const from = first > 0 ? memSlot[first - 1] : 0;
    return { first, end, from, to: end > first ? memSlot[end - 1] : from, whole: false };
  }
  // Per path, the memory columns summed over a window's buckets.
  function memSums(w) {
    const out = Object.fromEntries(MEM_COLS.map((c) => [c, new Float64Array(P)]));
    for (let r = memStart[w.first]; r < memStart[w.end]; r++) for (const c of MEM_COLS) out[c][memPath[r]] += memCol[c][r];
    return out;
  }
  // The live heap at a slot: its last value at or before it (0 before the first).
  function heapAt(slot) {
    let lo = 0, hi = heap.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (heap[mid][0] <= slot) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? heap[lo - 1][1] : 0;
  }
  // The live heap: its peak (the highest point of the timeline's live-heap line, or the end if
  // higher) and what was still live at the end (the profile tables' figure).
  const heapEnd = D.totals.liveBytes;
  const heapPeak = heap.reduce((m, [, b]) => Math.max(m, b), heapEnd);
  // A session's marks and device vitals (the model's "session"; none for a plain capture):
  // marks as [seconds since the run start, label], each series as [seconds, value] points.
  const SESSION = D.session || null;
  const pairs = (flat) => {
    const out = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
    return out;
  };
  const marks = SESSION ? SESSION.marks : [];
  const VITALS = SESSION
    ? [
        { key: "cpu", label: "app CPU", points: pairs(SESSION.cpu), colour: "#c25e00" },
        { key: "mem", label: "app memory", points: pairs(SESSION.mem), colour: "#1f8a4c" },
      ].filter((v) => v.points.length)
    : [];
  for (const v of VITALS) v.peak = v.points.reduce((m, [, x]) => Math.max(m, x), 0);
  return {
    T,
    threadName,
    FN,
    nF,
    fnName,
    fnFile,
    fnThread,
    fnLine,
    N,
    parent,
    nodeFn,
    depth,
    nodeThread,
    kids,
    P,
    pathNode,
    COLS,
    pathCol,
    callLine,
    lanes,
    nodeSamples,
    SLOTS,
    heap,
    MEM_COLS,
    MEM,
    memSlot,
    memStart,
    memRows,
    memPath,
    memCol,
    memWindow,
    memSums,
    heapAt,
    heapEnd,
    heapPeak,
    SESSION,
    marks,
    VITALS,
  };
}

export { decodeModel, upperBound };
