// rokuprof report: the page's script (plain JavaScript, no library).
//
// GENERATED from rokuprof/export/report/assets/src/ (ES modules, entry main.js) by esbuild; do not
// edit by hand. Rebuild with `npm run build:report` (tests/test_report_bundle.py checks it is current).
"use strict";
(() => {
  // rokuprof/export/report/assets/src/data.js
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var S = D.strings;
  var facts = D.facts;
  var WPS = facts.wallPerSecond || 1e6;
  var HZ = D.timeline.hz;
  var DF = D.diff || null;
  var SAME_PCT = DF ? DF.sameWithinPct : 2;
  var PER_SECOND = DF ? DF.perSecond : false;

  // rokuprof/export/report/assets/src/format.js
  var nf0 = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  var grouped = (v) => nf0.format(Math.round(v));
  function fixed(v, digits) {
    return v.toFixed(Math.max(0, digits));
  }
  function sig(v) {
    const a = Math.abs(v);
    return a >= 100 ? fixed(v, 0) : a >= 10 ? fixed(v, 1) : fixed(v, 2);
  }
  function fmtSeconds(s) {
    const a = Math.abs(s);
    if (a === 0) return "0 s";
    if (a >= 60) return `${grouped(s)} s`;
    if (a >= 1) return `${sig(s)} s`;
    if (a >= 1e-3) return `${sig(s * 1e3)} ms`;
    return `${sig(s * 1e6)} µs`;
  }
  function fmtBytes(v) {
    const a = Math.abs(v);
    if (a < 1024) return `${grouped(v)} B`;
    if (a < 1024 ** 2) return `${sig(v / 1024)} KiB`;
    if (a < 1024 ** 3) return `${sig(v / 1024 ** 2)} MiB`;
    return `${sig(v / 1024 ** 3)} GiB`;
  }
  function fmtOps(v) {
    const a = Math.abs(v);
    if (a < 1e4) return grouped(v);
    if (a < 1e6) return `${sig(v / 1e3)} k`;
    if (a < 1e9) return `${sig(v / 1e6)} M`;
    return `${sig(v / 1e9)} G`;
  }
  var CPU_TITLE = "CPU in operations, as the device counts them (device-independent; not a time)";
  var fmtCpu = (v) => `${fmtOps(v)} ops`;
  var fmtCount = (v) => grouped(v);
  var pct = (v, total2) => total2 > 0 ? `${(100 * v / total2).toFixed(1)}%` : "–";
  function fmtClock(epoch) {
    if (epoch == null) return "unknown";
    return new Date(epoch * 1e3).toISOString().replace("T", " ").replace(/\.(\d{3})Z$/, ".$1 UTC");
  }
  var NO_MEMORY = "no memory data: the app was built without bsprof_enable_mem=1";
  var STATUS_TEXT = { complete: "complete", incomplete: "incomplete — truncated", corrupt: "corrupt — decoding stopped" };
  function shortPath(path, room) {
    if (path.length <= room) return path;
    let last = -1;
    for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
      if (path.length - i + 1 <= room) return `…${path.slice(i)}`;
      last = i;
    }
    return last >= 0 ? `…${path.slice(last)}` : path;
  }

  // rokuprof/export/report/assets/src/colours.js
  var PALETTE = [
    [214, 62, 70],
    [28, 80, 66],
    [145, 45, 62],
    [350, 60, 74],
    [265, 45, 74],
    [45, 78, 62],
    [188, 55, 60],
    [12, 62, 70],
    [95, 40, 62],
    [320, 40, 74],
    [230, 35, 72],
    [60, 50, 58]
  ];
  function hsl(h, s, l) {
    return `hsl(${h} ${s}% ${l}%)`;
  }
  function hashString(text2) {
    let h = 2166136261;
    for (let i = 0; i < text2.length; i++) h = Math.imul(h ^ text2.charCodeAt(i), 16777619);
    return h >>> 0;
  }
  function mix(h) {
    h ^= h >>> 16;
    h = Math.imul(h, 2246822507);
    h ^= h >>> 13;
    h = Math.imul(h, 3266489909);
    h ^= h >>> 16;
    return h >>> 0;
  }
  function fileColour(file, name, dim) {
    const k = mix(hashString(file));
    const h = k % 360;
    if (dim) return hsl(h, 10, 90);
    const s = 52 + (k >>> 9) % 3 * 8, l = 68 + (k >>> 11) % 3 * 4;
    const shade = hashString(name) % 7 - 3;
    return hsl(h, s, l + shade);
  }
  function threadColours(names) {
    const threadSlot = /* @__PURE__ */ new Map();
    const taken = /* @__PURE__ */ new Set();
    for (const name of [...new Set(names)].sort()) {
      let k = mix(hashString(name)) % PALETTE.length;
      for (let i = 0; i < PALETTE.length && taken.has(k); i++) k = (k + 1) % PALETTE.length;
      taken.add(k);
      threadSlot.set(name, k);
    }
    return (name) => {
      const [h, s, l] = PALETTE[threadSlot.get(name) ?? mix(hashString(name)) % PALETTE.length];
      return hsl(h, s, l - 12);
    };
  }

  // rokuprof/export/report/assets/src/units.js
  var fmtWall = (v) => fmtSeconds(v / WPS);
  var METRICS = [
    { key: "wall", label: "Wall time", fmt: fmtWall, unit: "time" },
    { key: "cpu", label: "CPU", fmt: fmtCpu, unit: "operations" },
    { key: "calls", label: "Calls", fmt: fmtCount, unit: "calls" },
    { key: "allocBytes", label: "Alloc bytes", fmt: fmtBytes, unit: "bytes", memory: true },
    { key: "liveBytes", label: "Live bytes at end", fmt: fmtBytes, unit: "bytes", memory: true }
  ];
  var METRIC = Object.fromEntries(METRICS.map((m) => [m.key, m]));
  var vitalText = (v, x) => v.key === "cpu" ? `${fixed(x, 0)} %` : fmtBytes(x);

  // rokuprof/export/report/assets/src/diffrows.js
  function changeKindWithin(q, samePct) {
    const [a, b, , p] = q;
    if (!a) return b ? "new" : "same";
    if (!b) return "gone";
    if (p === null || Math.abs(p) < samePct) return "same";
    return p > 0 ? "grew" : "shrank";
  }
  var KIND_COLOUR = { new: "hsl(280 62% 52%)", gone: "hsl(168 60% 34%)", same: "#e5e7eb" };
  var SCALE_FULL = 2;
  function ratioColour(ratio) {
    const t = Math.min(1, Math.abs(Math.log2(ratio)) / SCALE_FULL);
    return ratio > 1 ? hsl(0, 45 + 40 * t, 86 - 30 * t) : hsl(215, 45 + 40 * t, 86 - 30 * t);
  }
  function changeColourWithin(q, samePct) {
    const k = changeKindWithin(q, samePct);
    if (k === "grew" || k === "shrank") return ratioColour(Math.max(1e-9, 1 + q[3] / 100));
    return KIND_COLOUR[k];
  }
  var signed = (v, f) => v > 0 ? `+${f(v)}` : v < 0 ? `−${f(-v)}` : f(0);
  function fmtPctWithin(q, samePct) {
    const k = changeKindWithin(q, samePct);
    if (k === "new") return q[0] === null ? "new" : "from 0";
    if (k === "gone" && q[1] === null) return "gone";
    return q[3] === null ? "–" : `${q[3] > 0 ? "+" : q[3] < 0 ? "−" : "±"}${Math.abs(q[3]).toFixed(1)}%`;
  }
  var DIFF_FIGURES = [
    ["self_wall", "Self wall", "wall"],
    ["total_wall", "Total wall", "wall"],
    ["self_cpu", "Self CPU", "cpu"],
    ["total_cpu", "Total CPU", "cpu"],
    ["calls", "Calls", "calls"],
    ["self_alloc_bytes", "Self alloc bytes", "bytes"],
    ["total_alloc_bytes", "Total alloc bytes", "bytes"],
    ["self_live_bytes", "Self live at end", "bytes"],
    ["total_live_bytes", "Total live at end", "bytes"]
  ];
  function topRow(diff, strings, [i, figure, line], fmt, samePct) {
    const r = diff.functions[i];
    const [, label, kind] = DIFF_FIGURES.find(([k]) => k === figure);
    const q = r[4][diff.metrics.indexOf(figure)];
    const f = fmt[kind];
    const file = strings[r[2]];
    return {
      function: strings[r[1]],
      module: strings[r[0]],
      file,
      where: `${file.slice(file.lastIndexOf("/") + 1)}${line ? `:${line}` : ""}`,
      label,
      a: q[0] === null ? "–" : f(q[0]),
      b: q[1] === null ? "–" : f(q[1]),
      delta: signed(q[2], f),
      pct: fmtPctWithin(q, samePct),
      kind: changeKindWithin(q, samePct),
      colour: changeColourWithin(q, samePct)
    };
  }

  // rokuprof/export/report/assets/src/bottomupindex.js
  function treeIndex({ N: N2, T: T2, kids: kids2, nodeFn: nodeFn2, nF: nF2 }) {
    const pre = new Int32Array(N2), end = new Int32Array(N2), order = new Int32Array(N2);
    let i = 0;
    const stack = [];
    for (let t = T2 - 1; t >= 0; t--) stack.push(t);
    while (stack.length) {
      const n = stack.pop();
      if (n < 0) {
        end[~n] = i;
        continue;
      }
      order[i] = n;
      pre[n] = i++;
      stack.push(~n);
      const ks = kids2[n];
      for (let k = ks.length - 1; k >= 0; k--) stack.push(ks[k]);
    }
    const fnStart = new Int32Array(nF2 + 1);
    for (let n = 0; n < N2; n++) if (nodeFn2[n] >= 0) fnStart[nodeFn2[n] + 1]++;
    for (let f = 0; f < nF2; f++) fnStart[f + 1] += fnStart[f];
    const fill = fnStart.slice(0, nF2);
    const fnNodes = new Int32Array(fnStart[nF2]);
    for (let j = 0; j < i; j++) {
      const f = nodeFn2[order[j]];
      if (f >= 0) fnNodes[fill[f]++] = order[j];
    }
    return { pre, end, fnStart, fnNodes };
  }
  function chainCallers(c, { parent: parent2, nodeFn: nodeFn2 }) {
    const groups = /* @__PURE__ */ new Map();
    for (let i = 0; i < c.frames.length; i++) {
      const up = parent2[c.tips[i]];
      const g = up >= 0 ? nodeFn2[up] : -1;
      if (g < 0) continue;
      let x = groups.get(g);
      if (!x) groups.set(g, x = { frames: [], tips: [] });
      x.frames.push(c.frames[i]);
      x.tips.push(up);
    }
    return [...groups].map(([g, x]) => ({ key: `${c.key},${g}`, fn: g, depth: c.depth + 1, frames: Int32Array.from(x.frames), tips: Int32Array.from(x.tips), callers: null }));
  }
  function calleesOf(f, { kids: kids2, nodeFn: nodeFn2 }, index) {
    const groups = /* @__PURE__ */ new Map();
    for (let i = index.fnStart[f]; i < index.fnStart[f + 1]; i++) {
      for (const k of kids2[index.fnNodes[i]]) {
        let x = groups.get(nodeFn2[k]);
        if (!x) groups.set(nodeFn2[k], x = []);
        x.push(k);
      }
    }
    return [...groups].map(([h, ks]) => ({ fn: h, frames: Int32Array.from(ks).sort((a, b) => index.pre[a] - index.pre[b]) }));
  }
  function framesFigures(frames, s, t, { pre, end }) {
    let selfSum = 0, totalSum = 0, endAt = -1;
    for (let i = 0; i < frames.length; i++) {
      const n = frames[i];
      selfSum += s[n];
      if (pre[n] < endAt) continue;
      totalSum += t[n];
      endAt = end[n];
    }
    return [selfSum, totalSum];
  }

  // rokuprof/export/report/assets/src/decode.js
  function upperBound(arr, x) {
    let lo = 0, hi = arr.length;
    while (lo < hi) {
      const mid = lo + hi >> 1;
      if (arr[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  function decodeModel(D2) {
    const S2 = D2.strings;
    const T2 = D2.threads.length;
    const threadName2 = D2.threads.map((t) => S2[t[1]]);
    const FN = D2.functions;
    const nF2 = FN.name.length;
    const fnName2 = FN.name.map((i) => S2[i]);
    const fnFile2 = FN.file.map((i) => S2[i]);
    const fnThread2 = Int32Array.from(FN.thread);
    const fnLine2 = FN.line;
    const N2 = D2.nodes.parent.length;
    const parent2 = Int32Array.from(D2.nodes.parent);
    const nodeFn2 = Int32Array.from(D2.nodes.fn);
    const depth2 = new Int32Array(N2);
    const nodeThread2 = new Int32Array(N2);
    const kids2 = Array.from({ length: N2 }, () => []);
    for (let i = 0; i < N2; i++) {
      const p = parent2[i];
      if (p >= 0) {
        depth2[i] = depth2[p] + 1;
        nodeThread2[i] = nodeThread2[p];
        kids2[p].push(i);
      } else {
        nodeThread2[i] = i;
      }
    }
    const P2 = D2.paths.node.length;
    const pathNode2 = Int32Array.from(D2.paths.node);
    const COLS2 = ["cpu", "wall", "calls", "allocCount", "allocBytes", "frees", "reallocs", "freedBytes", "liveCount", "liveBytes"];
    const pathCol2 = {};
    for (const c of COLS2) pathCol2[c] = Float64Array.from(D2.paths[c]);
    const callLine = D2.paths.callLine;
    const lanes2 = [];
    const nodeSamples2 = new Float64Array(N2);
    for (const [t, flat] of D2.timeline.lanes) {
      const k = flat.length / 3;
      const start = new Int32Array(k), node = new Int32Array(k), count = new Int32Array(k);
      let end = 0;
      for (let i = 0; i < k; i++) {
        start[i] = end + flat[3 * i];
        node[i] = flat[3 * i + 1];
        count[i] = flat[3 * i + 2];
        end = start[i] + count[i];
        nodeSamples2[node[i]] += count[i];
      }
      lanes2.push({ t, start, node, count });
    }
    const SLOTS2 = Math.max(1, D2.timeline.slots);
    const heap2 = [];
    {
      let s = 0, b = 0;
      const h = D2.timeline.heap;
      for (let i = 0; i < h.length; i += 2) {
        s += h[i];
        b += h[i + 1];
        heap2.push([s, b]);
      }
    }
    const MEM_COLS = ["allocCount", "allocBytes", "frees", "reallocs", "freedBytes"];
    const MEM2 = D2.timeline.memory || { flat: [], buckets: 0, merged: 0 };
    const memSlot = new Int32Array(MEM2.buckets), memStart = new Int32Array(MEM2.buckets + 1);
    const memRows = (() => {
      const f = MEM2.flat;
      let rows = 0;
      for (let i = 0; i < f.length; i += 2 + 6 * f[i + 1]) rows += f[i + 1];
      return rows;
    })();
    const memPath = new Int32Array(memRows);
    const memCol = Object.fromEntries(MEM_COLS.map((c) => [c, new Float64Array(memRows)]));
    {
      const f = MEM2.flat;
      let i = 0, slot = 0, r = 0;
      for (let b = 0; b < MEM2.buckets; b++) {
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
      memStart[MEM2.buckets] = r;
    }
    function memWindow2(range) {
      if (!range) return { first: 0, end: MEM2.buckets, from: 0, to: SLOTS2, whole: true };
      const [a, b] = range;
      const first = upperBound(memSlot, a), end = upperBound(memSlot, b);
      const from = first > 0 ? memSlot[first - 1] : 0;
      return { first, end, from, to: end > first ? memSlot[end - 1] : from, whole: false };
    }
    function memSums2(w) {
      const out = Object.fromEntries(MEM_COLS.map((c) => [c, new Float64Array(P2)]));
      for (let r = memStart[w.first]; r < memStart[w.end]; r++) for (const c of MEM_COLS) out[c][memPath[r]] += memCol[c][r];
      return out;
    }
    function heapAt2(slot) {
      let lo = 0, hi = heap2.length;
      while (lo < hi) {
        const mid = lo + hi >> 1;
        if (heap2[mid][0] <= slot) lo = mid + 1;
        else hi = mid;
      }
      return lo > 0 ? heap2[lo - 1][1] : 0;
    }
    const heapEnd2 = D2.totals.liveBytes;
    const heapPeak2 = heap2.reduce((m, [, b]) => Math.max(m, b), heapEnd2);
    const SESSION2 = D2.session || null;
    const pairs = (flat) => {
      const out = [];
      for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
      return out;
    };
    const marks2 = SESSION2 ? SESSION2.marks : [];
    const VITALS2 = SESSION2 ? [
      { key: "cpu", label: "app CPU", points: pairs(SESSION2.cpu), colour: "#c25e00" },
      { key: "mem", label: "app memory", points: pairs(SESSION2.mem), colour: "#1f8a4c" }
    ].filter((v) => v.points.length) : [];
    for (const v of VITALS2) v.peak = v.points.reduce((m, [, x]) => Math.max(m, x), 0);
    return {
      T: T2,
      threadName: threadName2,
      FN,
      nF: nF2,
      fnName: fnName2,
      fnFile: fnFile2,
      fnThread: fnThread2,
      fnLine: fnLine2,
      N: N2,
      parent: parent2,
      nodeFn: nodeFn2,
      depth: depth2,
      nodeThread: nodeThread2,
      kids: kids2,
      P: P2,
      pathNode: pathNode2,
      COLS: COLS2,
      pathCol: pathCol2,
      callLine,
      lanes: lanes2,
      nodeSamples: nodeSamples2,
      SLOTS: SLOTS2,
      heap: heap2,
      MEM_COLS,
      MEM: MEM2,
      memSlot,
      memStart,
      memRows,
      memPath,
      memCol,
      memWindow: memWindow2,
      memSums: memSums2,
      heapAt: heapAt2,
      heapEnd: heapEnd2,
      heapPeak: heapPeak2,
      SESSION: SESSION2,
      marks: marks2,
      VITALS: VITALS2
    };
  }

  // rokuprof/export/report/assets/src/model.js
  var {
    T,
    threadName,
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
    lanes,
    nodeSamples,
    SLOTS,
    heap,
    MEM,
    memWindow,
    memSums,
    heapAt,
    heapEnd,
    heapPeak,
    SESSION,
    marks,
    VITALS
  } = decodeModel(D);

  // rokuprof/export/report/assets/src/pagecolours.js
  var threadColour = threadColours(D.threads.map(([, s]) => D.strings[s]));
  var fileOrder = /* @__PURE__ */ new Map();
  {
    const wallByFile = /* @__PURE__ */ new Map();
    for (let p = 0; p < P; p++) {
      const f = fnFile[nodeFn[pathNode[p]]];
      wallByFile.set(f, (wallByFile.get(f) || 0) + pathCol.wall[p] + 1e-9 * pathCol.allocBytes[p]);
    }
    for (let f = 0; f < nF; f++) if (!wallByFile.has(fnFile[f])) wallByFile.set(fnFile[f], 0);
    [...wallByFile.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).forEach(([f], i) => fileOrder.set(f, i));
  }

  // rokuprof/export/report/assets/src/state.js
  var SUGGESTED_WAITS = ["wait", "waitPort", "sleep"];
  var state = {
    tab: "flame",
    thread: -1,
    // -1: all threads
    metric: "wall",
    icicle: false,
    zoom: -1,
    // node, -1: the root of the current thread selection
    search: "",
    range: null,
    // [first slot, end slot) or null
    hideIdle: true,
    // idle frames are left out until the reader shows them (a kept choice wins)
    waits: new Set(SUGGESTED_WAITS.filter((w) => fnName.includes(w))),
    sort: {
      tree: { key: "total:wall", dir: -1 },
      functions: { key: "selfWall", dir: -1 },
      allocs: { key: "allocBytes", dir: -1 },
      churn: { key: "reallocs", dir: -1 },
      leaks: { key: "liveBytes", dir: -1 },
      diffFunctions: { key: "rank", dir: 1 },
      diffLines: { key: "rank", dir: 1 },
      diffSites: { key: "rank", dir: 1 },
      diffTree: { key: "d", dir: -1 },
      growthPaths: { key: "net", dir: -1 },
      growthFns: { key: "net", dir: -1 }
    },
    fnFilter: "",
    diffFigure: "self_wall",
    // a diff page's Functions tab: the figure shown for A and B
    expanded: /* @__PURE__ */ new Set(),
    selected: -1
    // the function selected in any view, -1: none
  };
  try {
    const saved = JSON.parse(localStorage.getItem("rokuprof.waits") || "null");
    if (Array.isArray(saved)) state.waits = new Set(saved.filter((w) => typeof w === "string"));
  } catch {
  }
  try {
    const kept = localStorage.getItem("rokuprof.hideIdle");
    if (kept === "true" || kept === "false") state.hideIdle = kept === "true";
  } catch {
  }

  // rokuprof/export/report/assets/src/figures.js
  var self = {};
  var total = {};
  var fnSelf = {};
  var fnTotal = {};
  var derived = { rangeFactor: null, hiddenFn: null, lineCache: null, memW: memWindow(null), memRange: null };
  function compute() {
    derived.lineCache = null;
    derived.hiddenFn = new Uint8Array(nF);
    if (state.hideIdle) {
      for (let f = 0; f < nF; f++) if (state.waits.has(fnName[f])) derived.hiddenFn[f] = 1;
    }
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
    for (let n = 0; n < N; n++) {
      const f = nodeFn[n];
      if (f >= 0) for (const c of COLS) fnSelf[c][f] += self[c][n];
    }
    for (const n of outermostFrames()) for (const c of COLS) fnTotal[c][nodeFn[n]] += total[c][n];
  }
  var outermostCache = null;
  function outermostFrames() {
    if (outermostCache) return outermostCache;
    const out = [];
    const onPath = new Int32Array(nF);
    const stack = [];
    for (let t = T - 1; t >= 0; t--) stack.push(t);
    while (stack.length) {
      const n = stack.pop();
      if (n < 0) {
        const f2 = nodeFn[~n];
        if (f2 >= 0) onPath[f2]--;
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
  var threadRoots = () => state.thread < 0 ? [...Array(T).keys()] : [state.thread];
  var rootValue = (c) => threadRoots().reduce((s, t) => s + total[c][t], 0);

  // rokuprof/export/report/assets/src/dom.js
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v == null || v === false) continue;
        if (k === "text") e.textContent = v;
        else if (k === "class") e.className = v;
        else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? "" : String(v));
      }
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  var text = (t) => document.createTextNode(t == null ? "" : String(t));
  var fnWhere = (f) => fnLine[f] ? `${fnFile[f]}:${fnLine[f]}` : fnFile[f];

  // rokuprof/export/report/assets/src/links.js
  var SRC = D.source || null;
  var EDITOR = (() => {
    const t = SRC && typeof SRC.editor === "string" ? SRC.editor : "";
    const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(t);
    const refused = ["javascript", "vbscript", "data", "blob", "about", "filesystem"];
    if (!m || /[\s\x00-\x1f\x7f]/.test(t) || refused.includes(m[1].toLowerCase())) return null;
    return t.split(/(\{path\}|\{line\})/);
  })();
  var localPath = new Map(SRC ? SRC.paths.map(([s, p]) => [S[s], p]) : []);
  function editorHref(file, line) {
    if (!EDITOR) return null;
    const path = encodeURIComponent(localPath.get(file) ?? file).replace(/%2F/g, "/");
    const n = String(Math.max(1, Math.floor(Number(line)) || 1));
    return EDITOR.map((p) => p === "{path}" ? path : p === "{line}" ? n : p).join("");
  }
  function srcLink(file, line, label) {
    const shown = label ?? (line ? `${file}:${line}` : file);
    const href = editorHref(file, line);
    if (!href) return text(shown);
    return el("a", { class: "src", href, "data-file": file, "data-line": line || null, title: `Open ${file}:${line || 1} in the editor`, text: shown });
  }
  var whereLink = (f) => srcLink(fnFile[f], fnLine[f], fnWhere(f));
  var pathRoom = (wide) => wide ? Math.max(24, Math.min(64, Math.round(innerWidth / 30))) : Math.max(16, Math.min(48, Math.round(innerWidth / 55)));
  var shortWhereLink = (f) => srcLink(fnFile[f], fnLine[f], shortPath(fnWhere(f), pathRoom(true)));

  // rokuprof/export/report/assets/src/abfacts.js
  function abVerdict(v) {
    return el("p", { class: v.passed ? "verdict passed" : "verdict failed", id: "ab-verdict", role: "status", text: v.text });
  }
  function abWarning(w) {
    return el("p", { class: "problem", id: "ab-apps-warning", role: "note", text: w });
  }
  function sideFacts(side, which) {
    const app2 = [side.app || "(unnamed app)", side.appVersion].filter(Boolean).join(" ");
    const status = STATUS_TEXT[side.status] || side.status;
    const run = side.seconds ? `${fmtSeconds(side.seconds)} run${side.timing && side.timing !== "footer" ? ` (${side.timing})` : ""}` : "run length unknown";
    return el(
      "p",
      { class: "side", "data-side": which.toLowerCase() },
      el("b", { class: "which", text: which }),
      el("span", { class: "input", "data-fact": "input", text: side.input }),
      el("span", { "data-fact": "app", text: app2 }),
      el("span", { "data-fact": "capture", text: side.capture }),
      el("span", { "data-fact": "duration", "data-value": side.seconds, text: run }),
      el("span", { class: `badge ${side.status}`, "data-fact": "status", text: side.problem ? `${status}: ${side.problem}` : status })
    );
  }
  function diffBasis() {
    const [a, b] = DF.sides;
    return PER_SECOND ? `Figures per second of run: each capture's counts divided by its length (A ${fmtSeconds(a.seconds)}, B ${fmtSeconds(b.seconds)}), as rokuprof diff --per-second.` : `Figures are each run's whole counts, as rokuprof diff prints them${Math.abs(a.seconds - b.seconds) > 0.01 * Math.max(a.seconds, b.seconds) ? ` (the runs differ in length: ${fmtSeconds(a.seconds)} and ${fmtSeconds(b.seconds)}; --per-second compares rates)` : ""}.`;
  }

  // rokuprof/export/report/assets/src/page.js
  var app = document.getElementById("app");
  var appOf = (x) => [x.app || "(unnamed app)", x.appVersion].filter(Boolean).join(" ");
  var title = DF && appOf(DF.sides[0]) !== appOf(DF.sides[1]) ? `${appOf(DF.sides[0])} → ${appOf(DF.sides[1])}` : appOf(facts);
  var captureName = DF ? `diff ${DF.label}` : facts.capture || "capture";
  var device = [facts.vendor, facts.model].filter(Boolean).join(" ");
  var header = el(
    "header",
    { class: "top" },
    el("h1", { id: "heading" }, text(`${title} `), el("span", { class: "capture", id: "capture", title: captureName, text: captureName })),
    el("span", { class: "sub", text: [device && `on ${device}`, facts.firmware && `firmware ${facts.firmware}`].filter(Boolean).join(", ") }),
    DF ? null : el("span", { class: "sub", text: `${fmtSeconds(facts.duration)} run` }),
    DF ? null : el("span", { class: `badge ${facts.status}`, id: "status", text: STATUS_TEXT[facts.status] || facts.status }),
    el("span", { class: "brand", text: `rokuprof ${facts.rokuprof}` })
  );
  app.append(header);
  if (DF && DF.verdict) app.append(abVerdict(DF.verdict));
  if (DF && DF.warning) app.append(abWarning(DF.warning));
  var abTop = DF ? el("section", { class: "ab-top", id: "ab-top", "aria-label": "Top regressions and improvements" }) : null;
  if (DF) app.append(abTop);
  if (DF) app.append(el("div", { class: "ab", id: "ab-sides" }, sideFacts(DF.sides[0], "A"), sideFacts(DF.sides[1], "B"), el("p", { class: "basis", id: "ab-basis", text: `${diffBasis()} Timeline, flame graph (coloured by change), stack chart and bottom-up show B.` })));
  if (facts.problem) app.append(el("p", { class: `problem ${facts.status}`, id: "problem", text: `This capture is ${facts.status}: ${facts.problem}. The report shows everything read before that.` }));
  if (D.other) app.append(el("p", { class: "problem", id: "other-paths", text: D.other.note }));
  var main = el("main");
  app.append(main);
  var tlCanvas = el("canvas", { id: "timeline", "aria-label": "Timeline: busy share per thread and live heap; drag to select a time range" });
  var rangeText = el("span", { class: "range", id: "range-text" });
  var heapText = el("span", { class: "heap", id: "heap-text" });
  if (facts.memoryOps) {
    heapText.append(
      text("peak live heap "),
      el("b", { "data-value": heapPeak, title: `${grouped(heapPeak)} bytes`, text: fmtBytes(heapPeak) }),
      text(" · live heap at end "),
      el("b", { "data-value": heapEnd, title: `${grouped(heapEnd)} bytes`, text: fmtBytes(heapEnd) })
    );
  } else heapText.textContent = NO_MEMORY;
  var clearRange = el("button", { class: "btn", id: "range-clear", hidden: true, text: "Whole run" });
  var tlMarks = marks.length ? el("div", { class: "tl-marks", id: "timeline-marks", "aria-hidden": "true" }) : null;
  var vitalsText = el("span", { class: "vitals", id: "vitals-text" });
  VITALS.forEach((v, i) => {
    if (i) vitalsText.append(text(" · "));
    vitalsText.append(text(`${v.label} peak `), el("b", { "data-series": v.key, "data-points": v.points.length, "data-value": v.peak, style: `color: ${v.colour}`, text: vitalText(v, v.peak) }));
  });
  var vitalsRange = el("p", { class: "vitals", id: "vitals-range", hidden: true });
  function renderVitalsRange() {
    vitalsRange.replaceChildren();
    vitalsRange.hidden = !state.range || !VITALS.length;
    if (vitalsRange.hidden) return;
    const [a, b] = state.range.map((x) => x / HZ);
    vitalsRange.append(text(`${fmtSeconds(a)} – ${fmtSeconds(b)}: `));
    VITALS.forEach((v, i) => {
      if (i) vitalsRange.append(text(" · "));
      let n = 0, sum = 0, min = Infinity, max = -Infinity;
      for (const [at, x] of v.points) {
        if (at < a || at > b) continue;
        n++;
        sum += x;
        if (x < min) min = x;
        if (x > max) max = x;
      }
      if (!n) {
        vitalsRange.append(el("span", { "data-series": v.key, "data-count": 0, text: `${v.label}: no reading` }));
        return;
      }
      const mean = sum / n;
      vitalsRange.append(
        text(`${v.label} `),
        el("span", { "data-series": v.key, "data-count": n, "data-min": min, "data-mean": mean, "data-max": max, style: `color: ${v.colour}`, text: `min ${vitalText(v, min)} · mean ${vitalText(v, mean)} · max ${vitalText(v, max)}` }),
        text(` (${grouped(n)} reading${n === 1 ? "" : "s"})`)
      );
    });
  }
  var timelineView = { open: true };
  try {
    timelineView.open = localStorage.getItem("rokuprof.timeline") !== "collapsed";
  } catch {
  }
  var tlLabels = el("div", { class: "tl-labels", id: "timeline-threads" });
  var tlToggle = el("button", { class: "tl-toggle", id: "timeline-toggle", "aria-expanded": String(timelineView.open), "aria-controls": "timeline-body", title: "Hide or show the timeline", text: "Timeline" });
  var tlHint = "Drag across the timeline to look at a time range; every view follows it.";
  var tlSection = el(
    "section",
    { class: `panel timeline${timelineView.open ? "" : " collapsed"}`, id: "timeline-panel" },
    el("div", { class: "head" }, el("h2", null, tlToggle), rangeText, clearRange, heapText, VITALS.length ? vitalsText : null, el("span", { class: "hint", title: tlHint, text: tlHint })),
    el("div", { class: "tl-body", id: "timeline-body" }, el("div", { class: "tl-wrap" }, tlCanvas, tlLabels, tlMarks), ...SESSION ? sessionParts() : [])
  );
  main.append(tlSection);
  function sessionParts() {
    const out = VITALS.length ? [vitalsRange] : [];
    if (marks.length) {
      const list = el("ol", { class: "marks", id: "marks", "aria-label": "Marks" });
      for (const [at, label] of marks) list.append(el("li", { "data-at": at }, el("span", { class: "t", text: fmtSeconds(at) }), text(" "), el("span", { class: "label", text: label })));
      out.push(list);
    }
    if (SESSION.notes.length) out.push(el("p", { class: "note", id: "session-notes", text: SESSION.notes.join("; ") }));
    return out;
  }
  var TABS = [
    ["flame", "Flame graph"],
    ["stack", "Stack chart"],
    ["tree", "Call tree"],
    ["bottomup", "Bottom-up"],
    ["functions", "Functions"],
    ["lines", "Lines"],
    ...SRC && SRC.label != null ? [["source", "Source"]] : [],
    ["memory", "Memory"],
    ["facts", "Facts"]
  ];
  var tabButtons = {};
  var nav = el("nav", { class: "tabs", role: "tablist" });
  for (const [key, label] of TABS) {
    tabButtons[key] = el("button", { role: "tab", id: `tab-${key}`, "aria-selected": "false", text: label });
    nav.append(tabButtons[key]);
  }
  var threadSelect = el("select", { id: "thread" }, el("option", { value: -1, text: "All threads" }));
  threadName.forEach((name, t) => threadSelect.append(el("option", { value: t, text: name })));
  var hideIdleBox = el("input", { type: "checkbox", id: "hide-idle", checked: state.hideIdle });
  var waitsBox = el("span", { class: "waits", id: "waits" });
  var toolbar = el(
    "div",
    { class: "toolbar" },
    el("label", null, "Thread", threadSelect),
    el("label", { title: "Leave out the functions marked as waits (idle time) everywhere" }, hideIdleBox, "Hide idle"),
    waitsBox
  );
  main.append(nav, toolbar);
  var views = {};
  for (const [key] of TABS) {
    views[key] = el("section", { class: "view", id: `view-${key}`, role: "tabpanel", hidden: true });
    main.append(views[key]);
  }
  app.append(el("footer", { class: "bottom", text: `Made by rokuprof ${facts.rokuprof} from ${grouped(facts.bytes)} bytes of .bsprof stream. Figures are the profile tables' exact counters; in a time range, time, calls and bytes live at the end are apportioned by each call path's samples in the range; allocations and frees are those that arrived in it (exact, to the memory steps the Memory tab names).` }));
  var datalist = el("datalist", { id: "fn-names" });
  [...new Set(fnName)].sort().forEach((n) => datalist.append(el("option", { value: n })));
  app.append(datalist);

  // rokuprof/export/report/assets/src/actions.js
  var dirty = /* @__PURE__ */ new Set();
  var RENDER = {};
  var redraw = { timeline: () => {
  } };
  function invalidate(all) {
    for (const [key] of TABS) dirty.add(key);
    if (all) compute();
    redraw.timeline();
    renderActive();
  }
  function renderActive() {
    for (const [key] of TABS) {
      const on = key === state.tab;
      views[key].hidden = !on;
      tabButtons[key].setAttribute("aria-selected", on ? "true" : "false");
    }
    toolbar.hidden = state.tab === "facts";
    if (dirty.has(state.tab)) {
      dirty.delete(state.tab);
      RENDER[state.tab]();
    }
  }
  function setTab(key) {
    state.tab = key;
    if (history.replaceState) history.replaceState(null, "", `#${key}`);
    renderActive();
  }
  function setThread(t) {
    state.thread = t;
    threadSelect.value = String(t);
    state.zoom = -1;
    invalidate(false);
  }
  function setHideIdle(on) {
    state.hideIdle = on;
    hideIdleBox.checked = on;
    try {
      localStorage.setItem("rokuprof.hideIdle", String(on));
    } catch {
    }
    invalidate(true);
  }
  function toggleWait(name, on) {
    if (on) state.waits.add(name);
    else state.waits.delete(name);
    try {
      localStorage.setItem("rokuprof.waits", JSON.stringify([...state.waits]));
    } catch {
    }
    renderWaits();
    invalidate(true);
  }
  function setRange(range) {
    if (range) {
      let [a, b] = range;
      a = Math.max(0, Math.floor(a));
      b = Math.min(SLOTS, Math.ceil(b));
      state.range = b > a ? [a, b] : null;
    } else state.range = null;
    clearRange.hidden = !state.range;
    rangeText.textContent = state.range ? `${fmtSeconds(state.range[0] / HZ)} – ${fmtSeconds(state.range[1] / HZ)} (${fmtSeconds((state.range[1] - state.range[0]) / HZ)} of ${fmtSeconds(SLOTS / HZ)})` : `whole run, ${fmtSeconds(SLOTS / HZ)}`;
    renderVitalsRange();
    invalidate(true);
  }
  function renderWaits() {
    waitsBox.replaceChildren(el("span", { class: "note", text: "Waits:" }));
    const names = [...state.waits].sort();
    for (const w of names) {
      waitsBox.append(el("span", { class: "chip", "data-wait": w }, text(w), el("button", { title: `Not a wait: ${w}`, "aria-label": `remove ${w}`, text: "×", onclick: () => toggleWait(w, false) })));
    }
    for (const w of SUGGESTED_WAITS) {
      if (!state.waits.has(w)) waitsBox.append(el("button", { class: "chip suggested", title: "Mark as a wait", text: `+ ${w}`, onclick: () => toggleWait(w, true) }));
    }
    const add = el("input", { type: "text", placeholder: "mark a function…", size: 14, id: "wait-add", list: "fn-names" });
    add.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && add.value.trim()) toggleWait(add.value.trim(), true);
    });
    waitsBox.append(add);
  }
  for (const [key] of TABS) tabButtons[key].addEventListener("click", () => setTab(key));
  threadSelect.addEventListener("change", (e) => setThread(Number(e.target.value)));
  hideIdleBox.addEventListener("change", (e) => setHideIdle(e.target.checked));
  clearRange.addEventListener("click", () => setRange(null));

  // rokuprof/export/report/assets/src/timeline.js
  var TL = { lane: 11, gap: 2, counter: 30, axis: 16, left: 150, marks: 16 };
  var HEAP_COLOUR = "#3559d6";
  var tlDrag = null;
  function tlGeometry() {
    const width = tlCanvas.clientWidth || 1e3;
    const heapOn = heap.length > 0;
    const top = marks.length ? TL.marks : 0;
    const lanesTop = top + TL.axis;
    const counters = heapOn || VITALS.length > 0;
    const counterTop = lanesTop + lanes.length * (TL.lane + TL.gap) + 4;
    const height = counters ? counterTop + TL.counter + 2 : counterTop - 2;
    return { width, height, heapOn, top, lanesTop, counters, counterTop, plot: width - TL.left - 8 };
  }
  var slotX = (g, s) => TL.left + s / SLOTS * g.plot;
  var secondsX = (g, at) => TL.left + Math.min(1, Math.max(0, at * HZ / SLOTS)) * g.plot;
  var xSlot = (g, x) => Math.min(SLOTS, Math.max(0, (x - TL.left) / g.plot * SLOTS));
  var labelsKey = "";
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
      const legend2 = el("div", { class: "counter", id: "timeline-counters" });
      const series = [...g.heapOn ? [["live heap", HEAP_COLOUR]] : [], ...VITALS.map((v) => [v.label, v.colour])];
      series.forEach(([label, colour], i) => {
        const item = el("span", { text: label });
        item.style.color = colour;
        if (i) legend2.append(text(" · "));
        legend2.append(item);
      });
      legend2.style.top = `${g.counterTop}px`;
      legend2.style.height = `${TL.counter}px`;
      rows.push(legend2);
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
        const hy = y + H - b / max * (H - 3);
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
      const py = (x) => y + H - x / max * (H - 3);
      ctx.beginPath();
      v.points.forEach(([at, x], i) => i ? ctx.lineTo(secondsX(g, at), py(x)) : ctx.moveTo(secondsX(g, at), py(x)));
      if (v.points.length === 1) ctx.lineTo(secondsX(g, v.points[0][0]) + 2, py(v.points[0][1]));
      ctx.strokeStyle = v.colour;
      ctx.lineWidth = 1.2;
      ctx.stroke();
      timelineInfo.vitals[v.key] = { points: v.points.length, top: y, height: H, max };
    }
    ctx.lineWidth = 1;
  }
  var timelineInfo = { busy: [], vitals: {}, lanes: [] };
  var MARK_GAP = 4;
  var marksKey = "";
  function placeMarks(g) {
    if (!tlMarks || marksKey === `${g.width}x${g.height}`) return;
    marksKey = `${g.width}x${g.height}`;
    tlMarks.style.height = `${g.height}px`;
    const drawn = [];
    for (const [at, label] of marks) {
      const x = Math.round(secondsX(g, at));
      const last = drawn[drawn.length - 1];
      if (last && x - last.x < MARK_GAP) last.more += 1;
      else drawn.push({ x, at, label, more: 0 });
    }
    tlMarks.classList.toggle("dense", drawn.length > g.plot / 24);
    tlMarks.replaceChildren(
      ...drawn.map(({ x, at, label, more }, i) => {
        const room = (i + 1 < drawn.length ? drawn[i + 1].x : TL.left + g.plot + 8) - x - 6;
        const chars = Math.floor(room / 6.5);
        const shown = label.length <= chars ? label : chars > 1 ? `${label.slice(0, chars - 1)}…` : "";
        const title2 = `${label} — ${fmtSeconds(at)}${more ? ` (and ${grouped(more)} more mark${more > 1 ? "s" : ""} right after it)` : ""}`;
        const mark = el("div", { class: "mark", "data-at": at, "data-label": label, "data-count": 1 + more, title: title2 }, shown ? el("span", { class: "label", text: shown }) : null);
        mark.style.left = `${x}px`;
        return mark;
      })
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
    }
    if (open) drawTimeline();
    dirty.add("flame");
    renderActive();
  }
  tlToggle.addEventListener("click", () => setTimelineOpen(!timelineView.open));

  // rokuprof/export/report/assets/src/tables.js
  function dataTable(id, columns, rows, sortState, onSort, limit = 1e3, extra) {
    const col = columns.find((c) => c.key === sortState.key) || columns[0];
    const sorted = rows.slice().sort((a, b) => {
      const va = col.get(a), vb = col.get(b);
      const d = typeof va === "string" ? va.localeCompare(vb) : va - vb;
      return d * sortState.dir || (columns[0].get(a) < columns[0].get(b) ? -1 : 1);
    });
    const thead = el("tr");
    for (const c of columns) {
      const th = el("th", { class: c.text ? "text" : null, "data-key": c.key, title: c.title || null, "aria-sort": c.key === col.key ? sortState.dir < 0 ? "descending" : "ascending" : null, text: c.label });
      th.addEventListener("click", () => {
        if (sortState.key === c.key) sortState.dir = -sortState.dir;
        else {
          sortState.key = c.key;
          sortState.dir = c.text ? 1 : -1;
        }
        onSort();
      });
      thead.append(th);
    }
    const maxes = {};
    for (const c of columns) if (c.bar) maxes[c.key] = Math.max(1e-12, ...rows.map((r) => c.get(r)));
    const tbody = el("tbody");
    for (const row of sorted.slice(0, limit)) {
      const tr = el("tr", extra ? extra(row) : null);
      for (const c of columns) {
        const v = c.get(row);
        const td = el("td", { class: [c.text ? "text" : "", c.cls || "", c.bar ? "bar" : ""].join(" ").trim() || null, "data-key": c.key });
        if (c.render) c.render(td, row);
        else td.textContent = c.fmt ? c.fmt(v, row) : String(v);
        if (!c.text) {
          const exact = c.value ? c.value(row) : v;
          if (exact !== null) td.setAttribute("data-value", String(exact));
          if (c.exact !== false) td.title = Number.isInteger(v) ? grouped(v) : String(v);
        }
        if (c.bar && v > 0) td.style.backgroundImage = `linear-gradient(to left, var(--bar) ${(100 * v / maxes[c.key]).toFixed(1)}%, transparent 0)`;
        tr.append(td);
      }
      tbody.append(tr);
    }
    const table = el("table", { class: "data", id }, el("thead", null, thead), tbody);
    const wrap = el("div", { class: "tablewrap" }, table);
    if (sorted.length > limit) wrap.append(el("div", { class: "more", text: `… and ${sorted.length - limit} more (sort by another column to see them)` }));
    return wrap;
  }
  var swatchFor = (f) => {
    const s = el("span", { class: "swatch" });
    s.style.background = fileColour(fnFile[f], fnName[f], false);
    return s;
  };
  var clip = (t, kind) => kind === "path" ? el("span", { class: "clip path", title: t, text: shortPath(t, pathRoom(false)) }) : el("span", { class: `clip ${kind}`, text: t });
  var visibleFn = (f) => (state.thread < 0 || fnThread[f] === state.thread) && !derived.hiddenFn[f];

  // rokuprof/export/report/assets/src/diffmodel.js
  var changeKind = (q) => changeKindWithin(q, SAME_PCT);
  var changeColour = (q) => changeColourWithin(q, SAME_PCT);
  var fmtPct = (q) => fmtPctWithin(q, SAME_PCT);
  var perRun = (f) => PER_SECOND ? (v) => `${f(v)}/s` : f;
  var DIFF_FMT = {
    wall: perRun(fmtWall),
    cpu: PER_SECOND ? (v) => `${Math.abs(v) < 100 ? sig(v) : fmtOps(v)} ops/s` : fmtCpu,
    calls: PER_SECOND ? (v) => `${sig(v)}/s` : fmtCount,
    bytes: PER_SECOND ? (v) => `${Math.abs(v) < 100 ? `${sig(v)} B` : fmtBytes(v)}/s` : fmtBytes,
    blocks: PER_SECOND ? (v) => `${sig(v)}/s` : fmtCount
  };
  var TREE_FMT = { wall: "wall", cpu: "cpu", calls: "calls", allocBytes: "bytes", liveBytes: "bytes" };
  var DT = DF ? mergedTree() : null;
  function mergedTree() {
    const t = DF.tree;
    const n = t.parent.length;
    const tkids = Array.from({ length: n }, () => []);
    const tdepth = new Int32Array(n);
    for (let i = 0; i < n; i++) if (t.parent[i] >= 0) {
      tkids[t.parent[i]].push(i);
      tdepth[i] = tdepth[t.parent[i]] + 1;
    }
    const any = new Uint8Array(n);
    for (const m of Object.values(t.figures)) for (let i = 0; i < n; i++) if (m.a[i] || m.b[i]) any[i] = 1;
    return { n, kids: tkids, depth: tdepth, any, roots: [...Array(n).keys()].filter((i) => t.parent[i] < 0), expanded: null };
  }
  var treeQuad = (metric, i) => {
    const m = DF.tree.figures[metric];
    return [m.a[i], m.b[i], m.d[i], m.p[i]];
  };
  var treeLabel = (i) => DF.tree.name[i] < 0 ? S[DF.tree.thread[i]] : S[DF.tree.name[i]];
  var flameQuad = (n) => treeQuad(state.metric, DF.flame[n]);
  var LEGEND_RATIOS = [0.25, 0.5, 0.71, 1, 1.41, 2, 4];
  function renderDiffLegend(legend2) {
    legend2.append(el("span", { text: `Colour: how each frame's total changed, ${DF.label} (whole runs${PER_SECOND ? ", per second of run" : ""}):` }));
    const swatch = (colour, label, data) => {
      const sw = el("i", data);
      sw.style.background = colour;
      legend2.append(el("span", data, sw, text(label)));
    };
    swatch(KIND_COLOUR.new, "new (only in B, or from 0)", { "data-kind": "new" });
    const scale = el("span", { class: "scale", id: "diff-scale" });
    for (const r of LEGEND_RATIOS) {
      const kind = r === 1 ? "same" : r > 1 ? "grew" : "shrank";
      const sw = el("i", { "data-ratio": r, "data-kind": kind, title: r === 1 ? `within ±${SAME_PCT}%` : r > 1 ? `grew ×${r}` : `shrank to ${Math.round(r * 100)}%` });
      sw.style.background = r === 1 ? KIND_COLOUR.same : ratioColour(r);
      scale.append(el("span", null, sw, text(r === 1 ? "same" : r > 1 ? `×${r}` : `÷${+(1 / r).toFixed(1)}`)));
    }
    legend2.append(el("span", { class: "scale-label", text: "shrank … grew:" }), scale);
    swatch(KIND_COLOUR.gone, "gone (only in A): in the tables; not drawn here (B's shape), its caller's total shrinks", { "data-kind": "gone" });
  }
  function diffTipRow(n) {
    const x = flameQuad(n);
    const f = DIFF_FMT[TREE_FMT[state.metric]];
    return ["diff", "A → B", `${x[0] === null ? "–" : f(x[0])} → ${x[1] === null ? "–" : f(x[1])} (${signed(x[2], f)}, ${fmtPct(x)})`, true];
  }

  // rokuprof/export/report/assets/src/flame.js
  var ROW = 20;
  var flameCanvas = el("canvas", { id: "flame", "aria-label": "Flame graph" });
  var flameWrap = el("div", { class: "flame-wrap" }, flameCanvas);
  var crumbs = el("div", { class: "crumbs", id: "crumbs" });
  var searchBox = el("input", { type: "search", id: "search", placeholder: "Search functions or files", "aria-label": "Search" });
  var matchesText = el("span", { class: "matches", id: "matches" });
  var metricSeg = el("span", { class: "seg", id: "metric", role: "group", "aria-label": "Size frames by" });
  for (const m of METRICS) {
    const off = m.memory && !facts.memoryOps;
    metricSeg.append(el("button", { "data-metric": m.key, "aria-pressed": "false", class: off ? "nodata" : null, title: off ? NO_MEMORY : null, text: m.label, onclick: () => setMetric(m.key) }));
  }
  var shapeSeg = el(
    "span",
    { class: "seg", id: "shape" },
    el("button", { "data-shape": "flame", "aria-pressed": "true", text: "Flame", onclick: () => setShape(false) }),
    el("button", { "data-shape": "icicle", "aria-pressed": "false", text: "Icicle", onclick: () => setShape(true) })
  );
  var legend = el("div", { class: "legend", id: "legend" });
  var flameNote = el("p", { class: "note nomem", id: "flame-note", hidden: true, text: `${NO_MEMORY}: nothing to size the frames by.` });
  var tip = el("div", { class: "tip", hidden: true, role: "tooltip" });
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
    legend
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
  var VROOT = -2;
  var MAX_LEVELS = 400;
  var CHAIN_HEAD = 2;
  var CHAIN_TAIL = 8;
  var flame = { rects: [], marks: [], chain: [], width: 0, total: 0, rows: 0, chainLength: 0 };
  function flameLayout(width, c = state.metric, view = state) {
    const t = total[c];
    const rects = [], marks2 = [];
    const roots = threadRoots();
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
      marks2.push({ kind: "elided", node: chain[CHAIN_HEAD + (hidden >> 1)], x: 0, w: width, depth: CHAIN_HEAD, count: hidden });
    }
    shown.forEach((n, d) => {
      if (n !== null) rects.push({ node: n, x: 0, w: width, depth: d, value });
    });
    const scale = value > 0 ? width / value : 0;
    const first = shown.length, last = first + MAX_LEVELS - 1;
    let rows = first;
    const children = (n) => n === VROOT ? roots : kids[n];
    const order = (list) => list.filter((k) => t[k] > 0).sort((a, b) => t[b] - t[a] || a - b);
    const stack = value > 0 ? [[top, 0, first]] : [];
    while (stack.length) {
      const [n, x, d] = stack.pop();
      const ks = order(children(n));
      if (!ks.length) continue;
      if (d > last) {
        marks2.push({ kind: "deeper", node: n, x, w: n === top ? width : t[n] * scale, depth: d, count: levelsBelow(n, t) });
        rows = Math.max(rows, d + 1);
        continue;
      }
      let cx = x;
      const next = [];
      for (const k of ks) {
        const w = t[k] * scale;
        rects.push({ node: k, x: cx, w, depth: d, value: t[k] });
        next.push([k, cx, d + 1]);
        cx += w;
      }
      rows = Math.max(rows, d + 1);
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
    }
    return { rects, marks: marks2, chain, width, total: value, rows, chainLength: shown.filter((n) => n !== null).length };
  }
  function levelsBelow(n, t) {
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
  var textWidths = /* @__PURE__ */ new Map();
  var FLAME_MIN = 180;
  function fitFlameBox() {
    if (flameWrap.hidden || views.flame.hidden) return;
    const top = flameWrap.getBoundingClientRect().top + window.scrollY;
    const room = Math.floor(window.innerHeight - top - 12);
    flameWrap.style.maxHeight = `${Math.max(FLAME_MIN, Math.min(Math.round(window.innerHeight * 0.7), room))}px`;
  }
  function renderFlame() {
    for (const b of metricSeg.children) b.setAttribute("aria-pressed", b.dataset.metric === state.metric ? "true" : "false");
    for (const b of shapeSeg.children) b.setAttribute("aria-pressed", b.dataset.shape === "icicle" === state.icicle ? "true" : "false");
    const width = Math.max(300, flameWrap.clientWidth - 2 || 1e3);
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
      const mid = lo + hi + 1 >> 1;
      if (measure(ctx, `${label.slice(0, mid)}…`) <= room) lo = mid;
      else hi = mid - 1;
    }
    return `${label.slice(0, lo)}…`;
  }
  function measure(ctx, s) {
    let w = textWidths.get(s);
    if (w === void 0) {
      w = ctx.measureText(s).width;
      if (textWidths.size < 5e4) textWidths.set(s, w);
    }
    return w;
  }
  var renderCrumbs = () => fillCrumbs(crumbs, flame, zoomTo);
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
    let sum = 0, frames = 0;
    const fns = /* @__PURE__ */ new Set();
    const t = total[state.metric];
    const under = new Uint8Array(N);
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
      text(` of ${METRIC[state.metric].label.toLowerCase()} (${METRIC[state.metric].fmt(sum)})`)
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
    state.zoom = n === VROOT || n >= 0 && n < T && state.thread === n ? -1 : n;
    dirty.add("flame");
    renderActive();
  }
  function rectAt(x, y, withMarks, layout = flame, icicle = state.icicle) {
    const d = icicle ? Math.floor(y / ROW) : Math.floor((layout.height - y) / ROW);
    for (const r of layout.rects) if (r.depth === d && x >= r.x && x < r.x + r.w && r.w >= 0.5) return r;
    if (withMarks) {
      for (const m of layout.marks) if (m.depth === d && x >= m.x && x < m.x + m.w) return m;
    }
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
  flameCanvas.addEventListener("mouseleave", () => tip.hidden = true);
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || state.tab !== "flame" || state.zoom < 0 || /** @type {Element} */
    e.target.closest("input, select")) return;
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
    const value = (c, which) => n === VROOT ? rootValue(c) : which[c][n];
    for (const m of METRICS) {
      if (m.key === "calls") continue;
      const cur = m.key === state.metric;
      if (m.memory && !facts.memoryOps) {
        rows.push([m.key, m.label, NO_MEMORY, cur]);
        continue;
      }
      const tv = value(m.key, total);
      const sv = n === VROOT ? 0 : self[m.key][n];
      rows.push([m.key, m.label, `${m.fmt(tv)} total (${pct(tv, rootValue(m.key))}) · ${m.fmt(sv)} self`, cur]);
    }
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

  // rokuprof/export/report/assets/src/bottomup.js
  var BU_TOP = 100;
  var BU_ROWS = 2e3;
  var BU_INDENT = 40;
  var BU_SIDE = 100;
  var bu = { pre: null, end: null, fnStart: null, fnNodes: null, chains: /* @__PURE__ */ new Map(), callees: /* @__PURE__ */ new Map(), open: /* @__PURE__ */ new Set(), filter: "", search: null, shown: BU_TOP, drawn: false, top: [], focus: -1, all: 0, count: 0, scroll: 0, timing: {} };
  function buIndex() {
    if (bu.pre) return;
    Object.assign(bu, treeIndex({ N, T, kids, nodeFn, nF }));
  }
  function buRoot(f) {
    const key = String(f);
    let c = bu.chains.get(key);
    if (!c) {
      const frames = bu.fnNodes.subarray(bu.fnStart[f], bu.fnStart[f + 1]);
      c = { key, fn: f, depth: 0, frames, tips: frames, callers: null };
      bu.chains.set(key, c);
    }
    return c;
  }
  function buCallers(c) {
    if (c.callers) return c.callers;
    c.callers = chainCallers(c, { parent, nodeFn });
    for (const child of c.callers) bu.chains.set(child.key, child);
    return c.callers;
  }
  function buCallees(f) {
    let out = bu.callees.get(f);
    if (out) return out;
    out = calleesOf(f, { kids, nodeFn }, bu);
    bu.callees.set(f, out);
    return out;
  }
  function buFigures(frames, m) {
    return framesFigures(frames, self[m], total[m], bu);
  }
  function selectFunction(f) {
    const t0 = performance.now();
    state.selected = f;
    state.search = f >= 0 ? fnName[f] : "";
    searchBox.value = state.search;
    for (const [key] of TABS) if (key !== "bottomup") dirty.add(key);
    if (state.tab === "bottomup" && bu.drawn && !dirty.has("bottomup")) buRefocus();
    else dirty.add("bottomup");
    renderActive();
    bu.timing.select = performance.now() - t0;
  }
  function isSelected(f) {
    return f >= 0 && f === state.selected && state.search === fnName[f];
  }
  function buFocus(top) {
    if (isSelected(state.selected) && visibleFn(state.selected)) return state.selected;
    const q = state.search.trim();
    const named = q ? top.find((f) => fnName[f] === q) : void 0;
    if (named !== void 0) return named;
    const busy = top.find((f) => !state.waits.has(fnName[f]));
    return busy !== void 0 ? busy : top.length ? top[0] : -1;
  }
  function buRefocus() {
    bu.focus = buFocus(bu.top);
    bu.search = state.search;
    buRenderPanel();
    for (const tr of buTableHolder.querySelectorAll("tr.selected")) tr.classList.remove("selected");
    for (const tr of buTableHolder.querySelectorAll(`tr[data-fn="${bu.focus}"]`)) tr.classList.add("selected");
  }
  new MutationObserver(() => {
    if (!views.bottomup.hidden && bu.drawn && bu.search !== state.search && !dirty.has("bottomup")) buRefocus();
  }).observe(views.bottomup, { attributes: true, attributeFilter: ["hidden"] });
  var buMetricSeg = el("span", { class: "seg", id: "bu-metric", role: "group", "aria-label": "Rank functions by" });
  for (const m of METRICS) {
    const off = m.memory && !facts.memoryOps;
    buMetricSeg.append(el("button", { "data-metric": m.key, "aria-pressed": "false", class: off ? "nodata" : null, title: off ? NO_MEMORY : null, text: m.label, onclick: () => setMetric(m.key) }));
  }
  var buFilterBox = el("input", { type: "search", id: "bu-filter", placeholder: "Filter by name or file", "aria-label": "Filter functions" });
  buFilterBox.addEventListener("input", () => {
    bu.filter = buFilterBox.value;
    dirty.add("bottomup");
    renderActive();
  });
  var buCount = el("span", { class: "matches", id: "bu-count" });
  var buPanel = el("div", { class: "bu-panel", id: "bu-panel" });
  var buTableHolder = el("div", { class: "bu-table" });
  var buNote = el("p", { class: "note nomem", hidden: true, text: `${NO_MEMORY}: nothing to rank the functions by.` });
  views.bottomup.append(
    el("div", { class: "toolbar" }, buMetricSeg, buFilterBox, buCount),
    // one line until opened, so that the functions are on the first screen
    el(
      "details",
      { class: "note about", id: "bu-about" },
      el("summary", { text: "Each function with its own (self) figure and its total, every call path counted once however deep it recurses." }),
      text("Open a row to see who called it, and who called them; click a function to select it, here and in every view. Callers' and callees' totals are the cost of the calls between the two: a call path that calls through several of them counts under each.")
    ),
    buNote,
    buPanel,
    buTableHolder
  );
  function buVisible() {
    const m = state.metric;
    const q = bu.filter.trim().toLowerCase();
    const rows = [];
    for (let f = 0; f < nF; f++) {
      if (!visibleFn(f) || !(fnSelf[m][f] || fnTotal[m][f])) continue;
      if (q && !fnName[f].toLowerCase().includes(q) && !fnFile[f].toLowerCase().includes(q)) continue;
      rows.push(f);
    }
    return rows.sort((a, b) => fnSelf[m][b] - fnSelf[m][a] || fnTotal[m][b] - fnTotal[m][a] || a - b);
  }
  function renderBottomUp() {
    const t0 = performance.now();
    buIndex();
    const m = state.metric;
    for (const b of buMetricSeg.children) b.setAttribute("aria-pressed", b.dataset.metric === m ? "true" : "false");
    const noData = METRIC[m].memory && !facts.memoryOps;
    buNote.hidden = !noData;
    buPanel.replaceChildren();
    buTableHolder.replaceChildren();
    bu.drawn = false;
    if (noData) return;
    bu.all = rootValue(m);
    bu.top = buVisible();
    buCount.textContent = `${grouped(bu.top.length)} function${bu.top.length === 1 ? "" : "s"}`;
    bu.focus = buFocus(bu.top);
    bu.search = state.search;
    buRenderPanel();
    bu.count = 0;
    const tbody = el("tbody");
    tbody.append(buRows(bu.top.slice(0, bu.shown).map((f) => [buRoot(f), [fnSelf[m][f], fnTotal[m][f]]])));
    const label = METRIC[m].label.toLowerCase();
    const heads = [
      ["name", "Function", "text", null],
      ["self", `Self ${label}`, null, "Its own figure (without what it called); on a caller's row: its own figure when called from there"],
      ["selfPct", "Self %", null, "Share of the selection's total (all threads, or the chosen thread)"],
      ["total", `Total ${label}`, null, "Every call path through the function (or through this chain of callers), counted once however deep it recurses"],
      ["totalPct", "Total %", null, "Share of the selection's total"],
      ["thread", "Thread", "text", null],
      ["loc", "Location", "text", null]
    ];
    const thead = el("tr", null, ...heads.map(([key, text2, cls, title2]) => el("th", { class: cls, "data-key": key, title: title2, text: text2 })));
    const wrap = el("div", { class: "tablewrap" }, el("table", { class: "data", id: "bottomup" }, el("thead", null, thead), tbody));
    if (bu.top.length > bu.shown) {
      const more = () => {
        bu.shown += BU_TOP;
        dirty.add("bottomup");
        renderActive();
      };
      wrap.append(el("div", { class: "more" }, text(`… and ${grouped(bu.top.length - bu.shown)} more functions with less self ${label} (filter by name to find one) `), el("button", { class: "btn", id: "bu-more", text: `Show ${grouped(Math.min(BU_TOP, bu.top.length - bu.shown))} more`, onclick: more })));
    }
    if (!bu.top.length) wrap.append(el("p", { class: "note", text: "No function in this selection." }));
    wrap.addEventListener("scroll", () => bu.scroll = wrap.scrollTop, { passive: true });
    buTableHolder.append(wrap);
    if (bu.scroll) wrap.scrollTop = bu.scroll;
    bu.drawn = true;
    bu.timing.render = performance.now() - t0;
  }
  function buRows(items) {
    const frag = document.createDocumentFragment();
    const stack = items.slice().reverse();
    while (stack.length) {
      if (bu.count >= BU_ROWS) {
        frag.append(el("tr", { class: "more-rows", "data-depth": 0 }, el("td", { class: "text note", colspan: 7, text: `Showing ${grouped(BU_ROWS)} rows; close some to see the others.` })));
        break;
      }
      const [c, figures] = stack.pop();
      frag.append(buRow(c, figures));
      bu.count++;
      if (!bu.open.has(c.key)) continue;
      const next = buCallerItems(c);
      for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
    }
    return frag;
  }
  function buCallerItems(c) {
    const m = state.metric;
    return buCallers(c).map((k) => [k, buFigures(k.frames, m)]).filter(([, [s, t]]) => s || t).sort((a, b) => b[1][1] - a[1][1] || b[1][0] - a[1][0] || a[0].fn - b[0].fn);
  }
  function buRow(c, [s, t]) {
    const f = c.fn, all = bu.all, fmt = METRIC[state.metric].fmt;
    const canOpen = buHasCaller(c), open = bu.open.has(c.key);
    const tr = el("tr", { "data-chain": c.key, "data-fn": f, "data-depth": c.depth, class: f === bu.focus ? "selected" : null });
    const name = el("td", { class: "text fn", "data-key": "name", title: `${fnName[f]} — ${fnWhere(f)}` });
    name.style.paddingLeft = `${8 + Math.min(c.depth, BU_INDENT) * 16}px`;
    if (c.depth > BU_INDENT) name.append(el("span", { class: "depth", title: "Callers above the function", text: `${c.depth} ` }));
    const tog = el("span", { class: "toggle", role: canOpen ? "button" : null, "aria-label": canOpen ? open ? "hide callers" : "show callers" : null, text: canOpen ? open ? "▾" : "▸" : "" });
    if (canOpen)
      tog.addEventListener("click", (e) => {
        e.stopPropagation();
        buToggle(c, tr, tog);
      });
    name.append(tog, swatchFor(f), el("span", { class: "name", text: fnName[f] }));
    if (c.depth) name.append(el("span", { class: "via", text: " called it" }));
    tr.append(name);
    const cell = (key, v, shown, bar) => {
      const td = el("td", { "data-key": key, "data-value": v, title: Number.isInteger(v) ? grouped(v) : String(v), text: shown });
      if (bar && v > 0 && all > 0) {
        td.classList.add("bar");
        td.style.backgroundImage = `linear-gradient(to left, var(--bar) ${Math.min(100, 100 * v / all).toFixed(1)}%, transparent 0)`;
      }
      tr.append(td);
    };
    cell("self", s, fmt(s), true);
    cell("selfPct", all ? 100 * s / all : 0, pct(s, all));
    cell("total", t, fmt(t));
    cell("totalPct", all ? 100 * t / all : 0, pct(t, all));
    tr.append(el("td", { class: "text", "data-key": "thread", title: threadName[fnThread[f]], text: threadName[fnThread[f]] }), el("td", { class: "text loc", "data-key": "loc", title: fnWhere(f) }, shortWhereLink(f)));
    tr.addEventListener("click", () => selectFunction(f));
    return tr;
  }
  function buToggle(c, tr, tog) {
    const t0 = performance.now();
    if (bu.open.has(c.key)) {
      bu.open.delete(c.key);
      for (let next = tr.nextElementSibling; next && Number(next.dataset.depth) > c.depth; next = tr.nextElementSibling) {
        if (!next.classList.contains("more-rows")) bu.count--;
        next.remove();
      }
    } else {
      bu.open.add(c.key);
      tr.after(buRows(buCallerItems(c)));
    }
    const open = bu.open.has(c.key);
    tog.textContent = open ? "▾" : "▸";
    tog.setAttribute("aria-label", open ? "hide callers" : "show callers");
    bu.timing.toggle = performance.now() - t0;
  }
  function buHasCaller(c) {
    for (let i = 0; i < c.tips.length; i++) {
      const up = parent[c.tips[i]];
      if (up >= 0 && nodeFn[up] >= 0) return true;
    }
    return false;
  }
  function buRenderPanel() {
    buPanel.replaceChildren();
    const f = bu.focus;
    if (f < 0) return;
    const m = state.metric, fmt = METRIC[m].fmt, all = bu.all, label = METRIC[m].label.toLowerCase();
    const [s, t] = [fnSelf[m][f], fnTotal[m][f]];
    const head = el(
      "div",
      { class: "bu-head" },
      el("h3", { id: "bu-selected", "data-fn": f }, swatchFor(f), text(fnName[f])),
      el("span", { class: "where" }, whereLink(f), text(` · ${threadName[fnThread[f]]}`)),
      el("span", { class: "figs" }, text("self "), el("b", { "data-key": "self", "data-value": s, text: fmt(s) }), text(` (${pct(s, all)}) · total `), el("b", { "data-key": "total", "data-value": t, text: fmt(t) }), text(` (${pct(t, all)})`))
    );
    const side = (id, title2, rows, first) => {
      const tbody = el("tbody");
      if (first) tbody.append(first);
      for (const r of rows.slice(0, BU_SIDE)) {
        const tr = el("tr", { "data-fn": r.fn });
        tr.append(
          el("td", { class: "text fn", "data-key": "name", title: `${fnName[r.fn]} — ${fnWhere(r.fn)}` }, swatchFor(r.fn), el("span", { class: "name", text: fnName[r.fn] })),
          el("td", { "data-key": "total", "data-value": r.total, title: Number.isInteger(r.total) ? grouped(r.total) : String(r.total), text: fmt(r.total) }),
          el("td", { "data-key": "share", "data-value": t ? r.total / t : 0, text: pct(r.total, t) })
        );
        tr.addEventListener("click", () => selectFunction(r.fn));
        tbody.append(tr);
      }
      if (rows.length > BU_SIDE) tbody.append(el("tr", { class: "own" }, el("td", { class: "text", colspan: 3, text: `… and ${grouped(rows.length - BU_SIDE)} more` })));
      if (!rows.length && !first) tbody.append(el("tr", { class: "own" }, el("td", { class: "text", colspan: 3, text: "none" })));
      const heads = el("tr", null, el("th", { class: "text", text: title2 }), el("th", { title: `The cost of these calls, each call path once (${label})`, text: "Total" }), el("th", { title: `Share of ${fnName[f]}'s total`, text: "Share" }));
      return el("div", { class: "tablewrap" }, el("table", { class: "data", id }, el("thead", null, heads), tbody));
    };
    const ranked = (list) => list.map(({ fn, frames }) => ({ fn, total: buFigures(frames, m)[1] })).filter((r) => r.total).sort((a, b) => b.total - a.total || a.fn - b.fn);
    const callers = ranked(buCallers(buRoot(f)));
    const callees = ranked(buCallees(f));
    const own = el("tr", { class: "own", "data-fn": "self" }, el("td", { class: "text", "data-key": "name", text: "(self)" }), el("td", { "data-key": "total", "data-value": s, text: fmt(s) }), el("td", { "data-key": "share", "data-value": t ? s / t : 0, text: pct(s, t) }));
    buPanel.append(
      head,
      el(
        "div",
        { class: "bu-sides" },
        el("div", null, el("h4", { text: `Callers of ${fnName[f]}` }), side("bu-callers", "Called by", callers, null)),
        el("div", null, el("h4", { text: `Called by ${fnName[f]}` }), side("bu-callees", "Calls", callees, own))
      )
    );
  }

  // rokuprof/export/report/assets/src/stackchart.js
  var SC = { row: 18, gap: 10, axis: 18, marks: 18, left: TL.left, minSpan: 2, label: 28, pad: 8 };
  var sc = { t0: 0, t1: SLOTS, top: 0, key: null, thread: null, sections: [], geo: null, drawn: 0, drawMs: 0, lastMs: 0, times: [], pending: 0, drag: null, picked: -1, buildMs: 0 };
  var scLevels = null;
  var scOpen = null;
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
      const acc = [];
      let open = 0;
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
        let common = 0;
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
  function endAfter(ends, x) {
    let lo = 0, hi = ends.length;
    while (lo < hi) {
      const mid = lo + hi >> 1;
      if (ends[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  var scColours = /* @__PURE__ */ new Map();
  function scColour(f, dim) {
    const key = dim ? ~f : f;
    let c = scColours.get(key);
    if (c === void 0) scColours.set(key, c = fileColour(fnFile[f], fnName[f], dim));
    return c;
  }
  var stackCanvas = el("canvas", { id: "stack", tabindex: "0", "aria-label": "Stack chart: per thread, the call stack over time; wheel or + and - to zoom, drag or the arrow keys to pan, click a frame to select its function" });
  var stackMarks = marks.length ? el("div", { class: "sc-marks", id: "stack-marks", "aria-hidden": "true" }) : null;
  var stackWrap = el("div", { class: "stack-wrap" }, stackCanvas, stackMarks);
  var stackWindow = el("span", { class: "matches", id: "stack-window" });
  var stackPicked = el("span", { class: "picked", id: "stack-selected" });
  var stackNote = el("p", { class: "note", id: "stack-note", hidden: true, text: "No samples on the timeline: nothing ran that the stack chart could show." });
  views.stack.append(
    el(
      "div",
      { class: "toolbar" },
      el("span", { class: "seg" }, el("button", { id: "stack-zoom-in", title: "Zoom in (+)", text: "+", onclick: () => stackZoom(1 / 1.5) }), el("button", { id: "stack-zoom-out", title: "Zoom out (−)", text: "−", onclick: () => stackZoom(1.5) }), el("button", { id: "stack-fit", title: "Back to the time range (0)", text: "Fit", onclick: () => stackFit() })),
      stackWindow,
      stackPicked,
      el("span", { class: "hint", text: "Wheel or +/− to zoom, drag or arrow keys to pan, click a frame to select its function." })
    ),
    stackNote,
    stackWrap
  );
  function stackSections() {
    const out = [];
    let y = 0;
    for (const lane of stackLevels()) {
      if (state.thread >= 0 && lane.t !== state.thread) continue;
      const rows = Math.max(1, lane.levels.length);
      out.push({ lane, y, rows });
      y += rows * SC.row + SC.gap;
    }
    return { sections: out, height: y };
  }
  function stackGeometry() {
    const width = Math.max(320, stackCanvas.clientWidth || stackWrap.clientWidth || 1e3);
    const head = (stackMarks ? SC.marks : 0) + SC.axis;
    let left = SC.left, plot = width - SC.left - SC.pad;
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
  var scX = (g, slot) => g.left + (slot - sc.t0) / (sc.t1 - sc.t0) * g.plot;
  var scSlot = (g, x) => sc.t0 + (x - g.left) / g.plot * (sc.t1 - sc.t0);
  function stackFollow() {
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
  tlCanvas.addEventListener("pointerup", (e) => state.tab === "stack" && (sc.pending = Math.min(e.timeStamp, performance.now())), true);
  var scFrame = 0;
  function stackSoon(e) {
    if (!sc.pending) sc.pending = e && e.timeStamp ? Math.min(e.timeStamp, performance.now()) : performance.now();
    if (!scFrame) scFrame = requestAnimationFrame(() => {
      scFrame = 0;
      drawStack();
    });
  }
  function drawStack() {
    const t0 = performance.now();
    const g = sc.geo = stackGeometry();
    const empty = lanes.length === 0;
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
    const known = test ? new Int8Array(nF) : null;
    const match = test && ((f) => (known[f] || (known[f] = test(f) ? 1 : 2)) === 1);
    sc.picked = stackPickedFn();
    const ROWH = SC.row;
    let drawn = 0;
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
      const name = threadName[sec.lane.t];
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
      for (let d = first; d < last; d++) drawn += drawLevel(ctx, g, sec.lane.levels[d], y0 + d * ROWH, match);
      ctx.restore();
    }
    if (state.range) {
      const a = Math.max(g.left, scX(g, state.range[0])), b = Math.min(g.left + g.plot, scX(g, state.range[1]));
      ctx.fillStyle = "rgba(29, 35, 48, 0.18)";
      if (a > g.left) ctx.fillRect(g.left, g.head, Math.min(a, g.left + g.plot) - g.left, viewH);
      if (b < g.left + g.plot) ctx.fillRect(Math.max(b, g.left), g.head, g.left + g.plot - Math.max(b, g.left), viewH);
    }
    if (g.content > viewH) {
      const h = Math.max(16, viewH * viewH / g.content), y = g.head + sc.top / g.content * viewH;
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
  function drawLevel(ctx, g, lv, y, match) {
    const n = lv.start.length;
    const right = g.left + g.plot;
    const perPx = (sc.t1 - sc.t0) / g.plot;
    let i = endAfter(lv.end, sc.t0), count = 0;
    let dustFrom = 0, dustTo = 0, dustColour = null;
    const dust = () => {
      if (dustColour === null) return;
      ctx.fillStyle = dustColour;
      ctx.fillRect(dustFrom, y + 0.5, dustTo - dustFrom, SC.row - 1);
      dustColour = null;
    };
    while (i < n && lv.start[i] < sc.t1) {
      const f = nodeFn[lv.node[i]];
      const dim = match && !match(f) || state.hideIdle && derived.hiddenFn[f] === 1;
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
  function placeStackMarks(g) {
    if (!stackMarks) return;
    stackMarks.style.height = `${g.height}px`;
    const drawn = [];
    for (const [at, label] of marks) {
      const slot = at * HZ;
      if (slot < sc.t0 || slot > sc.t1) continue;
      const x = Math.round(scX(g, slot));
      const last = drawn[drawn.length - 1];
      if (last && x - last.x < MARK_GAP) last.more += 1;
      else drawn.push({ x, at, label, more: 0 });
    }
    stackMarks.classList.toggle("dense", drawn.length > g.plot / 24);
    stackMarks.replaceChildren(
      ...drawn.map(({ x, at, label, more }, i) => {
        const room = (i + 1 < drawn.length ? drawn[i + 1].x : g.left + g.plot + 8) - x - 6;
        const chars = Math.floor(room / 6.5);
        const shown = label.length <= chars ? label : chars > 1 ? `${label.slice(0, chars - 1)}…` : "";
        const title2 = `${label} — ${fmtSeconds(at)}${more ? ` (and ${grouped(more)} more mark${more > 1 ? "s" : ""} right after it)` : ""}`;
        const mark = el("div", { class: "mark", "data-at": at, "data-label": label, "data-count": 1 + more, title: title2 }, shown ? el("span", { class: "label", text: shown }) : null);
        mark.style.left = `${x}px`;
        return mark;
      })
    );
  }
  function stackHit(x, y) {
    const g = sc.geo;
    if (!g || x < g.left || x > g.left + g.plot || y < g.head || y > g.height) return null;
    const cy = y - g.head + sc.top;
    const sec = g.sections.find((s) => cy >= s.y && cy < s.y + s.rows * SC.row);
    if (!sec) return null;
    const d = Math.floor((cy - sec.y) / SC.row);
    const lv = sec.lane.levels[d];
    if (!lv) return null;
    const slot = scSlot(g, x), half = 0.5 * (sc.t1 - sc.t0) / g.plot;
    let i = endAfter(lv.end, slot);
    if (!(i < lv.start.length && lv.start[i] <= slot)) {
      i = endAfter(lv.end, slot - half);
      if (!(i < lv.start.length && lv.start[i] <= slot + half)) return null;
    }
    return { t: sec.lane.t, depth: d + 1, node: lv.node[i], start: lv.start[i], end: lv.end[i] };
  }
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
  function stackPickedFn() {
    const f = state.selected;
    return f >= 0 && f < nF && state.search === fnName[f] ? f : -1;
  }
  function stackSelect(f, e) {
    const was = stackPickedFn();
    if (f < 0 && was < 0) return;
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
      else if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) stackPan(e.deltaX * unit * (sc.t1 - sc.t0) / sc.geo.plot, 0, e);
      else stackZoom(Math.exp(e.deltaY * unit * 2e-3), e.offsetX, e);
    },
    { passive: false }
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
      sc.t0 = Math.min(Math.max(0, d.t0 - dx / sc.geo.plot * span), SLOTS - span);
      sc.t1 = sc.t0 + span;
      sc.top = d.top - dy;
      stackSoon(e);
      return;
    }
    const hit = stackHit(e.offsetX, e.offsetY);
    if (hit) stackTip(hit, e.clientX, e.clientY);
    else tip.hidden = true;
  });
  stackCanvas.addEventListener("pointerup", (e) => {
    const d = sc.drag;
    sc.drag = null;
    if (!d || d.moved) return;
    const hit = stackHit(e.offsetX, e.offsetY);
    stackSelect(hit ? nodeFn[hit.node] : -1, e);
  });
  stackCanvas.addEventListener("pointerleave", () => {
    if (!sc.drag) tip.hidden = true;
  });
  document.addEventListener("keydown", (e) => {
    if (state.tab !== "stack" || e.altKey || e.ctrlKey || e.metaKey || /** @type {Element} */
    e.target.closest && /** @type {Element} */
    e.target.closest("input, select, textarea")) return;
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
      Escape: () => stackSelect(-1, e)
    };
    const act = keys[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  });
  searchBox.addEventListener("input", () => dirty.add("stack"));
  window.addEventListener("resize", () => {
    dirty.add("stack");
    if (state.tab === "stack") setTimeout(renderActive, 90);
  });
  var stackHooks = {
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
    stackHit
  };

  // rokuprof/export/report/assets/src/calltree.js
  function renderTree() {
    const v = views.tree;
    v.replaceChildren();
    const m = state.metric;
    v.append(el("p", { class: "note", text: `Each row is a call path; expand a row to see what it called. Sorting orders siblings. The flame graph's metric (${METRIC[m].label.toLowerCase()}) picks which branches open first.` }));
    if (!facts.memoryOps) v.append(el("p", { class: "note nomem", text: `${NO_MEMORY}: no allocation or live-heap columns.` }));
    const cols = [
      { key: "name", label: "Function", text: true, get: (n) => nodeLabel(n) },
      { key: "total:wall", label: "Total wall", get: (n) => total.wall[n], fmt: fmtWall, bar: true },
      { key: "self:wall", label: "Self wall", get: (n) => self.wall[n], fmt: fmtWall },
      { key: "total:cpu", label: "Total CPU", title: CPU_TITLE, get: (n) => total.cpu[n], fmt: fmtCpu },
      { key: "self:cpu", label: "Self CPU", title: CPU_TITLE, get: (n) => self.cpu[n], fmt: fmtCpu },
      { key: "self:calls", label: "Calls", title: "How often the function was called on this call path", get: (n) => self.calls[n], fmt: fmtCount },
      ...facts.memoryOps ? [
        { key: "total:allocBytes", label: "Alloc bytes", title: "Bytes allocated on this call path and below", get: (n) => total.allocBytes[n], fmt: fmtBytes },
        { key: "total:liveBytes", label: "Live at end", title: "Bytes allocated on this call path and below still live at the end", get: (n) => total.liveBytes[n], fmt: fmtBytes }
      ] : [],
      { key: "loc", label: "Location", text: true, get: (n) => nodeFn[n] >= 0 ? fnWhere(nodeFn[n]) : "", render: (td, n) => {
        if (nodeFn[n] < 0) return;
        td.append(shortWhereLink(nodeFn[n]));
        td.title = fnWhere(nodeFn[n]);
      } }
    ];
    const sortState = state.sort.tree;
    const col = cols.find((c) => c.key === sortState.key) || cols[1];
    const roots = threadRoots();
    if (state.expanded.size === 0) {
      for (const r of roots) {
        let n = r;
        for (let d = 0; d < 4 && n >= 0; d++) {
          state.expanded.add(n);
          const ks = kids[n].filter((k) => total[m][k] > 0).sort((a, b) => total[m][b] - total[m][a]);
          n = ks.length ? ks[0] : -1;
        }
      }
    }
    const thead = el("tr");
    for (const c of cols) {
      const th = el("th", { class: c.text ? "text" : null, "data-key": c.key, title: c.title || null, "aria-sort": c.key === col.key ? sortState.dir < 0 ? "descending" : "ascending" : null, text: c.label });
      th.addEventListener("click", () => {
        if (sortState.key === c.key) sortState.dir = -sortState.dir;
        else {
          sortState.key = c.key;
          sortState.dir = c.text ? 1 : -1;
        }
        renderTree();
      });
      thead.append(th);
    }
    const tbody = el("tbody");
    const cmp = (a, b) => {
      const va = col.get(a), vb = col.get(b);
      const d = typeof va === "string" ? va.localeCompare(vb) : va - vb;
      return d * sortState.dir || a - b;
    };
    const maxWall = Math.max(1e-12, ...roots.map((r) => total.wall[r]));
    let count = 0;
    const LIMIT = 3e3, MAX_INDENT = 40;
    const row = (n, d) => {
      count++;
      const open = state.expanded.has(n);
      const ks = kids[n].filter((k) => COLS.some((c) => total[c][k] > 0));
      const tr = el("tr", { "data-node": n, "data-depth": d, class: isSelected(nodeFn[n]) ? "selected" : null });
      for (const c of cols) {
        const v2 = c.get(n);
        const td = el("td", { class: c.key === "name" ? "text fn" : c.key === "loc" ? "text loc" : null, "data-key": c.key });
        if (c.key === "name") {
          td.style.paddingLeft = `${8 + Math.min(d, MAX_INDENT) * 16}px`;
          if (d > MAX_INDENT) td.append(el("span", { class: "depth", title: "Call depth", text: `${d} ` }));
          const tog = el("span", { class: "toggle", text: ks.length ? open ? "▾" : "▸" : "" });
          td.append(tog);
          if (nodeFn[n] >= 0) td.append(swatchFor(nodeFn[n]));
          td.append(text(v2));
          td.title = v2;
          if (ks.length)
            td.addEventListener("click", () => {
              if (open) state.expanded.delete(n);
              else state.expanded.add(n);
              renderTree();
            });
          td.style.cursor = ks.length ? "pointer" : "default";
        } else if (c.text) {
          if (c.render) c.render(td, n);
          else td.textContent = v2;
          td.title = v2;
        } else {
          td.textContent = c.fmt(v2);
          td.setAttribute("data-value", String(v2));
          td.title = Number.isInteger(v2) ? grouped(v2) : String(v2);
          if (c.bar && v2 > 0) {
            td.classList.add("bar");
            td.style.backgroundImage = `linear-gradient(to left, var(--bar) ${(100 * v2 / maxWall).toFixed(1)}%, transparent 0)`;
          }
        }
        tr.append(td);
      }
      tbody.append(tr);
      return open ? ks.sort(cmp) : [];
    };
    const stack = roots.slice().sort(cmp).reverse().map((r) => [r, 0]);
    while (stack.length && count < LIMIT) {
      const [n, d] = stack.pop();
      if (!COLS.some((c) => total[c][n] > 0)) continue;
      const open = row(n, d);
      for (let i = open.length - 1; i >= 0; i--) stack.push([open[i], d + 1]);
    }
    const wrap = el("div", { class: "tablewrap" }, el("table", { class: "data", id: "calltree" }, el("thead", null, thead), tbody));
    if (count >= LIMIT) wrap.append(el("div", { class: "more", text: `Showing the first ${LIMIT} rows; collapse branches to see more.` }));
    v.append(
      el("div", { class: "toolbar" }, el("button", { class: "btn", text: "Collapse all", onclick: () => {
        state.expanded = new Set(roots);
        renderTree();
      } }), el("button", { class: "btn", text: "Expand all", onclick: () => {
        for (let n = 0; n < N; n++) if (roots.includes(nodeThread[n])) state.expanded.add(n);
        renderTree();
      } })),
      wrap
    );
  }

  // rokuprof/export/report/assets/src/functions.js
  var fnFilterBox = el("input", { type: "search", id: "fn-filter", placeholder: "Filter by name or file" });
  fnFilterBox.addEventListener("input", () => {
    state.fnFilter = fnFilterBox.value;
    dirty.add("functions");
    renderActive();
  });
  function fnRows() {
    const q = state.fnFilter.trim().toLowerCase();
    const rows = [];
    for (let f = 0; f < nF; f++) {
      if (!visibleFn(f)) continue;
      if (q && !fnName[f].toLowerCase().includes(q) && !fnFile[f].toLowerCase().includes(q)) continue;
      if (!COLS.some((c) => fnTotal[c][f] || fnSelf[c][f])) continue;
      rows.push(f);
    }
    return rows;
  }
  function renderFunctions() {
    const v = views.functions;
    v.replaceChildren();
    const rows = fnRows();
    const wallAll = threadRoots().reduce((s, t) => s + total.wall[t], 0);
    const cols = [
      { key: "function", label: "Function", text: true, cls: "fn", get: (f) => fnName[f], render: (td, f) => {
        td.append(swatchFor(f), clip(fnName[f], "name"));
        td.title = fnName[f];
      } },
      { key: "module", label: "Thread", text: true, get: (f) => threadName[fnThread[f]], render: (td, f) => {
        td.append(clip(threadName[fnThread[f]], "thread"));
        td.title = threadName[fnThread[f]];
      } },
      { key: "selfWall", label: "Self wall", get: (f) => fnSelf.wall[f], fmt: fmtWall, bar: true },
      { key: "selfPct", label: "Self %", title: "Self wall time, share of the run's wall time", get: (f) => wallAll ? 100 * fnSelf.wall[f] / wallAll : 0, fmt: (v2) => `${v2.toFixed(1)}%`, exact: false },
      { key: "totalWall", label: "Total wall", get: (f) => fnTotal.wall[f], fmt: fmtWall },
      { key: "selfCpu", label: "Self CPU", get: (f) => fnSelf.cpu[f], fmt: fmtCpu, title: CPU_TITLE },
      { key: "totalCpu", label: "Total CPU", get: (f) => fnTotal.cpu[f], fmt: fmtCpu, title: CPU_TITLE },
      { key: "calls", label: "Calls", get: (f) => fnSelf.calls[f], fmt: fmtCount },
      { key: "perCall", label: "Wall/call", title: "Total wall time per call", get: (f) => fnSelf.calls[f] ? fnTotal.wall[f] / fnSelf.calls[f] : 0, fmt: (v2) => v2 ? fmtWall(v2) : "–", exact: false },
      ...facts.memoryOps ? [
        { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
        { key: "allocBytes", label: "Alloc bytes", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes },
        { key: "frees", label: "Frees", title: "Frees and realloc frees made by the function", get: (f) => fnSelf.frees[f] + fnSelf.reallocs[f], fmt: fmtCount },
        { key: "liveBytes", label: "Live at end", title: "Bytes it allocated that were still live at the end", get: (f) => fnSelf.liveBytes[f], fmt: fmtBytes }
      ] : [],
      { key: "file", label: "File", text: true, cls: "loc", get: (f) => fnWhere(f), render: (td, f) => {
        td.append(EDITOR ? el("a", { class: "src", href: editorHref(fnFile[f], fnLine[f]) }, clip(fnWhere(f), "path")) : clip(fnWhere(f), "path"));
        td.title = fnWhere(f);
      } }
    ];
    v.append(
      el("div", { class: "toolbar" }, fnFilterBox, el("span", { class: "matches", id: "fn-count", text: `${rows.length} function${rows.length === 1 ? "" : "s"}` })),
      ...facts.memoryOps ? [] : [el("p", { class: "note nomem", text: `${NO_MEMORY}: no allocation, free or live-heap columns.` })],
      dataTable("functions", cols, rows, state.sort.functions, renderFunctions, 1e3, (f) => ({ "data-fn": f, class: isSelected(f) ? "selected" : null }))
    );
  }

  // rokuprof/export/report/assets/src/diff.js
  function fillAbTop(box) {
    const list = (id, heading, rows) => {
      const body = el("tbody");
      for (const [i, figure, line] of rows) {
        const t = topRow(DF, S, [i, figure, line], DIFF_FMT, SAME_PCT);
        const chip = el("span", { class: `chg ${t.kind}` });
        chip.style.background = t.colour;
        const show = () => {
          state.fnFilter = fnFilterBox.value = t.function;
          state.diffFigure = figure;
          dirty.add("functions");
          setTab("functions");
          views.functions.scrollIntoView({ block: "start" });
        };
        body.append(el(
          "tr",
          { "data-row": i, "data-function": t.function, "data-figure": figure, tabindex: 0, title: `${t.function} (${t.module}) in ${t.file}: show it in Functions`, onclick: show, onkeydown: (e) => e.key === "Enter" && show() },
          el("td", { class: "text fn" }, el("b", { text: t.function }), el("span", { class: "loc", text: t.where })),
          el("td", { class: "text", text: t.label }),
          el("td", { text: t.a }),
          el("td", { text: t.b }),
          el("td", { text: t.delta }),
          el("td", null, chip, text(t.pct))
        ));
      }
      const head = el("tr", null, ...["Function", "Figure", "A", "B", "Δ", "Δ%"].map((h, k) => el("th", { class: k < 2 ? "text" : null, text: h })));
      return el(
        "div",
        { class: "ab-list", id },
        el("h2", { text: heading }),
        rows.length ? el("table", { class: "data compact" }, el("thead", null, head), body) : el("p", { class: "note", text: "none" })
      );
    };
    box.append(
      list("ab-regressions", "Top regressions", DF.top.regressions),
      list("ab-improvements", "Top improvements", DF.top.improvements)
    );
  }
  if (DF) fillAbTop(abTop);
  function quadColumns(prefix, label, kind, q) {
    const f = DIFF_FMT[kind];
    const orZero = (v) => v === null ? 0 : v;
    return [
      { key: `${prefix}a`, label: `${label} A`, get: (r) => orZero(q(r)[0]), value: (r) => q(r)[0], render: (td, r) => td.textContent = q(r)[0] === null ? "–" : f(q(r)[0]) },
      { key: `${prefix}b`, label: `${label} B`, get: (r) => orZero(q(r)[1]), value: (r) => q(r)[1], render: (td, r) => td.textContent = q(r)[1] === null ? "–" : f(q(r)[1]) },
      { key: `${prefix}d`, label: "Δ", title: `${label}: B − A`, get: (r) => q(r)[2], render: (td, r) => td.textContent = signed(q(r)[2], f) },
      {
        key: `${prefix}p`,
        label: "Δ%",
        title: `${label}: (B − A) / A`,
        exact: false,
        get: (r) => {
          const x = q(r), k = changeKind(x);
          return k === "new" ? 1e300 : x[3] === null ? 0 : x[3];
        },
        value: (r) => q(r)[3],
        render: (td, r) => {
          const x = q(r), k = changeKind(x);
          const chip = el("span", { class: `chg ${k}`, "data-kind": k });
          chip.style.background = changeColour(x);
          td.append(chip, text(fmtPct(x)));
          td.dataset.kind = k;
        }
      }
    ];
  }
  var diffNote = (v, what) => v.append(el("p", { class: "note", text: `${what} ${DF.label}: A, B, the change (Δ = B − A) and Δ% = Δ / A; "new" only in B, "gone" only in A. Both runs whole (a time range on the timeline applies to B's views only). ${diffBasis()}` }));
  var diffThreadOk = (thread) => state.thread < 0 || S[thread] === threadName[state.thread];
  var diffWaitOk = (name) => !(state.hideIdle && state.waits.has(S[name]));
  var diffFilter = (...ids) => {
    const q = state.fnFilter.trim().toLowerCase();
    return !q || ids.some((i) => S[i].toLowerCase().includes(q));
  };
  var STATUS_LABEL = { added: "new (only in B)", removed: "gone (only in A)", changed: "changed", same: "same" };
  function renderDiffFunctions() {
    const v = views.functions;
    v.replaceChildren();
    const figure = state.diffFigure;
    const fi = DF.metrics.indexOf(figure);
    const [, figureLabel, figureKind] = DIFF_FIGURES.find(([k]) => k === figure);
    const rows = [];
    DF.functions.forEach((r, i) => {
      if (diffThreadOk(r[0]) && diffWaitOk(r[1]) && diffFilter(r[1], r[2])) rows.push(i);
    });
    const figSelect = el("select", { id: "diff-figure", "aria-label": "Figure", onchange: (e) => {
      state.diffFigure = e.target.value;
      renderDiffFunctions();
    } });
    for (const [k, label] of DIFF_FIGURES) figSelect.append(el("option", { value: k, text: label, selected: k === figure }));
    const row = (i) => DF.functions[i];
    const cols = [
      { key: "rank", label: "#", title: "Order of rokuprof diff: largest change of a function's own figures first", get: (i) => i + 1, fmt: String },
      { key: "function", label: "Function", text: true, cls: "fn", get: (i) => S[row(i)[1]], render: (td, i) => {
        td.append(clip(S[row(i)[1]], "name"));
        td.title = S[row(i)[1]];
      } },
      { key: "module", label: "Thread", text: true, get: (i) => S[row(i)[0]], render: (td, i) => {
        td.append(clip(S[row(i)[0]], "thread"));
        td.title = S[row(i)[0]];
      } },
      { key: "status", label: "Status", text: true, get: (i) => STATUS_LABEL[row(i)[3]] || row(i)[3] },
      ...quadColumns("", figureLabel, figureKind, (i) => row(i)[4][fi]),
      { key: "file", label: "File", text: true, cls: "loc", get: (i) => S[row(i)[2]], render: (td, i) => {
        td.append(clip(S[row(i)[2]], "path"));
        td.title = S[row(i)[2]];
      } }
    ];
    v.append(el("div", { class: "toolbar" }, fnFilterBox, el("label", null, "Figure ", figSelect), el("span", { class: "matches", id: "fn-count", text: `${rows.length} function${rows.length === 1 ? "" : "s"}` })));
    diffNote(v, "Functions,");
    v.append(dataTable("diff-functions", cols, rows, state.sort.diffFunctions, renderDiffFunctions, 1e3, (i) => ({ "data-row": i, "data-module": S[row(i)[0]], "data-function": S[row(i)[1]], "data-file": S[row(i)[2]], "data-kind": changeKind(row(i)[4][fi]) })));
  }
  function renderDiffLines() {
    const v = views.lines;
    v.replaceChildren();
    const rows = [];
    DF.lines.forEach((r, i) => {
      if (diffThreadOk(r[0]) && diffWaitOk(r[1]) && diffFilter(r[1], r[2])) rows.push(i);
    });
    const row = (i) => DF.lines[i];
    const cpu = DF.lineMetrics.indexOf("cpu"), wall = DF.lineMetrics.indexOf("wall");
    v.append(el("h2", { class: "section", text: "Source lines: the CPU and wall time of each function's own code per line, in A and B" }));
    diffNote(v, "Lines,");
    if (!DF.lines.length) v.append(el("p", { class: "note", text: "Neither capture has line data (bsprof_enable_lines=1 in the app's manifest)." }));
    v.append(
      dataTable("diff-lines", [
        { key: "rank", label: "#", title: "Largest change of CPU first (as rokuprof diff --json lists the lines)", get: (i) => i + 1, fmt: String },
        { key: "function", label: "Function", text: true, cls: "fn", get: (i) => S[row(i)[1]], render: (td, i) => {
          td.append(clip(S[row(i)[1]], "name"));
          td.title = S[row(i)[1]];
        } },
        { key: "line", label: "Line", get: (i) => row(i)[3], fmt: String },
        ...quadColumns("cpu:", "CPU", "cpu", (i) => row(i)[5][cpu]),
        ...quadColumns("wall:", "Wall", "wall", (i) => row(i)[5][wall]),
        { key: "module", label: "Thread", text: true, get: (i) => S[row(i)[0]], render: (td, i) => {
          td.append(clip(S[row(i)[0]], "thread"));
          td.title = S[row(i)[0]];
        } },
        { key: "file", label: "File", text: true, cls: "loc", get: (i) => S[row(i)[2]], render: (td, i) => {
          td.append(clip(S[row(i)[2]], "path"));
          td.title = S[row(i)[2]];
        } }
      ], rows, state.sort.diffLines, renderDiffLines, 100, (i) => ({ "data-row": i, "data-module": S[row(i)[0]], "data-function": S[row(i)[1]], "data-file": S[row(i)[2]], "data-line": row(i)[3], "data-kind": changeKind(row(i)[5][cpu]) }))
    );
  }
  function renderDiffSites() {
    const v = views.memory;
    v.replaceChildren();
    const rows = [];
    DF.sites.forEach((r, i) => {
      const leaf = r[1][r[1].length - 2];
      if (diffThreadOk(r[0]) && diffWaitOk(leaf)) rows.push(i);
    });
    const row = (i) => DF.sites[i];
    const bytes = DF.siteMetrics.indexOf("live_bytes"), blocks = DF.siteMetrics.indexOf("live_count");
    const names = (i) => {
      const p = row(i)[1], out = [];
      for (let k = 0; k < p.length; k += 2) out.push(S[p[k]]);
      return out;
    };
    v.append(el("h2", { class: "section", text: "Leak sites: memory still allocated at the end, by the call path that allocated it, in A and B" }));
    diffNote(v, "Leak sites,");
    if (!DF.sites.length) v.append(el("p", { class: "note", text: `Nothing was still live at the end in either capture (or neither has memory data: ${NO_MEMORY}).` }));
    v.append(
      dataTable("diff-leaks", [
        { key: "rank", label: "#", title: "Largest change of live bytes first (as rokuprof diff --json lists the leak sites)", get: (i) => i + 1, fmt: String },
        { key: "fn", label: "Allocated by", text: true, cls: "fn", get: (i) => names(i).at(-1) },
        ...quadColumns("bytes:", "Live bytes", "bytes", (i) => row(i)[3][bytes]),
        ...quadColumns("blocks:", "Blocks", "blocks", (i) => row(i)[3][blocks]),
        { key: "module", label: "Thread", text: true, get: (i) => S[row(i)[0]] },
        {
          key: "path",
          label: "Call path (root › … › allocating function)",
          text: true,
          get: (i) => names(i).join(" › "),
          render: (td, i) => {
            const ns = names(i);
            ns.forEach((n, k) => {
              if (k) td.append(text(" › "));
              td.append(k === ns.length - 1 ? el("b", { text: n }) : text(n));
            });
          }
        }
      ], rows, state.sort.diffSites, renderDiffSites, 200, (i) => ({ "data-row": i, "data-module": S[row(i)[0]], "data-function": names(i).at(-1), "data-kind": changeKind(row(i)[3][bytes]) }))
    );
  }
  function renderDiffTree() {
    const v = views.tree;
    v.replaceChildren();
    const m = state.metric;
    const f = DIFF_FMT[TREE_FMT[m]];
    const F = DF.tree.figures[m];
    const seg = el("span", { class: "seg", id: "tree-metric", role: "group", "aria-label": "Figure" });
    for (const x of METRICS) seg.append(el("button", { "data-metric": x.key, "aria-pressed": x.key === m ? "true" : "false", text: x.label, onclick: () => setMetric(x.key) }));
    v.append(el(
      "div",
      { class: "toolbar" },
      seg,
      el("button", { class: "btn", text: "Collapse all", onclick: () => {
        DT.expanded = /* @__PURE__ */ new Set();
        renderDiffTree();
      } }),
      el("button", { class: "btn", text: "Expand all", onclick: () => {
        for (let i = 0; i < DT.n; i++) DT.expanded.add(i);
        renderDiffTree();
      } })
    ));
    diffNote(v, "Call tree,");
    const roots = DT.roots.filter((r) => diffThreadOk(DF.tree.thread[r]));
    const absD = (i) => Math.abs(F.d[i]);
    if (!DT.expanded) {
      DT.expanded = /* @__PURE__ */ new Set();
      for (const r of roots) {
        let n = r;
        for (let d = 0; d < 6 && n >= 0; d++) {
          DT.expanded.add(n);
          const ks = DT.kids[n].filter((k) => F.d[k]).sort((a, b) => absD(b) - absD(a) || a - b);
          n = ks.length ? ks[0] : -1;
        }
      }
    }
    const q = (i) => [F.a[i], F.b[i], F.d[i], F.p[i]];
    const orZero = (x) => x === null ? 0 : x;
    const cols = [
      { key: "name", label: "Function", text: true, get: (i) => treeLabel(i) },
      ...quadColumns("", `Total ${METRIC[m].label.toLowerCase()}`, TREE_FMT[m], q),
      { key: "selfA", label: "Self A", get: (i) => orZero(F.selfA[i]), value: (i) => F.selfA[i], render: (td, i) => td.textContent = F.selfA[i] === null ? "–" : f(F.selfA[i]) },
      { key: "selfB", label: "Self B", get: (i) => orZero(F.selfB[i]), value: (i) => F.selfB[i], render: (td, i) => td.textContent = F.selfB[i] === null ? "–" : f(F.selfB[i]) },
      { key: "loc", label: "File", text: true, get: (i) => DF.tree.file[i] >= 0 ? S[DF.tree.file[i]] : "" }
    ];
    const sortState = state.sort.diffTree;
    const col = cols.find((c) => c.key === sortState.key) || cols[3];
    const cmp = (a, b) => {
      const va = col.get(a), vb = col.get(b);
      const d = typeof va === "string" ? va.localeCompare(vb) : sortState.key === "d" ? Math.abs(va) - Math.abs(vb) : va - vb;
      return d * sortState.dir || a - b;
    };
    const thead = el("tr");
    for (const c of cols) {
      const th = el("th", { class: c.text ? "text" : null, "data-key": c.key, title: c.title || (c.key === "d" ? "Sorted by the size of the change" : null), "aria-sort": c.key === col.key ? sortState.dir < 0 ? "descending" : "ascending" : null, text: c.label });
      th.addEventListener("click", () => {
        if (sortState.key === c.key) sortState.dir = -sortState.dir;
        else {
          sortState.key = c.key;
          sortState.dir = c.text ? 1 : -1;
        }
        renderDiffTree();
      });
      thead.append(th);
    }
    const tbody = el("tbody");
    let count = 0;
    const LIMIT = 3e3, MAX_INDENT = 40;
    const stack = roots.slice().sort(cmp).reverse();
    while (stack.length && count < LIMIT) {
      const n = stack.pop();
      if (!DT.any[n]) continue;
      count++;
      const d = DT.depth[n];
      const ks = DT.kids[n].filter((k) => DT.any[k]);
      const open = DT.expanded.has(n);
      const x = q(n);
      const tr = el("tr", { "data-tnode": n, "data-depth": d, "data-kind": changeKind(x), "data-thread": S[DF.tree.thread[n]], "data-function": DF.tree.name[n] >= 0 ? S[DF.tree.name[n]] : "" });
      for (const c of cols) {
        const td = el("td", { class: c.key === "name" ? "text fn" : c.key === "loc" ? "text loc" : null, "data-key": c.key });
        if (c.key === "name") {
          td.style.paddingLeft = `${8 + Math.min(d, MAX_INDENT) * 16}px`;
          if (d > MAX_INDENT) td.append(el("span", { class: "depth", title: "Call depth", text: `${d} ` }));
          td.append(el("span", { class: "toggle", text: ks.length ? open ? "▾" : "▸" : "" }), text(treeLabel(n)));
          td.title = treeLabel(n);
          if (ks.length) {
            td.style.cursor = "pointer";
            td.addEventListener("click", () => {
              if (DT.expanded.has(n)) DT.expanded.delete(n);
              else DT.expanded.add(n);
              renderDiffTree();
            });
          }
        } else if (c.text) {
          td.textContent = c.get(n);
          td.title = td.textContent;
        } else {
          if (c.render) c.render(td, n);
          const val = c.value ? c.value(n) : c.get(n);
          if (val !== null) td.setAttribute("data-value", String(val));
        }
        tr.append(td);
      }
      tbody.append(tr);
      if (open) {
        const sorted = ks.sort(cmp);
        for (let i = sorted.length - 1; i >= 0; i--) stack.push(sorted[i]);
      }
    }
    const wrap = el("div", { class: "tablewrap" }, el("table", { class: "data", id: "diff-calltree" }, el("thead", null, thead), tbody));
    if (count >= LIMIT) wrap.append(el("div", { class: "more", text: `Showing the first ${LIMIT} rows; collapse branches to see more.` }));
    v.append(wrap);
  }

  // rokuprof/export/report/assets/src/linefigures.js
  function lineFigures() {
    if (derived.lineCache && derived.lineCache.thread === state.thread) return derived.lineCache;
    const factor = (p) => derived.rangeFactor ? derived.rangeFactor[pathNode[p]] : 1;
    const cpu = /* @__PURE__ */ new Map(), alloc = /* @__PURE__ */ new Map();
    const L = D.lines;
    for (let i = 0; i < L.length; i += 4) {
      const p = L[i], f = nodeFn[pathNode[p]];
      if (!visibleFn(f)) continue;
      const k = factor(p);
      if (!k) continue;
      let m = cpu.get(f);
      if (!m) cpu.set(f, m = /* @__PURE__ */ new Map());
      const cur = m.get(L[i + 1]) || [0, 0];
      cur[0] += L[i + 2] * k;
      cur[1] += L[i + 3] * k;
      m.set(L[i + 1], cur);
    }
    const A = D.allocLines || [];
    for (let i = 0; i < A.length; i += 4) {
      const p = A[i], f = nodeFn[pathNode[p]];
      if (!visibleFn(f)) continue;
      const k = factor(p);
      if (!k) continue;
      let m = alloc.get(f);
      if (!m) alloc.set(f, m = /* @__PURE__ */ new Map());
      const cur = m.get(A[i + 1]) || { line: A[i + 1], count: 0, bytes: 0 };
      cur.count += A[i + 2] * k;
      cur.bytes += A[i + 3] * k;
      m.set(A[i + 1], cur);
    }
    derived.lineCache = { thread: state.thread, cpu, alloc };
    return derived.lineCache;
  }

  // rokuprof/export/report/assets/src/source.js
  var SRC_FILES = SRC ? SRC.files : [];
  var SRC_FNS = new Map((SRC ? SRC.fns : []).map((r) => [r[0], { fn: r[0], file: r[1], first: r[2], last: r[3], note: r[4] }]));
  var HOT_LINES = 3;
  var source = { picked: -1, seen: -1, ms: 0 };
  function sourceLine(file, n) {
    for (const [first, lines] of SRC_FILES[file][2]) if (n >= first && n < first + lines.length) return lines[n - first];
    return null;
  }
  function sourceButton(f) {
    const r = SRC_FNS.get(f);
    if (!r || r.note || !tabButtons.source) return null;
    return el("button", { class: "btn src-open", "data-fn": f, title: "Show this function's source with its figures per line", text: "Source", onclick: () => showSource(f) });
  }
  function showSource(f) {
    source.picked = f;
    dirty.add("source");
    setTab("source");
  }
  function sourceFns() {
    return [...SRC_FNS.values()].filter((r) => visibleFn(r.fn)).sort((a, b) => fnSelf.cpu[b.fn] - fnSelf.cpu[a.fn] || fnSelf.wall[b.fn] - fnSelf.wall[a.fn] || a.fn - b.fn);
  }
  function renderSource() {
    const t0 = performance.now();
    const v = views.source;
    v.replaceChildren();
    const fns = sourceFns();
    const byNote = /* @__PURE__ */ new Map();
    for (const [file, note] of SRC_FILES) if (note) byNote.set(note, [...byNote.get(note) || [], S[file]]);
    const notes = [...byNote.entries()].map(([note, files]) => `${note}: ${files.join(", ")}`);
    v.append(el("p", { class: "note", id: "source-about" }, text(`Source from ${SRC.label}: the hot functions (most self CPU, wall time or allocated bytes), each line with its figures in this selection; the ${HOT_LINES} hottest lines of a function are marked.`)));
    if (!facts.lineData) notes.unshift("This capture has no line data, so no figures per line: build the app with bsprof_enable_lines=1 (rokuprof profile --lines)");
    for (const n of [...SRC.notes, ...notes]) v.append(el("p", { class: "note src-note", text: n }));
    if (!fns.length) {
      v.append(el("p", { class: "note", text: "No function with source in this selection." }));
      return;
    }
    if (isSelected(state.selected) && state.selected !== source.seen && SRC_FNS.has(state.selected) && visibleFn(state.selected)) source.picked = state.selected;
    source.seen = state.selected;
    if (!fns.some((r) => r.fn === source.picked)) source.picked = fns[0].fn;
    const list = el("ol", { class: "src-fns", id: "src-fns" });
    const pane = el("div", { class: "src-pane", id: "src-pane" });
    for (const r of fns) {
      const f = r.fn;
      list.append(
        el(
          "li",
          { "data-fn": f, class: f === source.picked ? "picked" : null, onclick: () => pickSource(f, list, pane) },
          swatchFor(f),
          el("span", { class: "name", title: `${fnName[f]} — ${fnWhere(f)} · ${threadName[fnThread[f]]}`, text: fnName[f] }),
          T > 1 ? el("span", { class: "thread", text: threadName[fnThread[f]] }) : null,
          el("span", { class: "fig", text: fmtCpu(fnSelf.cpu[f]) })
        )
      );
    }
    v.append(el("div", { class: "src-wrap" }, list, pane));
    drawSourcePane(pane);
    source.ms = performance.now() - t0;
  }
  function pickSource(f, list, pane) {
    const t0 = performance.now();
    source.picked = f;
    for (const li of list.children) li.classList.toggle("picked", Number(li.dataset.fn) === f);
    drawSourcePane(pane);
    source.ms = performance.now() - t0;
  }
  function drawSourcePane(pane) {
    const r = SRC_FNS.get(source.picked);
    const f = r.fn, file = fnFile[f];
    pane.replaceChildren(
      el("h3", { id: "src-title", "data-fn": f }, swatchFor(f), el("b", { text: fnName[f] }), text(" "), whereLink(f), text(` · ${threadName[fnThread[f]]} · self CPU ${fmtCpu(fnSelf.cpu[f])}, self wall ${fmtWall(fnSelf.wall[f])}`))
    );
    if (r.note) {
      pane.append(el("p", { class: "note src-note", text: `${fnWhere(f)}: ${r.note}` }));
      return;
    }
    const figs = lineFigures();
    const cpu = figs.cpu.get(f) || /* @__PURE__ */ new Map(), alloc = figs.alloc.get(f) || /* @__PURE__ */ new Map();
    const heat = [...cpu.entries()].filter(([, x]) => x[0] > 0 || x[1] > 0).sort((a, b) => b[1][0] - a[1][0] || b[1][1] - a[1][1] || a[0] - b[0]);
    const hot = new Map(heat.slice(0, HOT_LINES).map(([n], i) => [n, i + 1]));
    const maxCpu = heat.length ? Math.max(1e-12, heat[0][1][0]) : 1;
    const outside = [.../* @__PURE__ */ new Set([...cpu.keys(), ...alloc.keys()])].filter((n) => n < r.first || n > r.last).length;
    const body = el("tbody");
    for (let n = r.first; n <= r.last; n++) {
      const line = sourceLine(r.file, n);
      if (line === null) continue;
      const c = cpu.get(n), a = alloc.get(n), rank = hot.get(n);
      const tr = el("tr", { "data-line": n, "data-hot": rank || null, class: rank ? "hot" : null });
      const fig = (key, value, shown, title2) => el("td", { class: "fig", "data-key": key, "data-value": value == null ? null : String(value), title: title2 || null, text: shown });
      const cpuTd = fig("cpu", c ? c[0] : null, c ? fmtCpu(c[0]) : "", c ? `${grouped(c[0])} operations` : null);
      if (c && c[0] > 0) cpuTd.style.backgroundImage = `linear-gradient(to left, var(--bar) ${(100 * c[0] / maxCpu).toFixed(1)}%, transparent 0)`;
      const allocTd = fig("allocBytes", a ? a.bytes : null, a ? fmtBytes(a.bytes) : "", a ? `${grouped(a.bytes)} bytes in ${grouped(a.count)} allocations` : null);
      if (a) allocTd.setAttribute("data-count", String(a.count));
      tr.append(
        cpuTd,
        fig("wall", c ? c[1] : null, c ? fmtWall(c[1]) : ""),
        allocTd,
        el("td", { class: "mark", text: rank ? `#${rank}` : "", title: rank ? `The ${["", "hottest", "second hottest", "third hottest"][rank] || "hot"} line of this function by CPU` : null }),
        el("td", { class: "ln", "data-key": "line" }, srcLink(file, n, String(n))),
        el("td", { class: "code", "data-key": "code" }, el("code", { text: line }))
      );
      body.append(tr);
    }
    const head = el("tr", null, ...[["cpu", "CPU"], ["wall", "Wall"], ["allocBytes", "Alloc"], ["mark", ""], ["line", "Line"], ["code", "Source"]].map(([k, label]) => el("th", { "data-key": k, text: label })));
    pane.append(el("div", { class: "tablewrap" }, el("table", { class: "data source", id: "src-code" }, el("thead", null, head), body)));
    if (outside) pane.append(el("p", { class: "note", text: `${grouped(outside)} line(s) with figures are outside this excerpt (the Lines tab lists them).` }));
  }

  // rokuprof/export/report/assets/src/lines.js
  function renderLines() {
    const v = views.lines;
    v.replaceChildren();
    const factor = (p) => derived.rangeFactor ? derived.rangeFactor[pathNode[p]] : 1;
    if (!facts.lineData) {
      v.append(el("p", { class: "note", text: "This capture has no line data. Set bsprof_enable_lines=1 in the app's manifest (it needs rsg_version=1.2) to see CPU and wall time per source line." }));
    } else {
      const byFn = lineFigures().cpu;
      const hot = [...byFn.keys()].sort((a, b) => fnSelf.cpu[b] - fnSelf.cpu[a]).slice(0, 16);
      v.append(el("h2", { class: "section", text: "Hot lines: the functions with most self CPU, their lines ranked by CPU" }));
      const cards = el("div", { class: "cards", id: "line-cards" });
      for (const f of hot) {
        const lines = [...byFn.get(f).entries()].map(([line, [cpu, wall]]) => ({ line, cpu, wall }));
        const cpuSum = lines.reduce((s, l) => s + l.cpu, 0);
        const sortState = state.sort[`lines:${f}`] ||= { key: "cpu", dir: -1 };
        const card = el("div", { class: "card", "data-fn": f });
        const draw = () => {
          card.replaceChildren(
            el("h3", null, swatchFor(f), text(fnName[f])),
            el("div", { class: "where" }, srcLink(fnFile[f], fnLine[f], fnFile[f]), text(` · ${threadName[fnThread[f]]} · self CPU ${fmtCpu(fnSelf.cpu[f])}, self wall ${fmtWall(fnSelf.wall[f])}`), sourceButton(f)),
            dataTable(null, [
              { key: "line", label: "Line", get: (l) => l.line, render: (td, l) => td.append(srcLink(fnFile[f], l.line, String(l.line))) },
              { key: "cpu", label: "CPU", get: (l) => l.cpu, fmt: fmtCpu, bar: true },
              { key: "share", label: "% of function", get: (l) => cpuSum ? 100 * l.cpu / cpuSum : 0, fmt: (x) => `${x.toFixed(1)}%`, exact: false },
              { key: "wall", label: "Wall", get: (l) => l.wall, fmt: fmtWall }
            ], lines, sortState, draw, 12)
          );
        };
        draw();
        cards.append(card);
      }
      if (!hot.length) cards.append(el("p", { class: "note", text: "No line figures in this selection." }));
      v.append(cards);
    }
    if (!facts.memoryOps) {
      v.append(el("h2", { class: "section", text: "Allocation sites" }), el("p", { class: "note nomem", text: `${NO_MEMORY}.` }));
      return;
    }
    const A = D.allocLines || [];
    if (A.length) renderAllocLines(v);
    else renderAllocCallers(v, factor);
  }
  function renderAllocLines(v) {
    v.append(el("h2", { class: "section", text: "Allocation sites: the functions that allocate most, their lines ranked by bytes" }));
    const byFn = lineFigures().alloc;
    const top = [...byFn.keys()].sort((a, b) => fnSelf.allocBytes[b] - fnSelf.allocBytes[a]).slice(0, 12);
    const cards = el("div", { class: "cards", id: "alloc-cards" });
    for (const f of top) {
      const lines = [...byFn.get(f).values()];
      const bytesSum = lines.reduce((s, l) => s + l.bytes, 0);
      const sortState = state.sort[`allocLines:${f}`] ||= { key: "bytes", dir: -1 };
      const card = el("div", { class: "card", "data-fn": f });
      const draw = () => card.replaceChildren(
        el("h3", null, swatchFor(f), text(fnName[f])),
        el("div", { class: "where" }, srcLink(fnFile[f], fnLine[f], fnFile[f]), text(` · ${threadName[fnThread[f]]} · ${fmtBytes(fnSelf.allocBytes[f])} in ${fmtCount(fnSelf.allocCount[f])} allocations`), sourceButton(f)),
        dataTable(null, [
          { key: "line", label: "Line", get: (l) => l.line, render: (td, l) => td.append(srcLink(fnFile[f], l.line, String(l.line))) },
          { key: "bytes", label: "Bytes", get: (l) => l.bytes, fmt: fmtBytes, bar: true },
          { key: "share", label: "% of function", get: (l) => bytesSum ? 100 * l.bytes / bytesSum : 0, fmt: (x) => `${x.toFixed(1)}%`, exact: false },
          { key: "count", label: "Allocs", get: (l) => l.count, fmt: fmtCount },
          { key: "avg", label: "Avg size", get: (l) => l.count ? l.bytes / l.count : 0, fmt: fmtBytes, exact: false }
        ], lines, sortState, draw, 12)
      );
      draw();
      cards.append(card);
    }
    if (!top.length) cards.append(el("p", { class: "note", text: "No allocations in this selection." }));
    v.append(cards);
  }
  function renderAllocCallers(v, factor) {
    v.append(el("h2", { class: "section", text: "Allocation sites: where each allocating function was called from, ranked by bytes" }));
    const byFn = /* @__PURE__ */ new Map();
    for (const [p, lines] of D.sites) {
      const n = pathNode[p], f = nodeFn[n];
      if (!visibleFn(f)) continue;
      const k = factor(p);
      const bytes = pathCol.allocBytes[p] * k;
      if (!bytes) continue;
      const caller = parent[n] >= 0 ? nodeFn[parent[n]] : -1;
      const key = `${caller}:${lines[1] || 0}`;
      let m = byFn.get(f);
      if (!m) byFn.set(f, m = /* @__PURE__ */ new Map());
      const cur = m.get(key) || { caller, line: lines[1] || 0, bytes: 0, count: 0, live: 0 };
      cur.bytes += bytes;
      cur.count += pathCol.allocCount[p] * k;
      cur.live += pathCol.liveBytes[p] * k;
      m.set(key, cur);
    }
    const top = [...byFn.keys()].sort((a, b) => fnSelf.allocBytes[b] - fnSelf.allocBytes[a]).slice(0, 12);
    const cards = el("div", { class: "cards", id: "alloc-cards" });
    for (const f of top) {
      const sites = [...byFn.get(f).values()];
      const sortState = state.sort[`sites:${f}`] ||= { key: "bytes", dir: -1 };
      const card = el("div", { class: "card", "data-fn": f });
      const draw = () => card.replaceChildren(
        el("h3", null, swatchFor(f), text(fnName[f])),
        el("div", { class: "where" }, whereLink(f), text(` · ${fmtBytes(fnSelf.allocBytes[f])} in ${fmtCount(fnSelf.allocCount[f])} allocations`)),
        dataTable(null, [
          { key: "site", label: "Called from", text: true, cls: "loc", get: (s) => s.caller >= 0 ? `${fnName[s.caller]} (${fnFile[s.caller]}:${s.line})` : "(thread root)", render: (td, s) => s.caller >= 0 ? td.append(text(`${fnName[s.caller]} (`), srcLink(fnFile[s.caller], s.line), text(")")) : td.append(text("(thread root)")) },
          { key: "bytes", label: "Bytes", get: (s) => s.bytes, fmt: fmtBytes, bar: true },
          { key: "count", label: "Allocs", get: (s) => s.count, fmt: fmtCount },
          { key: "live", label: "Live at end", get: (s) => s.live, fmt: fmtBytes }
        ], sites, sortState, draw, 12)
      );
      draw();
      cards.append(card);
    }
    v.append(cards);
  }

  // rokuprof/export/report/assets/src/growth.js
  var fmtSigned = (v) => `${v > 0 ? "+" : v < 0 ? "−" : ""}${fmtBytes(Math.abs(v))}`;
  function pathChain(n, lines) {
    const out = el("div", { class: "chain" });
    const nodes = [];
    for (let m = n; m >= 0 && nodeFn[m] >= 0; m = parent[m]) nodes.push(m);
    const HEAD = 3, TAIL = 8;
    nodes.reverse().forEach((m, i) => {
      if (nodes.length > HEAD + TAIL + 1 && i >= HEAD && i < nodes.length - TAIL) {
        if (i === HEAD) out.append(text(" › "), el("span", { class: "elided", text: `… ${grouped(nodes.length - HEAD - TAIL)} frames` }));
        return;
      }
      const f = nodeFn[m];
      const line = lines && lines[nodes.length - 1 - i] || fnLine[f];
      if (i) out.append(text(" › "));
      const item = el("span", { title: `${fnFile[f]}:${line}` });
      item.append(i === nodes.length - 1 ? el("b", { text: fnName[f] }) : text(fnName[f]), srcLink(fnFile[f], line, `:${line}`));
      out.append(item);
    });
    return out;
  }
  var siteLines = new Map(D.sites.map(([p, lines]) => [p, lines]));
  var memFlame = { zoom: -1, layout: null };
  var memFlameCanvas = el("canvas", { id: "mem-flame", "aria-label": "Allocation flame graph of the range: frames sized by the bytes allocated in it; click a frame to zoom" });
  var memFlameWrap = el("div", { class: "flame-wrap", id: "mem-flame-wrap" }, memFlameCanvas);
  var memCrumbs = el("div", { class: "crumbs", id: "mem-crumbs" });
  var memFlameNote = el("p", { class: "note", id: "mem-flame-note" });
  memFlameCanvas.addEventListener("click", (e) => {
    const r = memFlame.layout && rectAt(e.offsetX, e.offsetY, true, memFlame.layout, true);
    if (r) memZoom(r.node);
  });
  memFlameCanvas.addEventListener("mousemove", (e) => {
    const r = memFlame.layout && rectAt(e.offsetX, e.offsetY, false, memFlame.layout, true);
    if (r) showTip(r.node, e.clientX, e.clientY);
    else tip.hidden = true;
  });
  memFlameCanvas.addEventListener("mouseleave", () => tip.hidden = true);
  function memZoom(n) {
    memFlame.zoom = n === VROOT || n >= 0 && n < T && state.thread === n ? -1 : n;
    drawMemFlame();
  }
  var memFlameFrame = 0;
  function memFlameSoon() {
    if (!memFlameFrame) memFlameFrame = requestAnimationFrame(drawMemFlame);
  }
  function drawMemFlame() {
    memFlameFrame = 0;
    if (!memFlameWrap.isConnected || views.memory.hidden) return;
    const width = Math.max(300, memFlameWrap.clientWidth - 2 || 1e3);
    const layout = memFlame.layout = flameLayout(width, "allocBytes", memFlame);
    paintFlame(memFlameCanvas, layout, true, searchTest(), null);
    fillCrumbs(memCrumbs, layout, memZoom);
    const top = layout.chain[layout.chain.length - 1];
    memFlameNote.replaceChildren(
      text("Frames sized by the bytes allocated in the range: "),
      el("b", { id: "mem-flame-total", "data-value": layout.total, text: fmtBytes(layout.total) }),
      text(top >= 0 && nodeFn[top] >= 0 ? ` on the call path to ${fnName[nodeFn[top]]}` : ` on ${state.thread < 0 ? "all threads" : threadName[state.thread]}`),
      text(layout.total > 0 ? ". Click a frame to zoom in, a crumb to go back out." : ": nothing allocated there in this range.")
    );
  }
  function showPathButton(n) {
    return el("button", {
      class: "btn small show-path",
      "data-node": n,
      title: "Show this call path in the allocation flame graph above",
      text: "Show path",
      onclick: () => {
        memZoom(n);
        memFlameWrap.scrollIntoView({ block: "nearest" });
      }
    });
  }
  function renderGrowth(renderMemoryNow2) {
    const w = derived.memW;
    const box = el("div", { class: "growth", id: "growth", "data-from": w.from, "data-to": w.to, "data-buckets": w.end - w.first });
    const span = state.range ? `${fmtSeconds(state.range[0] / HZ)} – ${fmtSeconds(state.range[1] / HZ)}` : "the whole run";
    box.append(el("h2", { class: "section", text: `What grew the heap: ${span}` }));
    const step = MEM.buckets ? fmtSeconds(SLOTS / HZ / MEM.buckets) : "–";
    const merged = MEM.merged ? ` (every ${grouped(2 ** MEM.merged)} of them merged to keep this page small)` : "";
    const snapped = w.whole ? "these figures are the whole run's." : `a range snaps to them: these figures are every operation that arrived after ${fmtSeconds(w.from / HZ)} and up to ${fmtSeconds(w.to / HZ)}.`;
    box.append(el("p", { class: "note", id: "mem-resolution", "data-buckets": MEM.buckets, "data-merged": MEM.merged, text: `Memory operations carry no time of their own: each is timed by where it arrived in the stream, in ${grouped(MEM.buckets)} steps about ${step} apart on average, on the live heap's line${merged}; ${snapped} A free counts on the call path that freed.` }));
    const sums = derived.memRange || pathCol;
    const rows = [];
    let alloc = 0, freed = 0, allocs = 0, frees = 0;
    for (let p = 0; p < P; p++) {
      const n = pathNode[p];
      if (!(sums.allocCount[p] || sums.frees[p] || sums.reallocs[p]) || !visibleFn(nodeFn[n])) continue;
      rows.push(p);
      alloc += sums.allocBytes[p];
      freed += sums.freedBytes[p];
      allocs += sums.allocCount[p];
      frees += sums.frees[p] + sums.reallocs[p];
    }
    const stat = (k, val, id, value) => el("div", { class: "stat", id, "data-value": value }, el("div", { class: "k", text: k }), el("div", { class: "v", text: val }));
    const live = [heapAt(w.from), w.whole ? D.totals.liveBytes : heapAt(w.to)];
    box.append(
      el(
        "div",
        { class: "stats" },
        stat("Allocated", `${fmtBytes(alloc)} in ${fmtCount(allocs)}`, "growth-alloc", alloc),
        stat("Freed", `${fmtBytes(freed)} in ${fmtCount(frees)}`, "growth-freed", freed),
        stat("Net growth", fmtSigned(alloc - freed), "growth-net", alloc - freed),
        stat("Live heap", `${fmtBytes(live[0])} → ${fmtBytes(live[1])}`, "growth-live", live[1] - live[0])
      )
    );
    const net = (p) => sums.allocBytes[p] - sums.freedBytes[p];
    const onSort = () => renderMemoryNow2();
    box.append(el("h3", { class: "section", text: "By call path (allocation site): bytes allocated minus bytes freed on it in the range" }));
    box.append(
      dataTable("growth-paths", [
        { key: "net", label: "Net growth", get: net, fmt: fmtSigned, bar: true },
        { key: "allocBytes", label: "Allocated", get: (p) => sums.allocBytes[p], fmt: fmtBytes },
        { key: "allocCount", label: "Allocs", get: (p) => sums.allocCount[p], fmt: fmtCount },
        { key: "freedBytes", label: "Freed", get: (p) => sums.freedBytes[p], fmt: fmtBytes },
        { key: "frees", label: "Frees", title: "Frees and frees by reallocation", get: (p) => sums.frees[p] + sums.reallocs[p], fmt: fmtCount },
        { key: "liveBytes", label: "Live at end", title: "Of the whole run", get: (p) => pathCol.liveBytes[p], fmt: fmtBytes },
        { key: "fn", label: "Function", text: true, cls: "fn", get: (p) => fnName[nodeFn[pathNode[p]]] },
        { key: "path", label: "Call path", text: true, get: (p) => p, render: (td, p) => td.append(pathChain(pathNode[p], siteLines.get(p))) },
        { key: "show", label: "", text: true, get: () => "", render: (td, p) => td.append(showPathButton(pathNode[p])) }
      ], rows, state.sort.growthPaths, onSort, 30, (p) => ({ "data-path": p, "data-node": pathNode[p] }))
    );
    const fns = [];
    for (let f = 0; f < nF; f++) if (visibleFn(f) && (fnSelf.allocCount[f] || fnSelf.frees[f] || fnSelf.reallocs[f])) fns.push(f);
    const fnNet = (f) => fnSelf.allocBytes[f] - fnSelf.freedBytes[f];
    box.append(el("h3", { class: "section", text: "By function: its call paths' bytes allocated minus bytes freed in the range" }));
    box.append(
      dataTable("growth-fns", [
        { key: "function", label: "Function", text: true, cls: "fn", get: (f) => fnName[f], render: (td, f) => td.append(swatchFor(f), text(fnName[f])) },
        { key: "thread", label: "Thread", text: true, get: (f) => threadName[fnThread[f]] },
        { key: "net", label: "Net growth", get: fnNet, fmt: fmtSigned, bar: true },
        { key: "allocBytes", label: "Allocated", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes },
        { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
        { key: "freedBytes", label: "Freed", get: (f) => fnSelf.freedBytes[f], fmt: fmtBytes },
        { key: "frees", label: "Frees", get: (f) => fnSelf.frees[f] + fnSelf.reallocs[f], fmt: fmtCount }
      ], fns, state.sort.growthFns, onSort, 100, (f) => ({ "data-fn": f }))
    );
    box.append(el("h3", { class: "section", text: "Allocation flame graph of the range" }), memCrumbs, memFlameNote, memFlameWrap);
    return box;
  }

  // rokuprof/export/report/assets/src/memory.js
  function renderMemory() {
    const v = views.memory;
    v.replaceChildren();
    if (!facts.memoryOps) {
      v.append(el("p", { class: "note nomem", id: "memory-note", text: `${NO_MEMORY}. Add it to the app's manifest to see allocations, frees, the live heap and leaks.` }));
      return;
    }
    const tt = D.totals;
    const stat = (k, val, id) => el("div", { class: "stat", id }, el("div", { class: "k", text: k }), el("div", { class: "v", text: val }));
    v.append(
      el(
        "div",
        { class: "stats" },
        stat("Allocations", `${fmtCount(tt.allocCount)}`),
        stat("Allocated", fmtBytes(tt.allocBytes)),
        stat("Frees", fmtCount(tt.frees)),
        stat("Reallocations", fmtCount(tt.reallocs)),
        stat("Peak live heap", fmtBytes(heapPeak), "live-peak"),
        stat("Live heap at end", `${fmtBytes(tt.liveBytes)} in ${fmtCount(tt.liveCount)} blocks`, "live-total"),
        stat("Frees of unknown addresses", fmtCount(tt.unknownFrees))
      )
    );
    const leaks = [];
    for (const [p, lines] of D.sites) {
      const n = pathNode[p];
      if (!visibleFn(nodeFn[n])) continue;
      const live = pathCol.liveBytes[p];
      if (live > 0) leaks.push({ p, n, lines, live, count: pathCol.liveCount[p] });
    }
    const inRange = derived.memRange || pathCol;
    v.append(renderGrowth(renderMemoryNow));
    v.append(el("h2", { class: "section", text: "Leak sites: memory still allocated at the end, by the call path that allocated it" }));
    v.append(
      dataTable("leaks", [
        { key: "liveBytes", label: "Live at end", get: (s) => s.live, fmt: fmtBytes, bar: true },
        { key: "liveCount", label: "Blocks", get: (s) => s.count, fmt: fmtCount },
        { key: "rangeAlloc", label: state.range ? "Allocated in range" : "Allocated", title: "Bytes its call path allocated (in the selected range)", get: (s) => inRange.allocBytes[s.p], fmt: fmtBytes },
        { key: "rangeNet", label: state.range ? "Growth in range" : "Net growth", title: "Bytes its call path allocated minus bytes it freed (in the selected range)", get: (s) => inRange.allocBytes[s.p] - inRange.freedBytes[s.p], fmt: fmtSigned },
        { key: "fn", label: "Allocated by", text: true, cls: "fn", get: (s) => fnName[nodeFn[s.n]] },
        { key: "thread", label: "Thread", text: true, get: (s) => threadName[nodeThread[s.n]] },
        { key: "path", label: "Call path (root › … › allocating function, with lines)", text: true, get: (s) => s.p, render: (td, s) => td.append(pathChain(s.n, s.lines)) },
        { key: "show", label: "", text: true, get: () => "", render: (td, s) => td.append(showPathButton(s.n)) }
      ], leaks, state.sort.leaks, () => {
        dirty.add("memory");
        renderMemoryNow();
      }, 200, (s) => ({ "data-node": s.n }))
    );
    const rows = [];
    for (let f = 0; f < nF; f++) if (visibleFn(f) && (fnSelf.allocCount[f] || fnSelf.frees[f] || fnSelf.reallocs[f] || fnTotal.allocBytes[f])) rows.push(f);
    v.append(el("h2", { class: "section", text: "Allocation per function" }));
    v.append(
      dataTable("allocs", [
        { key: "function", label: "Function", text: true, cls: "fn", get: (f) => fnName[f], render: (td, f) => td.append(swatchFor(f), text(fnName[f])) },
        { key: "thread", label: "Thread", text: true, get: (f) => threadName[fnThread[f]] },
        { key: "allocBytes", label: "Alloc bytes", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes, bar: true },
        { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
        { key: "avg", label: "Avg size", get: (f) => fnSelf.allocCount[f] ? fnSelf.allocBytes[f] / fnSelf.allocCount[f] : 0, fmt: fmtBytes, exact: false },
        { key: "totalAlloc", label: "Total alloc bytes", title: "Including what its callees allocated", get: (f) => fnTotal.allocBytes[f], fmt: fmtBytes },
        { key: "frees", label: "Frees", get: (f) => fnSelf.frees[f], fmt: fmtCount },
        { key: "freedBytes", label: "Freed bytes", get: (f) => fnSelf.freedBytes[f], fmt: fmtBytes },
        { key: "liveBytes", label: "Live at end", get: (f) => fnSelf.liveBytes[f], fmt: fmtBytes }
      ], rows, state.sort.allocs, renderMemoryNow, 300)
    );
    const churn = rows.filter((f) => fnSelf.reallocs[f] > 0);
    v.append(el("h2", { class: "section", text: "Reallocation churn: functions that grow buffers by reallocating" }));
    if (!churn.length) v.append(el("p", { class: "note", text: "No reallocations in this selection." }));
    else
      v.append(
        dataTable("churn", [
          { key: "function", label: "Function", text: true, cls: "fn", get: (f) => fnName[f], render: (td, f) => td.append(swatchFor(f), text(fnName[f])) },
          { key: "thread", label: "Thread", text: true, get: (f) => threadName[fnThread[f]] },
          { key: "reallocs", label: "Reallocations", get: (f) => fnSelf.reallocs[f], fmt: fmtCount, bar: true },
          { key: "allocCount", label: "Allocs", get: (f) => fnSelf.allocCount[f], fmt: fmtCount },
          { key: "ratio", label: "Realloc share", get: (f) => fnSelf.allocCount[f] ? 100 * fnSelf.reallocs[f] / fnSelf.allocCount[f] : 0, fmt: (x) => `${x.toFixed(1)}%`, exact: false },
          { key: "allocBytes", label: "Alloc bytes", get: (f) => fnSelf.allocBytes[f], fmt: fmtBytes }
        ], churn, state.sort.churn, renderMemoryNow, 100)
      );
    memFlameSoon();
  }
  function renderMemoryNow() {
    const top = window.scrollY;
    renderMemory();
    window.scrollTo(0, top);
  }

  // rokuprof/export/report/assets/src/facts.js
  function renderFacts() {
    const v = views.facts;
    v.replaceChildren();
    const dl = el("dl", { class: "facts panel", id: "facts" });
    if (DF) v.append(el("div", { class: "ab panel", id: "facts-ab" }, sideFacts(DF.sides[0], "A"), sideFacts(DF.sides[1], "B")), el("h2", { class: "section", text: `B's stream (${DF.sides[1].input})` }));
    const ratio = facts.sampleRatio ? `${facts.sampleRatio[0] ?? "?"} requested, ${facts.sampleRatio[1] ?? "?"} actual` : "unknown";
    const flags = [facts.lineData ? "line data" : "no line data", facts.memoryOps ? "memory operations" : "no memory operations"].join(", ");
    const rows = [
      ["App", [facts.app, facts.appVersion].filter(Boolean).join(" ") || "unknown"],
      ["Supplemental info", facts.supplemental || "–"],
      ["Device", device || "unknown"],
      ["Firmware", facts.firmware || "unknown"],
      ["Profiler flags", flags],
      ["Sample ratio", ratio],
      ["Start", fmtClock(facts.start)],
      ["End", fmtClock(facts.end)],
      ["Duration", fmtSeconds(facts.duration)],
      ["Capture status", facts.problem ? `${STATUS_TEXT[facts.status] || facts.status}: ${facts.problem}` : STATUS_TEXT[facts.status] || facts.status],
      ["Stream", `${grouped(facts.bytes)} bytes, ${grouped(facts.entries)} entries, .bsprof format ${facts.format || "?"}`],
      ["Wall-time unit", `${facts.wallUnit} (${grouped(WPS)} per second; Roku does not publish it)`],
      ["Threads", threadName.join(", ")],
      ["Live heap", facts.memoryOps ? `peak ${fmtBytes(heapPeak)}, at end ${fmtBytes(heapEnd)} (${grouped(heapEnd)} bytes in ${grouped(D.totals.liveCount)} blocks)` : NO_MEMORY],
      ["Totals", `${fmtWall(D.totals.wall)} wall, ${fmtCpu(D.totals.cpu)} CPU, ${fmtCount(D.totals.calls)} calls, ${fmtCount(D.totals.paths)} call paths`],
      ["Timeline", `${grouped(SLOTS)} synthetic samples per thread at ${HZ} Hz`],
      ["Made by", `rokuprof ${facts.rokuprof}`]
    ];
    if (SESSION) {
      const named = marks.slice(0, 20).map(([at, label]) => `${label} (${fmtSeconds(at)})`);
      if (marks.length > 20) named.push(`and ${grouped(marks.length - 20)} more (listed under the timeline)`);
      rows.push(["Marks", named.length ? named.join(", ") : "none"]);
      rows.push(["Device vitals", VITALS.length ? `${grouped(SESSION.readings)} readings; ${VITALS.map((v2) => `${v2.label} peak ${vitalText(v2, v2.peak)}`).join(", ")}` : "none"]);
      for (const n of SESSION.notes) rows.push(["Session note", n]);
    }
    for (const w of facts.warnings || []) rows.push(["Warning", w]);
    for (const [k, val] of rows) dl.append(el("dt", { text: k }), el("dd", { "data-fact": k, text: val }));
    v.append(dl);
  }

  // rokuprof/export/report/assets/src/main.js
  Object.assign(RENDER, { flame: renderFlame, stack: renderStack, tree: renderTree, functions: renderFunctions, bottomup: renderBottomUp, lines: renderLines, source: renderSource, memory: renderMemory, facts: renderFacts });
  if (DF) Object.assign(RENDER, { tree: renderDiffTree, functions: renderDiffFunctions, lines: renderDiffLines, memory: renderDiffSites });
  redraw.timeline = drawTimeline;
  var resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      drawTimeline();
      dirty.add("flame");
      renderActive();
      if (state.tab === "memory") memFlameSoon();
    }, 80);
  });
  var wanted = (window.location.hash || "").slice(1) || D.view;
  if (TABS.some(([k]) => k === wanted)) state.tab = wanted;
  renderWaits();
  compute();
  setRange(null);
  window.__report = {
    state,
    model: D,
    tabs: TABS.map(([k]) => k),
    setTab,
    setThread,
    setMetric,
    setRange,
    setHideIdle,
    zoomTo,
    ...stackHooks,
    flame: () => flame.rects.map((r) => ({
      node: r.node,
      depth: r.depth,
      x: r.x,
      w: r.w,
      y: r.y,
      value: r.value,
      fn: r.node >= 0 ? nodeFn[r.node] : -1,
      key: r.node >= 0 && nodeFn[r.node] >= 0 ? [threadName[fnThread[nodeFn[r.node]]], fnName[nodeFn[r.node]], fnFile[nodeFn[r.node]]] : null,
      parent: r.node >= 0 ? parent[r.node] : -1
    })),
    flameSize: () => ({ width: flame.width, total: flame.total, height: flame.height, rows: flame.rows, chain: flame.chain.length }),
    flameMarks: () => flame.marks.map((m) => ({ kind: m.kind, node: m.node, depth: m.depth, x: m.x, w: m.w, y: m.y, count: m.count })),
    functionFigures: () => {
      const out = [];
      for (let f = 0; f < nF; f++) {
        const row = { module: threadName[fnThread[f]], function: fnName[f], file: fnFile[f] };
        for (const c of COLS) {
          row[`self_${c}`] = fnSelf[c][f];
          row[`total_${c}`] = fnTotal[c][f];
        }
        out.push(row);
      }
      return out;
    },
    memFlame: () => memFlame.layout ? { zoom: memFlame.zoom, total: memFlame.layout.total, chain: memFlame.layout.chain, rects: memFlame.layout.rects.map((r) => ({ node: r.node, depth: r.depth, x: r.x, w: r.w, value: r.value, fn: r.node >= 0 ? nodeFn[r.node] : -1 })) } : null,
    memWindow: () => ({ ...derived.memW, buckets: MEM.buckets, merged: MEM.merged }),
    timeline: () => ({ slots: SLOTS, hz: HZ, busy: timelineInfo.busy, left: TL.left, plot: tlGeometry().plot, top: tlGeometry().top, vitals: timelineInfo.vitals, lanes: timelineInfo.lanes })
  };
  requestAnimationFrame(() => {
    window.__reportReady = true;
    if (performance.mark) performance.mark("rokuprof-report-ready");
  });
})();
