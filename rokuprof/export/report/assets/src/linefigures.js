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
  // rows of four: call path, line, two figures; into: function → line → add(figures so far, …)
  const addUp = (rows, add) => {
    const into = new Map();
    for (let i = 0; i < rows.length; i += 4) {
      const p = rows[i], f = nodeFn[pathNode[p]];
      if (!visibleFn(f)) continue;
      const k = factor(p);
      if (!k) continue;
      let m = into.get(f);
      if (!m) into.set(f, (m = new Map()));
      m.set(rows[i + 1], add(m.get(rows[i + 1]), rows[i + 1], rows[i + 2] * k, rows[i + 3] * k));
    }
    return into;
  };
  const cpu = addUp(D.lines, (cur = [0, 0], line, a, b) => [cur[0] + a, cur[1] + b]);
  const alloc = addUp(D.allocLines || [], (cur, line, a, b) => ({ line, count: (cur ? cur.count : 0) + a, bytes: (cur ? cur.bytes : 0) + b }));
  derived.lineCache = { thread: state.thread, cpu, alloc };
  return derived.lineCache;
}

export { lineFigures };
