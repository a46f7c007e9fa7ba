// What needs the page's wall-time unit: the wall-time formatter, the metrics the views size frames
// by, and the device vitals' wording.
import { WPS } from "./data.js";
import { fixed, fmtBytes, fmtCount, fmtCpu, fmtSeconds } from "./format.js";

const fmtWall = (v) => fmtSeconds(v / WPS);
// Metrics the flame graph and call tree can size frames by.
const METRICS = [
  { key: "wall", label: "Wall time", fmt: fmtWall, unit: "time" },
  { key: "cpu", label: "CPU", fmt: fmtCpu, unit: "operations" },
  { key: "calls", label: "Calls", fmt: fmtCount, unit: "calls" },
  { key: "allocBytes", label: "Alloc bytes", fmt: fmtBytes, unit: "bytes", memory: true },
  { key: "liveBytes", label: "Live bytes at end", fmt: fmtBytes, unit: "bytes", memory: true },
];
const METRIC = Object.fromEntries(METRICS.map((m) => [m.key, m]));
const vitalText = (v, x) => (v.key === "cpu" ? `${fixed(x, 0)} %` : fmtBytes(x));

export { METRIC, METRICS, fmtWall, vitalText };
