// The contract between Python and the page: the report's data model, schema "rokuprof-report/1",
// as rokuprof/export/report/model.py writes it (with diff_model.py's `diff`, timeline_extras.py's
// `session` and source.py's `source`). JSDoc types only, checked by `npm run typecheck` (tsc
// --checkJs); rokuprof/export/report/report-model.schema.json says the same for the Python side,
// whose tests validate real models against it. Every name and file is an index into `strings`.
// Keep the three in step.

/**
 * @typedef {object} ReportFacts
 * @property {string | null} app
 * @property {string | null} appVersion
 * @property {string} capture
 * @property {string | null} supplemental
 * @property {string | null} vendor
 * @property {string | null} model
 * @property {string | null} firmware
 * @property {string | null} format .bsprof version "major.minor.patch"
 * @property {[number | null, number | null] | null} sampleRatio requested, actual
 * @property {boolean} lineData
 * @property {boolean} memoryOps
 * @property {number | null} start epoch seconds
 * @property {number | null} end
 * @property {number} duration seconds
 * @property {"complete" | "incomplete" | "corrupt"} status
 * @property {string | null} problem
 * @property {string[]} warnings
 * @property {number} bytes of .bsprof stream read
 * @property {number} entries
 * @property {string} rokuprof version
 * @property {string} wallUnit
 * @property {number} wallPerSecond wall units per second
 */

/**
 * @typedef {object} ReportTotals
 * @property {number} cpu
 * @property {number} wall
 * @property {number} calls
 * @property {number} allocCount
 * @property {number} allocBytes
 * @property {number} frees
 * @property {number} reallocs
 * @property {number} freedBytes
 * @property {number} unknownFrees
 * @property {number} liveBytes
 * @property {number} liveCount
 * @property {number} paths
 */

/**
 * Functions as columns: a function is (thread, name, file); `line` is its first line (0: unknown).
 * @typedef {{thread: number[], name: number[], file: number[], line: number[]}} ReportFunctions
 */

/**
 * The call paths as columns: `node` (the call tree's node of the path), its id in the stream and
 * its exact counters (PATH_COLUMNS in model.py).
 * @typedef {object} ReportPaths
 * @property {number[]} node
 * @property {number[]} id
 * @property {number[]} cpu
 * @property {number[]} wall
 * @property {number[]} calls
 * @property {number[]} allocCount
 * @property {number[]} allocBytes
 * @property {number[]} frees
 * @property {number[]} reallocs
 * @property {number[]} freedBytes
 * @property {number[]} liveCount
 * @property {number[]} liveBytes
 * @property {number[]} callLine
 */

/**
 * Memory operations by when they arrived: per bucket the slots since the previous bucket's and its
 * row count, then per row the gap to the previous row's path and the five memory columns.
 * @typedef {{flat: number[], buckets: number, merged: number, unplaced: [number, number]}} ReportMemory
 */

/**
 * The timeline: per thread (its index) runs of samples as flat (gap, node, count) triples; the
 * live heap as flat (slot gap, byte change) pairs.
 * @typedef {object} ReportTimeline
 * @property {number} hz synthetic samples per second
 * @property {number} slots
 * @property {Array<[number, number[]]>} lanes
 * @property {number[]} heap
 * @property {ReportMemory} [memory]
 */

/**
 * A session's marks ([seconds since the run start, label]) and device vitals (flat seconds,
 * value pairs).
 * @typedef {object} ReportSession
 * @property {Array<[number, string]>} marks
 * @property {number[]} cpu
 * @property {number[]} mem
 * @property {number} readings
 * @property {string[]} notes
 */

/**
 * A session's Perfetto app trace (trace_lanes.py): its threads' slices as columns (times in
 * seconds since the run's start, placed by `alignment`: "clock", the trace's clock snapshot, or
 * "arrival", its first event at the run's start), the missed frames ([start, end, cause index])
 * and the findings, each with `refs`: indexes of its slices. A slice's `fn` is the report's
 * function its call stack names (-1: none); names are indexes into `names` (device text).
 * @typedef {object} ReportTrace
 * @property {"clock" | "arrival"} alignment
 * @property {string} alignmentNote
 * @property {number | null} start
 * @property {number | null} end
 * @property {number} total slices in the trace
 * @property {string[]} names
 * @property {Array<{name: string, tid: number | null, rows: number, slices: number}>} lanes
 * @property {{lane: number[], start: number[], end: number[], depth: number[], name: number[], fn: number[]}} slices
 * @property {Array<[number, string]>} stacks slice, its call stack
 * @property {{figures: Object<string, number>, causes: string[], missed: Array<[number, number, number]>}} frames
 * @property {{rendezvous: Array<{thread: string, field: string, count: number, total_ms: number, max_latency_ms: number, max_exec_ms: number, refs: number[]}>, observers: {count: number, outermost_ms: number, naive_ms: number, max_depth: number, refs: number[]}, script: Array<{callstack: string, slices: number, wall_ms: number, cpu_ms: number | null, state: string, fn: number, refs: number[]}>}} findings
 * @property {string[]} notes what was left out
 */

/**
 * report --source / --editor-url: the editor link template and the hot functions' source.
 * @typedef {object} ReportSource
 * @property {string | null} label
 * @property {string | null} editor
 * @property {Array<[number, string | null, Array<[number, string[]]>]>} files file, note, chunks
 * @property {Array<[number, number, number, number, string | null]>} fns fn, file row, first, last, note
 * @property {Array<[number, string]>} paths file, local path
 * @property {string[]} notes
 */

/** @typedef {[number | null, number | null, number | null, number | null]} Quad A, B, Δ, Δ% */

/**
 * One side of the A/B page.
 * @typedef {object} DiffSide
 * @property {string} input
 * @property {string | null} app
 * @property {string | null} appVersion
 * @property {string} capture
 * @property {number | null} start
 * @property {number} seconds
 * @property {string} timing
 * @property {string} status
 * @property {string | null} problem
 * @property {number} functions
 */

/**
 * A figure across a side's runs (verdict/series.py Spread.to_json).
 * @typedef {{median: number, q1: number, q3: number, min: number, max: number, runs: number}} DiffSpread
 */

/**
 * One function's verdict on one figure (verdict/judge.py Verdict.to_json): `line` is the
 * command's one-line explanation; `change_pct` null from 0 (new).
 * @typedef {object} DiffVerdict
 * @property {string} module
 * @property {string} function
 * @property {string} file
 * @property {"self_cpu" | "self_wall" | "self_alloc_bytes" | "self_live_bytes"} metric
 * @property {"counter" | "clock"} kind
 * @property {"regressed" | "improved" | "same" | "unknown"} verdict
 * @property {number | null} change_pct
 * @property {number} p
 * @property {number | null} [effect_iqr]
 * @property {DiffSpread} a
 * @property {DiffSpread} b
 * @property {string} line
 */

/**
 * Every verdict on one device model (verdict/judge.py Judgement.to_json), regressions first.
 * @typedef {object} DiffJudgement
 * @property {"regressed" | "unknown" | "passed"} outcome
 * @property {number} runs
 * @property {number} baseline_runs
 * @property {boolean} per_second
 * @property {Object<string, number>} [rules]
 * @property {{regressed: number, unknown: number, improved: number, same: number}} counts
 * @property {DiffVerdict[]} verdicts
 */

/**
 * Which run of a side's series the page is drawn from (the one whose total self wall is the
 * series' median): the series as named, the run, its place from 1 and the series' run count.
 * @typedef {{input: string, run: string, index: number, runs: number}} DiffSeriesRun
 */

/**
 * The A/B page's data (diff_model.py): B's model carries it.
 * @typedef {object} ReportDiff
 * @property {string | null} warning
 * @property {{regressions: Array<[number, string, number]>, improvements: Array<[number, string, number]>}} top
 * @property {string} label
 * @property {boolean} perSecond
 * @property {number} sameWithinPct
 * @property {[DiffSide, DiffSide]} sides
 * @property {string[]} metrics
 * @property {Array<[number, number, number, string, Quad[]]>} functions module, function, file, status, figures
 * @property {string[]} lineMetrics
 * @property {Array<[number, number, number, number, string, Quad[]]>} lines
 * @property {string[]} siteMetrics
 * @property {Array<[number, number[], string, Quad[]]>} sites module, call path (function, file pairs), status, figures
 * @property {{parent: number[], thread: number[], name: number[], file: number[], figures: Object<string, {a: Array<number | null>, b: Array<number | null>, d: Array<number | null>, p: Array<number | null>, selfA: Array<number | null>, selfB: Array<number | null>}>}} tree
 * @property {number[]} flame per node of B's model, its node of the merged tree
 * @property {{passed: boolean, text: string} | null} [verdict]
 * @property {{per_second: boolean, lines: string[], failed?: string[]} | null} [trace] the app traces' figures (two sessions with traces)
 * @property {Object<string, DiffJudgement> | null} [verdicts] every verdict, per device model
 * @property {[DiffSeriesRun | null, DiffSeriesRun | null] | null} [series] a side's series: the run drawn (null: one capture)
 */

/**
 * The report's data model.
 * @typedef {object} ReportModel
 * @property {"rokuprof-report/1"} schema
 * @property {ReportFacts} facts
 * @property {ReportTotals} totals
 * @property {Array<[number, number]>} threads module, its name
 * @property {ReportFunctions} functions
 * @property {{parent: number[], fn: number[]}} nodes the call tree: thread roots first (fn -1)
 * @property {ReportPaths} paths
 * @property {Array<[number, number[]]>} sites path row, its lines
 * @property {number[]} lines flat (path row, line, cpu, wall)
 * @property {number[]} allocLines flat (path row, line, count, bytes)
 * @property {ReportTimeline} timeline
 * @property {string[]} strings
 * @property {{paths: number, share: number, note: string}} [other] cold call paths added up
 * @property {ReportSession} [session]
 * @property {ReportTrace} [trace] a session's app trace
 * @property {ReportSource} [source]
 * @property {ReportDiff} [diff]
 * @property {string} [view] the tab to open
 */

export {};
