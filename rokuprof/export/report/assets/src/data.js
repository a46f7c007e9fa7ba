// The report's data: the model JSON in #report-data (written by rokuprof/export/report/model.py,
// schema rokuprof-report/1, typed in contract.js), and the few facts every module reads from it.

/** @type {import("./contract.js").ReportModel} */
const D = JSON.parse(document.getElementById("report-data").textContent);
const S = D.strings;
const facts = D.facts;
const WPS = facts.wallPerSecond || 1e6; // wall units per second
const HZ = D.timeline.hz;
// A diff page (rokuprof diff --html): two captures, A → B (diffmodel.js, diff.js).
const DF = D.diff || null;
const SAME_PCT = DF ? DF.sameWithinPct : 2;
const PER_SECOND = DF ? DF.perSecond : false;

export { D, DF, HZ, PER_SECOND, S, SAME_PCT, WPS, facts };
