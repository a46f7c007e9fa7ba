// The A/B page (rokuprof diff --html): its first screen's top regressions and improvements, and
// its Functions, Lines, Memory (allocation sites) and Call tree tabs.
import { DF, S, SAME_PCT } from "./data.js";
import { NO_MEMORY } from "./format.js";
import { METRIC, METRICS } from "./units.js";
import { DIFF_FIGURES, signed, topRow } from "./diffrows.js";
import { threadName } from "./model.js";
import { state } from "./state.js";
import { el, text } from "./dom.js";
import { diffBasis } from "./abfacts.js";
import { abTop, views } from "./page.js";
import { dirty, setTab } from "./actions.js";
import { clip, dataTable, sortableHead } from "./tables.js";
import { compareOn } from "./sorting.js";
import { DIFF_FMT, DT, TREE_FMT, changeColour, changeKind, fmtPct, treeLabel } from "./diffmodel.js";
import { setMetric } from "./flame.js";
import { fnFilterBox } from "./functions.js";

// The first screen's lists: the top regressions and improvements, rows of the command's ranked
// table (DF.top: [row of DF.functions, the figure it is ranked by, its line in B]), each with
// that figure's A, B, Δ and Δ% (diffrows.js topRow); a click shows
// the function in Functions with that figure.
function fillAbTop(box) {
  const list = (id, heading, rows) => {
    const body = el("tbody");
    for (const [i, figure, line] of rows) {
      const t = topRow(DF, S, [i, figure, line], DIFF_FMT, SAME_PCT);
      const chip = el("span", { class: `chg ${t.kind}` });
      chip.style.background = t.colour;
      const show = () => {
        state.fnFilter = fnFilterBox.value = t.function;
        state.diffFigure = figure;
        dirty.add("functions");
        setTab("functions");
        views.functions.scrollIntoView({ block: "start" });
      };
      body.append(el(
        "tr",
        { "data-row": i, "data-function": t.function, "data-figure": figure, tabindex: 0, title: `${t.function} (${t.module}) in ${t.file}: show it in Functions`, onclick: show, onkeydown: (e) => e.key === "Enter" && show() },
        el("td", { class: "text fn" }, el("b", { text: t.function }), el("span", { class: "loc", text: t.where })),
        el("td", { class: "text", text: t.label }),
        el("td", { text: t.a }),
        el("td", { text: t.b }),
        el("td", { text: t.delta }),
        el("td", null, chip, text(t.pct)),
      ));
    }
    const head = el("tr", null, ...["Function", "Figure", "A", "B", "Δ", "Δ%"].map((h, k) => el("th", { class: k < 2 ? "text" : null, text: h })));
    return el("div", { class: "ab-list", id }, el("h2", { text: heading }),
      rows.length ? el("table", { class: "data compact" }, el("thead", null, head), body) : el("p", { class: "note", text: "none" }));
  };
  box.append(
    list("ab-regressions", "Top regressions", DF.top.regressions),
    list("ab-improvements", "Top improvements", DF.top.improvements),
  );
}

if (DF) fillAbTop(abTop);
// A, B, Δ and Δ% as table columns; q(row) gives the quadruple, kind the formatter.
function quadColumns(prefix, label, kind, q) {
  const f = DIFF_FMT[kind];
  const orZero = (v) => (v === null ? 0 : v);
  return [
    { key: `${prefix}a`, label: `${label} A`, get: (r) => orZero(q(r)[0]), value: (r) => q(r)[0], render: (td, r) => (td.textContent = q(r)[0] === null ? "–" : f(q(r)[0])) },
    { key: `${prefix}b`, label: `${label} B`, get: (r) => orZero(q(r)[1]), value: (r) => q(r)[1], render: (td, r) => (td.textContent = q(r)[1] === null ? "–" : f(q(r)[1])) },
    { key: `${prefix}d`, label: "Δ", title: `${label}: B − A`, get: (r) => q(r)[2], render: (td, r) => (td.textContent = signed(q(r)[2], f)) },
    {
      key: `${prefix}p`, label: "Δ%", title: `${label}: (B − A) / A`, exact: false,
      get: (r) => { const x = q(r), k = changeKind(x); return k === "new" ? 1e300 : x[3] === null ? 0 : x[3]; },
      value: (r) => q(r)[3],
      render: (td, r) => {
        const x = q(r), k = changeKind(x);
        const chip = el("span", { class: `chg ${k}`, "data-kind": k });
        chip.style.background = changeColour(x);
        td.append(chip, text(fmtPct(x)));
        td.dataset.kind = k;
      },
    },
  ];
}
const diffNote = (v, what) => v.append(el("p", { class: "note", text: `${what} ${DF.label}: A, B, the change (Δ = B − A) and Δ% = Δ / A; "new" only in B, "gone" only in A. Both runs whole (a time range on the timeline applies to B's views only). ${diffBasis()}` }));
const diffThreadOk = (thread) => state.thread < 0 || S[thread] === threadName[state.thread];
const diffWaitOk = (name) => !(state.hideIdle && state.waits.has(S[name]));
const diffFilter = (...ids) => {
  const q = state.fnFilter.trim().toLowerCase();
  return !q || ids.some((i) => S[i].toLowerCase().includes(q));
};

const STATUS_LABEL = { added: "new (only in B)", removed: "gone (only in A)", changed: "changed", same: "same" };

function renderDiffFunctions() {
  const v = views.functions;
  v.replaceChildren();
  const figure = state.diffFigure;
  const fi = DF.metrics.indexOf(figure); // the figure's place in each row's quadruples
  const [, figureLabel, figureKind] = DIFF_FIGURES.find(([k]) => k === figure);
  const rows = [];
  DF.functions.forEach((r, i) => {
    if (diffThreadOk(r[0]) && diffWaitOk(r[1]) && diffFilter(r[1], r[2])) rows.push(i);
  });
  const figSelect = el("select", { id: "diff-figure", "aria-label": "Figure", onchange: (e) => { state.diffFigure = e.target.value; renderDiffFunctions(); } });
  for (const [k, label] of DIFF_FIGURES) figSelect.append(el("option", { value: k, text: label, selected: k === figure }));
  const row = (i) => DF.functions[i];
  const cols = [
    { key: "rank", label: "#", title: "Order of rokuprof diff: largest change of a function's own figures first", get: (i) => i + 1, fmt: String },
    { key: "function", label: "Function", text: true, cls: "fn", get: (i) => S[row(i)[1]], render: (td, i) => { td.append(clip(S[row(i)[1]], "name")); td.title = S[row(i)[1]]; } },
    { key: "module", label: "Thread", text: true, get: (i) => S[row(i)[0]], render: (td, i) => { td.append(clip(S[row(i)[0]], "thread")); td.title = S[row(i)[0]]; } },
    { key: "status", label: "Status", text: true, get: (i) => STATUS_LABEL[row(i)[3]] || row(i)[3] },
    ...quadColumns("", figureLabel, figureKind, (i) => row(i)[4][fi]),
    { key: "file", label: "File", text: true, cls: "loc", get: (i) => S[row(i)[2]], render: (td, i) => { td.append(clip(S[row(i)[2]], "path")); td.title = S[row(i)[2]]; } },
  ];
  v.append(el("div", { class: "toolbar" }, fnFilterBox, el("label", null, "Figure ", figSelect), el("span", { class: "matches", id: "fn-count", text: `${rows.length} function${rows.length === 1 ? "" : "s"}` })));
  diffNote(v, "Functions,");
  v.append(dataTable("diff-functions", cols, rows, state.sort.diffFunctions, renderDiffFunctions, 1000, (i) => ({ "data-row": i, "data-module": S[row(i)[0]], "data-function": S[row(i)[1]], "data-file": S[row(i)[2]], "data-kind": changeKind(row(i)[4][fi]) })));
}

function renderDiffLines() {
  const v = views.lines;
  v.replaceChildren();
  const rows = [];
  DF.lines.forEach((r, i) => {
    if (diffThreadOk(r[0]) && diffWaitOk(r[1]) && diffFilter(r[1], r[2])) rows.push(i);
  });
  const row = (i) => DF.lines[i];
  const cpu = DF.lineMetrics.indexOf("cpu"), wall = DF.lineMetrics.indexOf("wall");
  v.append(el("h2", { class: "section", text: "Source lines: the CPU and wall time of each function's own code per line, in A and B" }));
  diffNote(v, "Lines,");
  if (!DF.lines.length) v.append(el("p", { class: "note", text: "Neither capture has line data (bsprof_enable_lines=1 in the app's manifest)." }));
  v.append(
    dataTable("diff-lines", [
      { key: "rank", label: "#", title: "Largest change of CPU first (as rokuprof diff --json lists the lines)", get: (i) => i + 1, fmt: String },
      { key: "function", label: "Function", text: true, cls: "fn", get: (i) => S[row(i)[1]], render: (td, i) => { td.append(clip(S[row(i)[1]], "name")); td.title = S[row(i)[1]]; } },
      { key: "line", label: "Line", get: (i) => row(i)[3], fmt: String },
      ...quadColumns("cpu:", "CPU", "cpu", (i) => row(i)[5][cpu]),
      ...quadColumns("wall:", "Wall", "wall", (i) => row(i)[5][wall]),
      { key: "module", label: "Thread", text: true, get: (i) => S[row(i)[0]], render: (td, i) => { td.append(clip(S[row(i)[0]], "thread")); td.title = S[row(i)[0]]; } },
      { key: "file", label: "File", text: true, cls: "loc", get: (i) => S[row(i)[2]], render: (td, i) => { td.append(clip(S[row(i)[2]], "path")); td.title = S[row(i)[2]]; } },
    ], rows, state.sort.diffLines, renderDiffLines, 100, (i) => ({ "data-row": i, "data-module": S[row(i)[0]], "data-function": S[row(i)[1]], "data-file": S[row(i)[2]], "data-line": row(i)[3], "data-kind": changeKind(row(i)[5][cpu]) })),
  );
}

function renderDiffSites() {
  const v = views.memory;
  v.replaceChildren();
  const rows = [];
  DF.sites.forEach((r, i) => {
    const leaf = r[1][r[1].length - 2];
    if (diffThreadOk(r[0]) && diffWaitOk(leaf)) rows.push(i);
  });
  const row = (i) => DF.sites[i];
  const bytes = DF.siteMetrics.indexOf("live_bytes"), blocks = DF.siteMetrics.indexOf("live_count");
  const names = (i) => { const p = row(i)[1], out = []; for (let k = 0; k < p.length; k += 2) out.push(S[p[k]]); return out; };
  v.append(el("h2", { class: "section", text: "Leak sites: memory still allocated at the end, by the call path that allocated it, in A and B" }));
  diffNote(v, "Leak sites,");
  if (!DF.sites.length) v.append(el("p", { class: "note", text: `Nothing was still live at the end in either capture (or neither has memory data: ${NO_MEMORY}).` }));
  v.append(
    dataTable("diff-leaks", [
      { key: "rank", label: "#", title: "Largest change of live bytes first (as rokuprof diff --json lists the leak sites)", get: (i) => i + 1, fmt: String },
      { key: "fn", label: "Allocated by", text: true, cls: "fn", get: (i) => names(i).at(-1) },
      ...quadColumns("bytes:", "Live bytes", "bytes", (i) => row(i)[3][bytes]),
      ...quadColumns("blocks:", "Blocks", "blocks", (i) => row(i)[3][blocks]),
      { key: "module", label: "Thread", text: true, get: (i) => S[row(i)[0]] },
      {
        key: "path", label: "Call path (root › … › allocating function)", text: true, get: (i) => names(i).join(" › "),
        render: (td, i) => {
          const ns = names(i);
          ns.forEach((n, k) => {
            if (k) td.append(text(" › "));
            td.append(k === ns.length - 1 ? el("b", { text: n }) : text(n));
          });
        },
      },
    ], rows, state.sort.diffSites, renderDiffSites, 200, (i) => ({ "data-row": i, "data-module": S[row(i)[0]], "data-function": names(i).at(-1), "data-kind": changeKind(row(i)[3][bytes]) })),
  );
}

// The call tree of both runs: a row per call path either run has (a path only A has is a
// row too), its total and self figure in A and B for the page's metric.
function renderDiffTree() {
  const v = views.tree;
  v.replaceChildren();
  const m = state.metric;
  const f = DIFF_FMT[TREE_FMT[m]];
  const F = DF.tree.figures[m];
  const seg = el("span", { class: "seg", id: "tree-metric", role: "group", "aria-label": "Figure" });
  for (const x of METRICS) seg.append(el("button", { "data-metric": x.key, "aria-pressed": x.key === m ? "true" : "false", text: x.label, onclick: () => setMetric(x.key) }));
  v.append(el("div", { class: "toolbar" }, seg,
    el("button", { class: "btn", text: "Collapse all", onclick: () => { DT.expanded = new Set(); renderDiffTree(); } }),
    el("button", { class: "btn", text: "Expand all", onclick: () => { for (let i = 0; i < DT.n; i++) DT.expanded.add(i); renderDiffTree(); } })));
  diffNote(v, "Call tree,");
  const roots = DT.roots.filter((r) => diffThreadOk(DF.tree.thread[r]));
  const absD = (i) => Math.abs(F.d[i]);
  if (!DT.expanded) {
    // open each thread along its largest change, a few levels deep
    DT.expanded = new Set();
    for (const r of roots) {
      let n = r;
      for (let d = 0; d < 6 && n >= 0; d++) {
        DT.expanded.add(n);
        const ks = DT.kids[n].filter((k) => F.d[k]).sort((a, b) => absD(b) - absD(a) || a - b);
        n = ks.length ? ks[0] : -1;
      }
    }
  }
  const q = (i) => [F.a[i], F.b[i], F.d[i], F.p[i]];
  const orZero = (x) => (x === null ? 0 : x);
  const cols = [
    { key: "name", label: "Function", text: true, get: (i) => treeLabel(i) },
    ...quadColumns("", `Total ${METRIC[m].label.toLowerCase()}`, TREE_FMT[m], q),
    { key: "selfA", label: "Self A", get: (i) => orZero(F.selfA[i]), value: (i) => F.selfA[i], render: (td, i) => (td.textContent = F.selfA[i] === null ? "–" : f(F.selfA[i])) },
    { key: "selfB", label: "Self B", get: (i) => orZero(F.selfB[i]), value: (i) => F.selfB[i], render: (td, i) => (td.textContent = F.selfB[i] === null ? "–" : f(F.selfB[i])) },
    { key: "loc", label: "File", text: true, get: (i) => (DF.tree.file[i] >= 0 ? S[DF.tree.file[i]] : "") },
  ];
  const sortState = state.sort.diffTree;
  const col = cols.find((c) => c.key === sortState.key) || cols[3];
  const cmp = (a, b) => compareOn(col, a, b, sortState.key === "d") * sortState.dir || a - b;
  const thead = sortableHead(cols, col, sortState, renderDiffTree, (c) => c.title || (c.key === "d" ? "Sorted by the size of the change" : null));
  const tbody = el("tbody");
  let count = 0;
  const LIMIT = 3000, MAX_INDENT = 40;
  const stack = roots.slice().sort(cmp).reverse();
  while (stack.length && count < LIMIT) {
    const n = stack.pop();
    if (!DT.any[n]) continue;
    count++;
    const d = DT.depth[n];
    const ks = DT.kids[n].filter((k) => DT.any[k]);
    const open = DT.expanded.has(n);
    const x = q(n);
    const tr = el("tr", { "data-tnode": n, "data-depth": d, "data-kind": changeKind(x), "data-thread": S[DF.tree.thread[n]], "data-function": DF.tree.name[n] >= 0 ? S[DF.tree.name[n]] : "" });
    for (const c of cols) {
      const td = el("td", { class: c.key === "name" ? "text fn" : c.key === "loc" ? "text loc" : null, "data-key": c.key });
      if (c.key === "name") {
        td.style.paddingLeft = `${8 + Math.min(d, MAX_INDENT) * 16}px`;
        if (d > MAX_INDENT) td.append(el("span", { class: "depth", title: "Call depth", text: `${d} ` }));
        td.append(el("span", { class: "toggle", text: ks.length ? (open ? "▾" : "▸") : "" }), text(treeLabel(n)));
        td.title = treeLabel(n);
        if (ks.length) {
          td.style.cursor = "pointer";
          td.addEventListener("click", () => {
            if (DT.expanded.has(n)) DT.expanded.delete(n);
            else DT.expanded.add(n);
            renderDiffTree();
          });
        }
      } else if (c.text) {
        td.textContent = c.get(n);
        td.title = td.textContent;
      } else {
        if (c.render) c.render(td, n);
        const val = c.value ? c.value(n) : c.get(n);
        if (val !== null) td.setAttribute("data-value", String(val));
      }
      tr.append(td);
    }
    tbody.append(tr);
    if (open) {
      const sorted = ks.sort(cmp);
      for (let i = sorted.length - 1; i >= 0; i--) stack.push(sorted[i]);
    }
  }
  const wrap = el("div", { class: "tablewrap" }, el("table", { class: "data", id: "diff-calltree" }, el("thead", null, thead), tbody));
  if (count >= LIMIT) wrap.append(el("div", { class: "more", text: `Showing the first ${LIMIT} rows; collapse branches to see more.` }));
  v.append(wrap);
}

export { renderDiffFunctions, renderDiffLines, renderDiffSites, renderDiffTree };
