// The A/B page's facts: the gate's verdict, the apps warning, each side's facts and the basis of
// its figures (the heading of a diff page, and its Facts tab).
// The gate's verdict (diff --fail-over), as the command decided its exit status: first on the page.
// Its words are Python's (export/diff_summary.verdict_text), the line the command prints.
import { DF, PER_SECOND } from "./data.js";
import { STATUS_TEXT, fmtSeconds } from "./format.js";
import { el } from "./dom.js";

function abVerdict(v) {
  return el("p", { class: v.passed ? "verdict passed" : "verdict failed", id: "ab-verdict", role: "status", text: v.text });
}
// The two sessions' app traces: missed frames and rendezvous time, a line each in the command's
// words (trace/compare.py), marked failed when the gate failed on them.
function abTrace(t) {
  const failed = t.failed || [];
  return el(
    "section",
    { class: failed.length ? "ab-trace failed" : "ab-trace", id: "ab-trace", "aria-label": "App traces" },
    el("h3", { text: "App traces" }),
    ...t.lines.map((line) => el("p", { class: "trace-figure", text: line })),
  );
}
// A and B are different apps: the command's warning, in its words (diff_summary.apps_warning).
function abWarning(w) {
  return el("p", { class: "problem", id: "ab-apps-warning", role: "note", text: w });
}
// The side facts: "A  a.bsprof · Café TV 2.4.1 · capture of … · 20.0 s run · complete".
function sideFacts(side, which) {
  const app = [side.app || "(unnamed app)", side.appVersion].filter(Boolean).join(" ");
  const status = STATUS_TEXT[side.status] || side.status;
  const run = side.seconds ? `${fmtSeconds(side.seconds)} run${side.timing && side.timing !== "footer" ? ` (${side.timing})` : ""}` : "run length unknown";
  return el(
    "p",
    { class: "side", "data-side": which.toLowerCase() },
    el("b", { class: "which", text: which }),
    el("span", { class: "input", "data-fact": "input", text: side.input }),
    el("span", { "data-fact": "app", text: app }),
    el("span", { "data-fact": "capture", text: side.capture }),
    el("span", { "data-fact": "duration", "data-value": side.seconds, text: run }),
    el("span", { class: `badge ${side.status}`, "data-fact": "status", text: side.problem ? `${status}: ${side.problem}` : status }),
  );
}
function diffBasis() {
  const [a, b] = DF.sides;
  return PER_SECOND
    ? `Figures per second of run: each capture's counts divided by its length (A ${fmtSeconds(a.seconds)}, B ${fmtSeconds(b.seconds)}), as rokuprof diff --per-second.`
    : `Figures are each run's whole counts, as rokuprof diff prints them${Math.abs(a.seconds - b.seconds) > 0.01 * Math.max(a.seconds, b.seconds) ? ` (the runs differ in length: ${fmtSeconds(a.seconds)} and ${fmtSeconds(b.seconds)}; --per-second compares rates)` : ""}.`;
}

export { abTrace, abVerdict, abWarning, diffBasis, sideFacts };
