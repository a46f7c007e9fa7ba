// The Facts tab: the capture's facts (and, on the A/B page, both sides').
import { D, DF, HZ, WPS, facts } from "./data.js";
import { NO_MEMORY, STATUS_TEXT, fmtBytes, fmtClock, fmtCount, fmtCpu, fmtSeconds, grouped } from "./format.js";
import { fmtWall, vitalText } from "./units.js";
import { SESSION, SLOTS, VITALS, heapEnd, heapPeak, marks, threadName } from "./model.js";
import { el } from "./dom.js";
import { sideFacts } from "./abfacts.js";
import { device, views } from "./page.js";

function renderFacts() {
  const v = views.facts;
  v.replaceChildren();
  const dl = el("dl", { class: "facts panel", id: "facts" });
  if (DF) v.append(el("div", { class: "ab panel", id: "facts-ab" }, sideFacts(DF.sides[0], "A"), sideFacts(DF.sides[1], "B")), el("h2", { class: "section", text: `B's stream (${DF.sides[1].input})` }));
  const ratio = facts.sampleRatio ? `${facts.sampleRatio[0] ?? "?"} requested, ${facts.sampleRatio[1] ?? "?"} actual` : "unknown";
  const flags = [facts.lineData ? "line data" : "no line data", facts.memoryOps ? "memory operations" : "no memory operations"].join(", ");
  const rows = [
    ["App", [facts.app, facts.appVersion].filter(Boolean).join(" ") || "unknown"],
    ["Supplemental info", facts.supplemental || "–"],
    ["Device", device || "unknown"],
    ["Firmware", facts.firmware || "unknown"],
    ["Profiler flags", flags],
    ["Sample ratio", ratio],
    ["Start", fmtClock(facts.start)],
    ["End", fmtClock(facts.end)],
    ["Duration", fmtSeconds(facts.duration)],
    ["Capture status", facts.problem ? `${STATUS_TEXT[facts.status] || facts.status}: ${facts.problem}` : STATUS_TEXT[facts.status] || facts.status],
    ["Stream", `${grouped(facts.bytes)} bytes, ${grouped(facts.entries)} entries, .bsprof format ${facts.format || "?"}`],
    ["Wall-time unit", `${facts.wallUnit} (${grouped(WPS)} per second; Roku does not publish it)`],
    ["Threads", threadName.join(", ")],
    ["Live heap", facts.memoryOps ? `peak ${fmtBytes(heapPeak)}, at end ${fmtBytes(heapEnd)} (${grouped(heapEnd)} bytes in ${grouped(D.totals.liveCount)} blocks)` : NO_MEMORY],
    ["Totals", `${fmtWall(D.totals.wall)} wall, ${fmtCpu(D.totals.cpu)} CPU, ${fmtCount(D.totals.calls)} calls, ${fmtCount(D.totals.paths)} call paths`],
    ["Timeline", `${grouped(SLOTS)} synthetic samples per thread at ${HZ} Hz`],
    ["Made by", `rokuprof ${facts.rokuprof}`],
  ];
  if (SESSION) {
    const named = marks.slice(0, 20).map(([at, label]) => `${label} (${fmtSeconds(at)})`);
    if (marks.length > 20) named.push(`and ${grouped(marks.length - 20)} more (listed under the timeline)`);
    rows.push(["Marks", named.length ? named.join(", ") : "none"]);
    rows.push(["Device vitals", VITALS.length ? `${grouped(SESSION.readings)} readings; ${VITALS.map((v) => `${v.label} peak ${vitalText(v, v.peak)}`).join(", ")}` : "none"]);
    for (const n of SESSION.notes) rows.push(["Session note", n]);
  }
  for (const w of facts.warnings || []) rows.push(["Warning", w]);
  for (const [k, val] of rows) dl.append(el("dt", { text: k }), el("dd", { "data-fact": k, text: val }));
  v.append(dl);
}

export { renderFacts };
