// The A/B page's facts: the gate's verdict, the apps warning, each side's facts and the basis of
// its figures (the heading of a diff page, and its Facts tab).
// The gate's verdict (diff --fail-over), as the command decided its exit status: first on the page.
// Its words are Python's (export/diff_summary.verdict_text), the line the command prints.
import { DF, PER_SECOND } from "./data.js";
import { STATUS_TEXT, fmtBytes, fmtCpu, fmtSeconds } from "./format.js";
import { fmtWall } from "./units.js";
import { el, text } from "./dom.js";
import { shownVerdicts, verdictHeadline, verdictRow } from "./verdictrows.js";

function abVerdict(v) {
  return el("p", { class: v.passed ? "verdict passed" : "verdict failed", id: "ab-verdict", role: "status", text: v.text });
}
// The verdicts (diff, every function judged per figure: rokuprof/verdict/judge.py), per device
// model: its headline, a row per verdict that is not `same` (the command's line as its title,
// each side's runs as a box plot on one scale when it has more than one); the headline counts the
// `same` ones.
// Device text (models, names, files) only as text.
const VERDICT_FMT = { cpu: fmtCpu, wall: fmtWall, bytes: fmtBytes };
function boxPlot(plots, spreads) {
  if (!plots[0] && !plots[1]) return el("span", { class: "note", text: "1 run each" });
  const box = el("span", { class: "boxplot", role: "img", "aria-label": spreads.filter(Boolean).join("; ") });
  plots.forEach((g, k) => {
    if (!g) return;
    const lane = el("span", { class: `lane ${k ? "b" : "a"}` });
    lane.append(
      el("i", { class: "whisker", style: `left: ${g.whisker[0]}%; width: ${g.whisker[1] - g.whisker[0]}%` }),
      el("i", { class: "box", style: `left: ${g.box[0]}%; width: ${Math.max(0.5, g.box[1] - g.box[0])}%` }),
      el("i", { class: "median", style: `left: ${g.median}%` }),
    );
    box.append(lane);
  });
  return box;
}
function abVerdicts(judgements) {
  const listed = Object.values(judgements).some((j) => shownVerdicts(j).length);
  // With no verdict to list, only the headlines: beside the top lists, not a row of their own.
  const section = el("section", { class: listed ? "ab-verdicts" : "ab-verdicts brief", id: "ab-verdicts", "aria-label": "Verdicts" });
  for (const [model, j] of Object.entries(judgements)) {
    const rows = shownVerdicts(j).map((v) => verdictRow(v, VERDICT_FMT, j.per_second));
    const part = el("div", { class: "ab-model", "data-model": model, "data-outcome": j.outcome });
    // One line a model, its count of `same` verdicts included: "Verdicts on 4800X: regressed: …".
    part.append(el("h2", { class: `headline ${j.outcome}` }, text("Verdicts on "), el("b", { class: "model", text: model || "(device model unknown)" }), text(": "), el("span", { class: "outcome", text: verdictHeadline(j) })));
    if (rows.length) {
      const hint = "Hover a row for the command's line";
      const head = el("tr", { title: hint }, ...["Function", "Figure", "Change", "B", "A", "Runs (A grey, B blue)", "p", "Verdict"].map((h, k) => el("th", { class: k < 2 || k === 5 ? "text" : null, text: h })));
      const body = el("tbody");
      for (const r of rows) {
        const spreads = [r.spreadB && `B ${r.spreadB}`, r.spreadA && `A ${r.spreadA}`];
        body.append(el(
          "tr",
          { class: r.outcome, "data-function": r.function, "data-outcome": r.outcome, title: r.line },
          el("td", { class: "text fn" }, el("b", { text: r.function }), el("span", { class: "loc", text: r.file.slice(r.file.lastIndexOf("/") + 1) })),
          el("td", { class: "text", text: r.figure }),
          el("td", { text: r.change }),
          el("td", { title: r.spreadB && `B ${r.spreadB}` }, text(r.b), r.rangeB ? el("span", { class: "range", text: r.rangeB }) : null),
          el("td", { title: r.spreadA && `A ${r.spreadA}` }, text(r.a), r.rangeA ? el("span", { class: "range", text: r.rangeA }) : null),
          el("td", { class: "text runs", title: spreads.filter(Boolean).join("\n") || null }, boxPlot(r.plots, spreads)),
          el("td", { text: r.p }),
          el("td", { class: "outcome" }, el("span", { class: `outcome-badge ${r.outcome}`, text: r.outcome })),
        ));
      }
      part.append(el("div", { class: "ab-verdict-list" }, el("table", { class: "data compact" }, el("thead", null, head), body)));
    }
    section.append(part);
  }
  return section;
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

export { abTrace, abVerdict, abVerdicts, abWarning, diffBasis, sideFacts };
