// The A/B page's change rules and its first screen's rows (assets/src/diffrows.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { changeColourWithin, changeKindWithin, fmtPctWithin, ratioColour, signed, topRow } from "../../rokuprof/export/report/assets/src/diffrows.js";

test("the kind of a change: new, gone, grew, shrank, or the same within the threshold", () => {
  const kind = (q) => changeKindWithin(q, 2);
  assert.equal(kind([null, 5, 5, null]), "new");
  assert.equal(kind([0, 5, 5, null]), "new"); // from 0
  assert.equal(kind([0, 0, 0, null]), "same");
  assert.equal(kind([5, null, -5, -100]), "gone");
  assert.equal(kind([100, 101.9, 1.9, 1.9]), "same");
  assert.equal(kind([100, 102, 2, 2]), "grew");
  assert.equal(kind([100, 98, -2, -2]), "shrank");
  assert.equal(changeKindWithin([100, 104, 4, 4], 5), "same");
});

test("Δ% in words, and signed deltas", () => {
  const pct = (q) => fmtPctWithin(q, 2);
  assert.equal(pct([null, 5, 5, null]), "new");
  assert.equal(pct([0, 5, 5, null]), "from 0");
  assert.equal(pct([5, null, -5, -100]), "gone");
  assert.equal(pct([100, 150, 50, 50]), "+50.0%");
  assert.equal(pct([100, 75, -25, -25]), "−25.0%");
  assert.equal(pct([100, 100, 0, 0]), "±0.0%");
  const f = (v) => `${v} u`;
  assert.deepEqual([3, -3, 0].map((v) => signed(v, f)), ["+3 u", "−3 u", "0 u"]);
});

test("colours: deeper with the ratio, full at ×4 and ÷4; grey when the same", () => {
  assert.equal(ratioColour(4), "hsl(0 85% 56%)");
  assert.equal(ratioColour(16), ratioColour(4));
  assert.equal(ratioColour(0.25), "hsl(215 85% 56%)");
  assert.equal(ratioColour(2), "hsl(0 65% 71%)");
  assert.equal(changeColourWithin([100, 101, 1, 1], 2), "#e5e7eb");
  assert.equal(changeColourWithin([100, 400, 300, 300], 2), ratioColour(4));
  assert.equal(changeColourWithin([null, 1, 1, null], 2), "hsl(280 62% 52%)");
});

test("a top-list row: the function, where it is, A, B, Δ and Δ% of its ranked figure", () => {
  const strings = ["main", "parseJson", "pkg:/source/json/parse.brs", "render"];
  const quads = (wall) => [wall, [1, 1, 0, 0]];
  const diff = {
    metrics: ["self_wall", "calls"],
    functions: [
      [0, 1, 2, "changed", quads([10, 30, 20, 200])],
      [0, 3, 2, "added", quads([null, 7, 7, null])],
    ],
  };
  const fmt = { wall: (v) => `${v} ms`, calls: String };
  assert.deepEqual(topRow(diff, strings, [0, "self_wall", 42], fmt, 2), {
    function: "parseJson",
    module: "main",
    file: "pkg:/source/json/parse.brs",
    where: "parse.brs:42",
    label: "Self wall",
    a: "10 ms",
    b: "30 ms",
    delta: "+20 ms",
    pct: "+200.0%",
    kind: "grew",
    colour: ratioColour(3),
  });
  const added = topRow(diff, strings, [1, "self_wall", 0], fmt, 2);
  assert.deepEqual([added.where, added.a, added.pct, added.kind], ["parse.brs", "–", "new", "new"]);
});
