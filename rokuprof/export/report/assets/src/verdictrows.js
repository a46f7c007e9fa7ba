// The A/B page's Verdicts section, its words and geometry: per device model the judgement's
// headline, and per verdict that is not `same` its row (function, figure, change, B and A medians,
// each side's spread across its runs, p, outcome; the command's one-line explanation as its
// title). The verdicts are Python's (rokuprof/verdict/judge.py, Judgement.to_json); nothing here
// decides one. Pure (the formatters are arguments): unit-tested in Node.

// The judged figures' words (judge.JUDGED) and the formatter kind of each.
const VERDICT_FIGURES = {
  self_cpu: ["CPU operations", "cpu"],
  self_wall: ["self wall time", "wall"],
  self_alloc_bytes: ["allocated bytes", "bytes"],
  self_live_bytes: ["live bytes", "bytes"],
};
// The outcomes in the order the page lists them (judge.OUTCOMES).
const OUTCOMES = ["regressed", "unknown", "improved", "same"];

// A p-value as the command words it: "< 0.001" or "0.047".
const fmtP = (p) => (p < 0.001 ? "< 0.001" : p.toFixed(3));
// The medians' change in percent (null: from 0, "new").
function fmtChange(pct) {
  if (pct === null || pct === undefined) return "new";
  return `${pct > 0 ? "+" : pct < 0 ? "−" : "±"}${Math.abs(pct).toFixed(1)} %`;
}
// A side's runs in words, "median (q1–q3, min–max)"; null for a single run (no spread to show).
function spreadText(s, f) {
  if (!s || s.runs < 2) return null;
  return `${f(s.median)} (${f(s.q1)}–${f(s.q3)}, ${f(s.min)}–${f(s.max)}) over ${s.runs} runs`;
}
// Under the median in a cell, short: "3 runs, IQR 1.5 %" (the interquartile range as a share of
// the median; of a median of 0, the range itself); null for a single run.
function spreadRange(s, f) {
  if (!s || s.runs < 2) return null;
  const iqr = s.q3 - s.q1;
  const share = s.median ? `${((100 * iqr) / Math.abs(s.median)).toFixed(1)} %` : f(iqr);
  return `${s.runs} runs, IQR ${share}`;
}
// Both sides' spreads on one scale (the smallest min to the largest max), in percent of its width:
// per side the whisker (min to max), the box (q1 to q3) and the median; null for a single run.
function boxPlots(a, b) {
  const sides = [a, b];
  const lo = Math.min(a.min, b.min);
  const hi = Math.max(a.max, b.max);
  const at = (v) => (hi > lo ? (100 * (v - lo)) / (hi - lo) : 50);
  return sides.map((s) => (s.runs < 2 ? null : { whisker: [at(s.min), at(s.max)], box: [at(s.q1), at(s.q3)], median: at(s.median) }));
}
// One verdict (Verdict.to_json) as the section's row shows it; fmt[kind] formats a figure
// (`perSecond`: the judgement compared rates, each figure says "/s").
function verdictRow(v, fmt, perSecond) {
  const [figure, kind] = VERDICT_FIGURES[v.metric] || [v.metric, "cpu"];
  const base = fmt[kind];
  const f = perSecond ? (x) => `${base(x)}/s` : base;
  return {
    function: v.function,
    module: v.module,
    file: v.file,
    figure,
    change: fmtChange(v.change_pct),
    b: f(v.b.median),
    a: f(v.a.median),
    spreadB: spreadText(v.b, f),
    spreadA: spreadText(v.a, f),
    rangeB: spreadRange(v.b, f),
    rangeA: spreadRange(v.a, f),
    plots: boxPlots(v.a, v.b),
    p: fmtP(v.p),
    outcome: v.verdict,
    line: v.line,
  };
}
// A judgement's headline: "regressed: 3 runs vs 3 baseline runs; 1 regressed, 3 unknown, 44 same".
function verdictHeadline(j) {
  const runs = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;
  const counts = OUTCOMES.filter((o) => j.counts[o]).map((o) => `${j.counts[o]} ${o}`);
  const how = j.per_second ? ", per second of run" : "";
  return `${j.outcome}: ${runs(j.runs, "run")} vs ${runs(j.baseline_runs, "baseline run")}${how}; ${counts.join(", ") || "nothing judged"}`;
}
// The verdicts a section lists: every one not `same`, in the judgement's order (regressions first).
const shownVerdicts = (j) => j.verdicts.filter((v) => v.verdict !== "same");

// A page drawn from series (diff --html with a directory of sessions on a side): which run of each
// series it shows, "drawn from A main/dev/s2 (2 of 3 in main) and B …"; null: no series.
function seriesSubtitle(series) {
  const side = (s, which) => s && `${which} ${s.run} (${s.index} of ${s.runs} in ${s.input})`;
  const parts = [side(series[0], "A"), side(series[1], "B")].filter(Boolean);
  return parts.length ? `drawn from ${parts.join(" and ")}, the run of its series' median total self wall; the verdicts judge every run` : null;
}

export { OUTCOMES, VERDICT_FIGURES, boxPlots, fmtChange, fmtP, spreadRange, seriesSubtitle, shownVerdicts, spreadText, verdictHeadline, verdictRow };
