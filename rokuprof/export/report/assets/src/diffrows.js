// The A/B page's change rules: the kind of change a figure [A, B, Δ, Δ%] is (new, gone, grew,
// shrank or the same within samePct), its colour and wording, and the rows of the first screen's
// top lists. Pure (the threshold and formatters are arguments): unit-tested in Node.
import { hsl } from "./colours.js";

// new: only B has it; gone: only A; grew / shrank: by more than samePct; same: otherwise.
function changeKindWithin(q, samePct) {
  const [a, b, , p] = q;
  if (!a) return b ? "new" : "same";
  if (!b) return "gone";
  if (p === null || Math.abs(p) < samePct) return "same";
  return p > 0 ? "grew" : "shrank";
}
const KIND_COLOUR = { new: "hsl(280 62% 52%)", gone: "hsl(168 60% 34%)", same: "#e5e7eb" };
// Grew and shrank: red and blue, deeper with the ratio B/A on a log scale, full at ×4 and ÷4;
// new and gone have colours of their own (a frame twice as wide is not a new one).
const SCALE_FULL = 2; // log2 of the ratio that gets the deepest colour
function ratioColour(ratio) {
  const t = Math.min(1, Math.abs(Math.log2(ratio)) / SCALE_FULL);
  return ratio > 1 ? hsl(0, 45 + 40 * t, 86 - 30 * t) : hsl(215, 45 + 40 * t, 86 - 30 * t);
}
function changeColourWithin(q, samePct) {
  const k = changeKindWithin(q, samePct);
  if (k === "grew" || k === "shrank") return ratioColour(Math.max(1e-9, 1 + q[3] / 100));
  return KIND_COLOUR[k];
}
const signed = (v, f) => (v > 0 ? `+${f(v)}` : v < 0 ? `−${f(-v)}` : f(0));
// Δ%: "new" and "gone" where a side has no such row; "from 0" where A's figure is 0.
function fmtPctWithin(q, samePct) {
  const k = changeKindWithin(q, samePct);
  if (k === "new") return q[0] === null ? "new" : "from 0";
  if (k === "gone" && q[1] === null) return "gone";
  return q[3] === null ? "–" : `${q[3] > 0 ? "+" : q[3] < 0 ? "−" : "±"}${Math.abs(q[3]).toFixed(1)}%`;
}
// The JSON's figure names (diff --json) and the page's metrics, with their formatters.
const DIFF_FIGURES = [
  ["self_wall", "Self wall", "wall"],
  ["total_wall", "Total wall", "wall"],
  ["self_cpu", "Self CPU", "cpu"],
  ["total_cpu", "Total CPU", "cpu"],
  ["calls", "Calls", "calls"],
  ["self_alloc_bytes", "Self alloc bytes", "bytes"],
  ["total_alloc_bytes", "Total alloc bytes", "bytes"],
  ["self_live_bytes", "Self live at end", "bytes"],
  ["total_live_bytes", "Total live at end", "bytes"],
];
// A row of the first screen's top lists ([row of diff.functions, the figure it is ranked by, its
// line in B]) as the page shows it: the function, where it is, the figure's A, B, Δ and Δ%
// (formatted by fmt[kind]), the kind of change and its colour.
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
    colour: changeColourWithin(q, samePct),
  };
}

export { DIFF_FIGURES, KIND_COLOUR, SCALE_FULL, changeColourWithin, changeKindWithin, fmtPctWithin, ratioColour, signed, topRow };
