// The line figures the Lines and Source tabs share (see lineFigures).
import { D } from "./data.js";
import { nodeFn, pathNode } from "./model.js";
import { state } from "./state.js";
import { derived } from "./figures.js";
import { visibleFn } from "./tables.js";

// The one place line figures are added up (the Lines and Source tabs read it): per function,
// per source line (function line + line offset - 1), CPU and wall time from the model's lines
// and allocation count and bytes from its allocLines, in the selection (time range: each call
// path's figures apportioned by its samples there; the thread menu; Hide idle). Kept until the
// selection changes.
function lineFigures() {
  if (derived.lineCache && derived.lineCache.thread === state.thread) return derived.lineCache;
  const factor = (p) => (derived.rangeFactor ? derived.rangeFactor[pathNode[p]] : 1);
  const cpu = new Map(), alloc = new Map();
  const L = D.lines;
  for (let i = 0; i < L.length; i += 4) {
    const p = L[i], f = nodeFn[pathNode[p]];
    if (!visibleFn(f)) continue;
    const k = factor(p);
    if (!k) continue;
    let m = cpu.get(f);
    if (!m) cpu.set(f, (m = new Map()));
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
    if (!m) alloc.set(f, (m = new Map()));
    const cur = m.get(A[i + 1]) || { line: A[i + 1], count: 0, bytes: 0 };
    cur.count += A[i + 2] * k;
    cur.bytes += A[i + 3] * k;
    m.set(A[i + 1], cur);
  }
  derived.lineCache = { thread: state.thread, cpu, alloc };
  return derived.lineCache;
}

export { lineFigures };
