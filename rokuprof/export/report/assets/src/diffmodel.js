// The A/B page's figures: the change kinds and colours, the diff formatters, the merged call tree
// of both runs (D.diff.tree) and what B's flame graph shows of it.
// A `rokuprof diff --html` page: D.diff holds every A/B figure as [A, B, Δ, Δ%], written by
// Python as `diff --json` writes them (per second of run with --per-second); nothing here
// computes a figure, only which kind of change it is and its colour. The flame graph, stack
// chart, timeline and bottom-up are B's; Functions, Call tree, Lines and Memory show A and B.
// new: only B has it; gone: only A; grew / shrank: by more than SAME_PCT; same: otherwise.
import { DF, PER_SECOND, S, SAME_PCT } from "./data.js";
import { fmtBytes, fmtCount, fmtCpu, fmtOps, sig } from "./format.js";
import { fmtWall } from "./units.js";
import { KIND_COLOUR, changeColourWithin, changeKindWithin, fmtPctWithin, ratioColour, signed } from "./diffrows.js";
import { state } from "./state.js";
import { el, text } from "./dom.js";

const changeKind = (q) => changeKindWithin(q, SAME_PCT);
const changeColour = (q) => changeColourWithin(q, SAME_PCT);
const fmtPct = (q) => fmtPctWithin(q, SAME_PCT);
// Figures per second of run: every formatter says "/s" and keeps small rates readable.
const perRun = (f) => (PER_SECOND ? (v) => `${f(v)}/s` : f);
const DIFF_FMT = {
  wall: perRun(fmtWall),
  cpu: PER_SECOND ? (v) => `${Math.abs(v) < 100 ? sig(v) : fmtOps(v)} ops/s` : fmtCpu,
  calls: PER_SECOND ? (v) => `${sig(v)}/s` : fmtCount,
  bytes: PER_SECOND ? (v) => `${Math.abs(v) < 100 ? `${sig(v)} B` : fmtBytes(v)}/s` : fmtBytes,
  blocks: PER_SECOND ? (v) => `${sig(v)}/s` : fmtCount,
};
const TREE_FMT = { wall: "wall", cpu: "cpu", calls: "calls", allocBytes: "bytes", liveBytes: "bytes" };
// The merged call tree of both runs (D.diff.tree): children, and whether a node has any figure.
const DT = DF ? mergedTree() : null;
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
const treeQuad = (metric, i) => {
  const m = DF.tree.figures[metric];
  return [m.a[i], m.b[i], m.d[i], m.p[i]];
};
const treeLabel = (i) => (DF.tree.name[i] < 0 ? S[DF.tree.thread[i]] : S[DF.tree.name[i]]);
// A frame of B's flame graph: its call path's total in A and B (the merged tree's node).
const flameQuad = (n) => treeQuad(state.metric, DF.flame[n]);
// The flame graph's legend in a diff: new, then the scale from ÷4 to ×4 (same in the middle).
const LEGEND_RATIOS = [0.25, 0.5, 0.71, 1, 1.41, 2, 4];
function renderDiffLegend(legend) {
  legend.append(el("span", { text: `Colour: how each frame's total changed, ${DF.label} (whole runs${PER_SECOND ? ", per second of run" : ""}):` }));
  const swatch = (colour, label, data) => {
    const sw = el("i", data);
    sw.style.background = colour;
    legend.append(el("span", data, sw, text(label)));
  };
  swatch(KIND_COLOUR.new, "new (only in B, or from 0)", { "data-kind": "new" });
  const scale = el("span", { class: "scale", id: "diff-scale" });
  for (const r of LEGEND_RATIOS) {
    const kind = r === 1 ? "same" : r > 1 ? "grew" : "shrank";
    const sw = el("i", { "data-ratio": r, "data-kind": kind, title: r === 1 ? `within ±${SAME_PCT}%` : r > 1 ? `grew ×${r}` : `shrank to ${Math.round(r * 100)}%` });
    sw.style.background = r === 1 ? KIND_COLOUR.same : ratioColour(r);
    scale.append(el("span", null, sw, text(r === 1 ? "same" : r > 1 ? `×${r}` : `÷${+(1 / r).toFixed(1)}`)));
  }
  legend.append(el("span", { class: "scale-label", text: "shrank … grew:" }), scale);
  swatch(KIND_COLOUR.gone, "gone (only in A): in the tables; not drawn here (B's shape), its caller's total shrinks", { "data-kind": "gone" });
}
function diffTipRow(n) {
  const x = flameQuad(n);
  const f = DIFF_FMT[TREE_FMT[state.metric]];
  return ["diff", "A → B", `${x[0] === null ? "–" : f(x[0])} → ${x[1] === null ? "–" : f(x[1])} (${signed(x[2], f)}, ${fmtPct(x)})`, true];
}

export { DIFF_FMT, DT, TREE_FMT, changeColour, changeKind, diffTipRow, flameQuad, fmtPct, renderDiffLegend, treeLabel };
