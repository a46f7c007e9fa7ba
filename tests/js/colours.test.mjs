// Colours by name (assets/src/colours.js): a thread's colour follows its name, never its position.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PALETTE, fileColour, hashString, threadColours } from "../../rokuprof/export/report/assets/src/colours.js";

const NAMES = ["main", "render", "Task:Fetcher", "Task:Player", "HomeScene", "ui", "audio", "net"];

test("a thread's colour is its name's, whatever the order or position of the page's threads", () => {
  const a = threadColours(NAMES);
  const b = threadColours([...NAMES].reverse().concat(["main"]));
  for (const name of NAMES) assert.equal(a(name), b(name), name);
});

test("the threads of one page never share a colour while the palette has room", () => {
  for (let n = 1; n <= PALETTE.length; n++) {
    const names = Array.from({ length: n }, (_, i) => `thread-${i}`);
    const colour = threadColours(names);
    assert.equal(new Set(names.map(colour)).size, n);
  }
});

test("two names that hash to one colour: the later in name order takes the next free one", () => {
  // find two names that collide in the palette
  const slot = (name) => {
    let h = hashString(name);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return (h >>> 0) % PALETTE.length;
  };
  const first = "t0";
  let other = "t1";
  for (let i = 1; slot(other) !== slot(first); i++) other = `t${i}`;
  const colour = threadColours([other, first]);
  const alone = threadColours([first]);
  assert.notEqual(colour(first), colour(other));
  assert.equal(colour(first < other ? first : other), alone(first < other ? first : other));
  const [h, s, l] = PALETTE[(slot(first) + 1) % PALETTE.length];
  assert.equal(colour(first < other ? other : first), `hsl(${h} ${s}% ${l - 12}%)`);
});

test("a file's colour is a function of its name (dimmed: pale)", () => {
  assert.equal(fileColour("pkg:/source/main.brs", "f"), fileColour("pkg:/source/main.brs", "f"));
  assert.notEqual(fileColour("pkg:/source/main.brs", "f"), fileColour("pkg:/source/other.brs", "f"));
  assert.match(fileColour("pkg:/source/main.brs", "f", true), /^hsl\(\d+ 10% 90%\)$/);
});
