// How the sortable tables order rows (assets/src/sorting.js), in Node.
import assert from "node:assert/strict";
import { test } from "node:test";
import { compareOn } from "../../rokuprof/export/report/assets/src/sorting.js";

const rows = [
  { name: "beta", change: -7 },
  { name: "Alpha", change: 3 },
  { name: "gamma", change: 0 },
  { name: "alpha", change: 5 },
];
const name = { get: (r) => r.name };
const change = { get: (r) => r.change };
const sorted = (col, dir, bySize) => rows.slice().sort((a, b) => compareOn(col, a, b, bySize) * dir).map((r) => r.name);

test("text columns sort in the locale's order, either way", () => {
  assert.deepEqual(sorted(name, 1), ["alpha", "Alpha", "beta", "gamma"]);
  assert.deepEqual(sorted(name, -1), ["gamma", "beta", "Alpha", "alpha"]);
});

test("figures sort by value, or by size when a shrink counts as much as a growth", () => {
  assert.deepEqual(sorted(change, -1), ["alpha", "Alpha", "gamma", "beta"]);
  assert.deepEqual(sorted(change, -1, true), ["beta", "alpha", "Alpha", "gamma"]);
  assert.equal(compareOn(change, rows[0], rows[1], true), 4);
  assert.equal(compareOn(change, rows[0], rows[1]), -10);
});

test("equal rows compare as 0, so the table's own tie-break decides", () => {
  assert.equal(compareOn(name, rows[1], { name: "Alpha" }), 0);
  assert.equal(compareOn(change, rows[0], { change: 7 }, true), 0);
});
