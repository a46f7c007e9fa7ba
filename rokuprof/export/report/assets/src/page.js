// The page skeleton: the heading, the timeline's panel, the tabs, the toolbar and one section per
// view (each view module fills its own).
import { D, DF, HZ, facts } from "./data.js";
import { NO_MEMORY, STATUS_TEXT, fmtBytes, fmtSeconds, grouped } from "./format.js";
import { vitalText } from "./units.js";
import { SESSION, VITALS, fnName, heapEnd, heapPeak, marks, threadName } from "./model.js";
import { state } from "./state.js";
import { el, text } from "./dom.js";
import { SRC } from "./links.js";
import { seriesSubtitle } from "./verdictrows.js";
import { abTrace, abVerdict, abVerdicts, abWarning, diffBasis, sideFacts } from "./abfacts.js";

const app = document.getElementById("app");
// The heading names the app, its version and the capture, as the page's <title> does
// (written by page.py, so that it is there before this script runs).
const appOf = (x) => [x.app || "(unnamed app)", x.appVersion].filter(Boolean).join(" ");
// A diff page names both builds when they differ ("Café TV 2.4.1 → Café TV 2.5.0": A → B).
const title = DF && appOf(DF.sides[0]) !== appOf(DF.sides[1]) ? `${appOf(DF.sides[0])} → ${appOf(DF.sides[1])}` : appOf(facts);
const captureName = DF ? `diff ${DF.label}` : facts.capture || "capture";
const device = [facts.vendor, facts.model].filter(Boolean).join(" ");
const header = el(
  "header",
  { class: "top" },
  el("h1", { id: "heading" }, text(`${title} `), el("span", { class: "capture", id: "capture", title: captureName, text: captureName })),
  el("span", { class: "sub", text: [device && `on ${device}`, facts.firmware && `firmware ${facts.firmware}`].filter(Boolean).join(", ") }),
  DF && DF.series && seriesSubtitle(DF.series) ? el("span", { class: "sub", id: "ab-runs", text: seriesSubtitle(DF.series) }) : null,
  DF ? null : el("span", { class: "sub", text: `${fmtSeconds(facts.duration)} run` }),
  DF ? null : el("span", { class: `badge ${facts.status}`, id: "status", text: STATUS_TEXT[facts.status] || facts.status }),
  el("span", { class: "brand", text: `rokuprof ${facts.rokuprof}` }),
);
app.append(header);
// A diff page: both captures' facts under the heading, and what its figures are.
if (DF && DF.verdict) app.append(abVerdict(DF.verdict));
if (DF && DF.trace) app.append(abTrace(DF.trace));
if (DF && DF.warning) app.append(abWarning(DF.warning));
const abTop = DF ? el("section", { class: "ab-top", id: "ab-top", "aria-label": "Verdicts, top regressions and improvements" }) : null;
// The verdicts first in it (abfacts.js): a row of their own, or only a headline beside the lists.
if (DF && DF.verdicts) abTop.append(abVerdicts(DF.verdicts));
if (DF) app.append(abTop);
if (DF) app.append(el("div", { class: "ab", id: "ab-sides" }, sideFacts(DF.sides[0], "A"), sideFacts(DF.sides[1], "B"), el("p", { class: "basis", id: "ab-basis", text: `${diffBasis()} Timeline, flame graph (coloured by change), stack chart and bottom-up show B.` })));
if (facts.problem) app.append(el("p", { class: `problem ${facts.status}`, id: "problem", text: `This capture is ${facts.status}: ${facts.problem}. The report shows everything read before that.` }));
if (D.other) app.append(el("p", { class: "problem", id: "other-paths", text: D.other.note }));
const main = el("main");
app.append(main);

// Timeline
const tlCanvas = el("canvas", { id: "timeline", "aria-label": "Timeline: busy share per thread and live heap; drag to select a time range" });
const rangeText = el("span", { class: "range", id: "range-text" });
const heapText = el("span", { class: "heap", id: "heap-text" });
if (facts.memoryOps) {
  heapText.append(
    text("peak live heap "), el("b", { "data-value": heapPeak, title: `${grouped(heapPeak)} bytes`, text: fmtBytes(heapPeak) }),
    text(" · live heap at end "), el("b", { "data-value": heapEnd, title: `${grouped(heapEnd)} bytes`, text: fmtBytes(heapEnd) }),
  );
} else heapText.textContent = NO_MEMORY;
const clearRange = el("button", { class: "btn", id: "range-clear", hidden: true, text: "Whole run" });
// Marks: labelled lines over the canvas (elements, so that a label is text, never drawn markup).
const tlMarks = marks.length ? el("div", { class: "tl-marks", id: "timeline-marks", "aria-hidden": "true" }) : null;
const vitalsText = el("span", { class: "vitals", id: "vitals-text" });
VITALS.forEach((v, i) => {
  if (i) vitalsText.append(text(" · "));
  vitalsText.append(text(`${v.label} peak `), el("b", { "data-series": v.key, "data-points": v.points.length, "data-value": v.peak, style: `color: ${v.colour}`, text: vitalText(v, v.peak) }));
});
// The vitals in the selected range: each series' lowest, mean and highest reading there.
const vitalsRange = el("p", { class: "vitals", id: "vitals-range", hidden: true });
function renderVitalsRange() {
  vitalsRange.replaceChildren();
  vitalsRange.hidden = !state.range || !VITALS.length;
  if (vitalsRange.hidden) return;
  const [a, b] = state.range.map((x) => x / HZ);
  vitalsRange.append(text(`${fmtSeconds(a)} – ${fmtSeconds(b)}: `));
  VITALS.forEach((v, i) => {
    if (i) vitalsRange.append(text(" · "));
    let n = 0, sum = 0, min = Infinity, max = -Infinity;
    for (const [at, x] of v.points) {
      if (at < a || at > b) continue;
      n++;
      sum += x;
      if (x < min) min = x;
      if (x > max) max = x;
    }
    if (!n) {
      vitalsRange.append(el("span", { "data-series": v.key, "data-count": 0, text: `${v.label}: no reading` }));
      return;
    }
    const mean = sum / n;
    vitalsRange.append(
      text(`${v.label} `),
      el("span", { "data-series": v.key, "data-count": n, "data-min": min, "data-mean": mean, "data-max": max, style: `color: ${v.colour}`, text: `min ${vitalText(v, min)} · mean ${vitalText(v, mean)} · max ${vitalText(v, max)}` }),
      text(` (${grouped(n)} reading${n === 1 ? "" : "s"})`),
    );
  });
}
// The timeline is compact (thin lanes, the counters in one strip, their figures in its head
// row) and collapses to that row; the reader's choice is kept (localStorage "rokuprof.timeline").
// Lane names are text beside the canvas, each with its thread's colour.
const timelineView = { open: true };
try {
  timelineView.open = localStorage.getItem("rokuprof.timeline") !== "collapsed";
} catch {
  /* storage unavailable: open */
}
const tlLabels = el("div", { class: "tl-labels", id: "timeline-threads" });
const tlToggle = el("button", { class: "tl-toggle", id: "timeline-toggle", "aria-expanded": String(timelineView.open), "aria-controls": "timeline-body", title: "Hide or show the timeline", text: "Timeline" });
const tlHint = "Drag across the timeline to look at a time range; every view follows it.";
const tlSection = el(
  "section",
  { class: `panel timeline${timelineView.open ? "" : " collapsed"}`, id: "timeline-panel" },
  el("div", { class: "head" }, el("h2", null, tlToggle), rangeText, clearRange, heapText, VITALS.length ? vitalsText : null, el("span", { class: "hint", title: tlHint, text: tlHint })),
  el("div", { class: "tl-body", id: "timeline-body" }, el("div", { class: "tl-wrap" }, tlCanvas, tlLabels, tlMarks), ...(SESSION ? sessionParts() : [])),
);
main.append(tlSection);
// Below the timeline: the marks with their times, and what was left out of the session's files.
function sessionParts() {
  const out = VITALS.length ? [vitalsRange] : [];
  if (marks.length) {
    const list = el("ol", { class: "marks", id: "marks", "aria-label": "Marks" });
    for (const [at, label] of marks) list.append(el("li", { "data-at": at }, el("span", { class: "t", text: fmtSeconds(at) }), text(" "), el("span", { class: "label", text: label })));
    out.push(list);
  }
  if (SESSION.notes.length) out.push(el("p", { class: "note", id: "session-notes", text: SESSION.notes.join("; ") }));
  return out;
}

// Toolbar shared by the views
const TABS = [
  ["flame", "Flame graph"],
  ["stack", "Stack chart"],
  ["tree", "Call tree"],
  ["bottomup", "Bottom-up"],
  ["functions", "Functions"],
  ["lines", "Lines"],
  ...(SRC && SRC.label != null ? [["source", "Source"]] : []),
  ["memory", "Memory"],
  ["facts", "Facts"],
];
const tabButtons = {};
const nav = el("nav", { class: "tabs", role: "tablist" });
for (const [key, label] of TABS) {
  tabButtons[key] = el("button", { role: "tab", id: `tab-${key}`, "aria-selected": "false", text: label });
  nav.append(tabButtons[key]);
}
const threadSelect = el("select", { id: "thread" }, el("option", { value: -1, text: "All threads" }));
threadName.forEach((name, t) => threadSelect.append(el("option", { value: t, text: name })));
const hideIdleBox = el("input", { type: "checkbox", id: "hide-idle", checked: state.hideIdle });
const waitsBox = el("span", { class: "waits", id: "waits" });
const toolbar = el(
  "div",
  { class: "toolbar" },
  el("label", null, "Thread", threadSelect),
  el("label", { title: "Leave out the functions marked as waits (idle time) everywhere" }, hideIdleBox, "Hide idle"),
  waitsBox,
);
main.append(nav, toolbar);
const views = {};
for (const [key] of TABS) {
  views[key] = el("section", { class: "view", id: `view-${key}`, role: "tabpanel", hidden: true });
  main.append(views[key]);
}
app.append(el("footer", { class: "bottom", text: `Made by rokuprof ${facts.rokuprof} from ${grouped(facts.bytes)} bytes of .bsprof stream. Figures are the profile tables' exact counters; in a time range, time, calls and bytes live at the end are apportioned by each call path's samples in the range; allocations and frees are those that arrived in it (exact, to the memory steps the Memory tab names).` }));

const datalist = el("datalist", { id: "fn-names" });
[...new Set(fnName)].sort().forEach((n) => datalist.append(el("option", { value: n })));
app.append(datalist);

export { TABS, abTop, clearRange, device, hideIdleBox, rangeText, renderVitalsRange, tabButtons, threadSelect, timelineView, tlCanvas, tlLabels, tlMarks, tlSection, tlToggle, toolbar, views, waitsBox };
