// The A/B page's Verdicts section: its rows, headline and spreads (assets/src/verdictrows.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { boxPlots, fmtChange, fmtP, seriesSubtitle, shownVerdicts, spreadRange, spreadText, verdictHeadline, verdictRow } from "../../rokuprof/export/report/assets/src/verdictrows.js";

const spread = (median, q1, q3, min, max, runs) => ({ median, q1, q3, min, max, runs });
const one = (v) => spread(v, v, v, v, v, 1);
const fmt = { cpu: (v) => `${v} ops`, wall: (v) => `${v} us`, bytes: (v) => `${v} B` };

test("change and p in the command's words", () => {
  assert.equal(fmtChange(100), "+100.0 %");
  assert.equal(fmtChange(-12.345), "−12.3 %");
  assert.equal(fmtChange(0), "±0.0 %");
  assert.equal(fmtChange(null), "new");
  assert.equal(fmtP(0.0004), "< 0.001");
  assert.equal(fmtP(0.04712), "0.047");
  assert.equal(fmtP(1), "1.000");
});

test("a spread in words only when a side has more than one run", () => {
  const f = (v) => `${v} ms`;
  assert.equal(spreadText(one(5), f), null);
  assert.equal(spreadText(spread(10, 9, 11, 8, 14, 5), f), "10 ms (9 ms–11 ms, 8 ms–14 ms) over 5 runs");
  assert.equal(spreadRange(one(5), f), null);
  assert.equal(spreadRange(spread(10, 9, 11, 8, 14, 5), f), "5 runs, IQR 20.0 %");
  assert.equal(spreadRange(spread(0, 0, 2, 0, 3, 3), f), "3 runs, IQR 2 ms"); // of a median of 0
});

test("box plots: both sides on one scale, none for a single run", () => {
  const [a, b] = boxPlots(spread(10, 9, 11, 0, 20, 3), spread(30, 25, 35, 20, 40, 3));
  assert.deepEqual(a, { whisker: [0, 50], box: [22.5, 27.5], median: 25 });
  assert.deepEqual(b, { whisker: [50, 100], box: [62.5, 87.5], median: 75 });
  assert.deepEqual(boxPlots(one(3), spread(3, 3, 3, 3, 3, 2)), [null, { whisker: [50, 50], box: [50, 50], median: 50 }]);
});

test("a verdict's row: function, figure, change, medians, spreads, p, outcome and its line", () => {
  const v = {
    module: "main", function: "<img src=x onerror=alert(1)>", file: "pkg:/source/a.brs", metric: "self_wall", kind: "clock",
    verdict: "unknown", change_pct: 50, p: 0.1, a: spread(10, 9, 11, 8, 12, 3), b: one(15), line: "x: self wall time +50.0 % …",
  };
  const r = verdictRow(v, fmt, false);
  assert.equal(r.function, "<img src=x onerror=alert(1)>");
  assert.deepEqual([r.figure, r.change, r.b, r.a, r.p, r.outcome, r.line], ["self wall time", "+50.0 %", "15 us", "10 us", "0.100", "unknown", v.line]);
  assert.equal(r.spreadB, null);
  assert.equal(r.spreadA, "10 us (9 us–11 us, 8 us–12 us) over 3 runs");
  assert.equal(r.plots[1], null);
  const rate = verdictRow({ ...v, metric: "self_cpu", change_pct: null }, fmt, true);
  assert.deepEqual([rate.figure, rate.change, rate.b], ["CPU operations", "new", "15 ops/s"]);
});

test("the headline counts each outcome; only verdicts not `same` are listed", () => {
  const j = {
    outcome: "regressed", runs: 3, baseline_runs: 1, per_second: false,
    counts: { regressed: 1, unknown: 0, improved: 2, same: 40 },
    verdicts: [{ verdict: "regressed" }, { verdict: "improved" }, { verdict: "same" }, { verdict: "improved" }],
  };
  assert.equal(verdictHeadline(j), "regressed: 3 runs vs 1 baseline run; 1 regressed, 2 improved, 40 same");
  assert.equal(verdictHeadline({ ...j, outcome: "passed", runs: 1, per_second: true, counts: { regressed: 0, unknown: 0, improved: 0, same: 0 } }), "passed: 1 run vs 1 baseline run, per second of run; nothing judged");
  assert.deepEqual(shownVerdicts(j).map((v) => v.verdict), ["regressed", "improved", "improved"]);
});

test("the subtitle of a page drawn from series names each side's run", () => {
  assert.equal(seriesSubtitle([null, null]), null);
  assert.equal(
    seriesSubtitle([{ input: "main", run: "main/dev/s2", index: 2, runs: 3 }, null]),
    "drawn from A main/dev/s2 (2 of 3 in main), the run of its series' median total self wall; the verdicts judge every run",
  );
  assert.match(seriesSubtitle([{ input: "a", run: "a/1", index: 1, runs: 2 }, { input: "b", run: "b/3", index: 3, runs: 5 }]), /A a\/1 \(1 of 2 in a\) and B b\/3 \(3 of 5 in b\)/);
});
