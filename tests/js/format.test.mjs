// The page's formatters and path shortening (assets/src/format.js), in Node.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fmtBytes, fmtClock, fmtCount, fmtOps, fmtSeconds, pct, shortPath, sig } from "../../rokuprof/export/report/assets/src/format.js";

test("seconds take the unit that keeps three significant figures", () => {
  assert.equal(fmtSeconds(0), "0 s");
  assert.equal(fmtSeconds(90), "90 s");
  assert.equal(fmtSeconds(1234.4), "1,234 s");
  assert.equal(fmtSeconds(1.5), "1.50 s");
  assert.equal(fmtSeconds(12.34), "12.3 s");
  assert.equal(fmtSeconds(0.0123), "12.3 ms");
  assert.equal(fmtSeconds(2e-6), "2.00 µs");
  assert.equal(fmtSeconds(-0.5), "-500 ms");
});

test("bytes are binary multiples, operations decimal ones", () => {
  assert.deepEqual([512, 2048, 5 * 1024 ** 2, 3 * 1024 ** 3].map(fmtBytes), ["512 B", "2.00 KiB", "5.00 MiB", "3.00 GiB"]);
  assert.deepEqual([9999, 12345, 2.5e6, 7e9].map(fmtOps), ["9,999", "12.3 k", "2.50 M", "7.00 G"]);
  assert.equal(fmtCount(1234567.4), "1,234,567");
  assert.deepEqual([123.4, 12.34, 1.234].map(sig), ["123", "12.3", "1.23"]);
});

test("shares and clock times", () => {
  assert.equal(pct(1, 4), "25.0%");
  assert.equal(pct(1, 0), "–");
  assert.equal(fmtClock(null), "unknown");
  assert.equal(fmtClock(0), "1970-01-01 00:00:00.000 UTC");
  assert.equal(fmtClock(1700000000.25), "2023-11-14 22:13:20.250 UTC");
});

test("a path is shortened at / and never cuts the file's own name", () => {
  const path = "pkg:/components/HomeScene.brs:10";
  assert.equal(shortPath(path, 40), path);
  assert.equal(shortPath(path, 30), "…/components/HomeScene.brs:10");
  assert.equal(shortPath(path, 20), "…/HomeScene.brs:10");
  assert.equal(shortPath(path, 5), "…/HomeScene.brs:10");
  assert.equal(shortPath("no-slash-at-all.brs", 5), "no-slash-at-all.brs");
});

test("over generated paths: whole names, the longest suffix that fits", () => {
  let seed = 29;
  const rand = (n) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  for (let k = 0; k < 500; k++) {
    const parts = Array.from({ length: 1 + rand(6) }, () => "abcXYZ_.-09é".slice(rand(6), 7 + rand(6)));
    const path = `pkg:/${parts.join("/")}`;
    const room = 1 + rand(50);
    const shown = shortPath(path, room);
    const name = path.slice(path.lastIndexOf("/"));
    if (path.length <= room) {
      assert.equal(shown, path);
      continue;
    }
    assert.ok(shown.startsWith("…/") && path.endsWith(shown.slice(1)) && shown.endsWith(name), `${path} ${room} ${shown}`);
    if (name.length + 1 <= room) {
      assert.ok(shown.length <= room);
      const cut = path.length - shown.length + 1; // where the shown suffix starts
      const longer = path.lastIndexOf("/", cut - 1);
      assert.ok(longer < 0 || path.length - longer + 1 > room, `${path} ${room} ${shown}`);
    } else assert.equal(shown, `…${name}`);
  }
});
