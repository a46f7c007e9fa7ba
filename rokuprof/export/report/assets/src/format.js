// Formatting of figures (times, bytes, operations, counts, clock times, shares) and of paths
// shortened to a width, and the page's fixed wordings. Pure: no DOM, unit-tested in Node.

const nf0 = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const grouped = (v) => nf0.format(Math.round(v));
function fixed(v, digits) {
  return v.toFixed(Math.max(0, digits));
}
function sig(v) {
  // three significant figures, no trailing noise
  const a = Math.abs(v);
  return a >= 100 ? fixed(v, 0) : a >= 10 ? fixed(v, 1) : fixed(v, 2);
}
function fmtSeconds(s) {
  const a = Math.abs(s);
  if (a === 0) return "0 s";
  if (a >= 60) return `${grouped(s)} s`;
  if (a >= 1) return `${sig(s)} s`;
  if (a >= 1e-3) return `${sig(s * 1e3)} ms`;
  return `${sig(s * 1e6)} µs`;
}
function fmtBytes(v) {
  const a = Math.abs(v);
  if (a < 1024) return `${grouped(v)} B`;
  if (a < 1024 ** 2) return `${sig(v / 1024)} KiB`;
  if (a < 1024 ** 3) return `${sig(v / 1024 ** 2)} MiB`;
  return `${sig(v / 1024 ** 3)} GiB`;
}
function fmtOps(v) {
  const a = Math.abs(v);
  if (a < 1e4) return grouped(v);
  if (a < 1e6) return `${sig(v / 1e3)} k`;
  if (a < 1e9) return `${sig(v / 1e6)} M`;
  return `${sig(v / 1e9)} G`;
}
const CPU_TITLE = "CPU in operations, as the device counts them (device-independent; not a time)";
// CPU is counted in operations (the .bsprof CPU field: device-independent, not time).
const fmtCpu = (v) => `${fmtOps(v)} ops`;
const fmtCount = (v) => grouped(v);
const pct = (v, total) => (total > 0 ? `${((100 * v) / total).toFixed(1)}%` : "–");
function fmtClock(epoch) {
  if (epoch == null) return "unknown";
  return new Date(epoch * 1000).toISOString().replace("T", " ").replace(/\.(\d{3})Z$/, ".$1 UTC");
}

const NO_MEMORY = "no memory data: the app was built without bsprof_enable_mem=1";
// A capture's status as the page words it.
const STATUS_TEXT = { complete: "complete", incomplete: "incomplete — truncated", corrupt: "corrupt — decoding stopped" };
// A path shortened at "/" to at most `room` characters: the leading directories give way to
// "…" whole, one at a time ("…/components/HomeScene.brs:10", then "…/HomeScene.brs:10"); the
// file's own name is never cut, even when it alone is longer. One pass over the path.
function shortPath(path, room) {
  if (path.length <= room) return path;
  let last = -1;
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    if (path.length - i + 1 <= room) return `…${path.slice(i)}`;
    last = i;
  }
  return last >= 0 ? `…${path.slice(last)}` : path;
}

export { CPU_TITLE, NO_MEMORY, STATUS_TEXT, fixed, fmtBytes, fmtClock, fmtCount, fmtCpu, fmtOps, fmtSeconds, grouped, nf0, pct, shortPath, sig };
