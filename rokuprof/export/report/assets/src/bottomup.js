// The Bottom-up tab: functions by self figure, their callers and callees.
import { facts } from "./data.js";
import { NO_MEMORY, grouped, pct } from "./format.js";
import { METRIC, METRICS } from "./units.js";
import { calleesOf, chainCallers, framesFigures, treeIndex } from "./bottomupindex.js";
import { N, T, fnFile, fnName, fnThread, kids, nF, nodeFn, parent, threadName } from "./model.js";
import { state } from "./state.js";
import { fnSelf, fnTotal, rootValue, self, total } from "./figures.js";
import { el, fnWhere, text } from "./dom.js";
import { shortWhereLink, whereLink } from "./links.js";
import { TABS, views } from "./page.js";
import { dirty, renderActive } from "./actions.js";
import { swatchFor, visibleFn } from "./tables.js";
import { searchBox, setMetric } from "./flame.js";

// DevTools' Bottom-Up, speedscope's Sandwich: functions by self figure, each expandable into its
// callers and theirs, and for the selected function its callers and callees side by side.
// A row is a chain [f, its caller, that one's caller, ...]; its frames are the call-tree nodes
// of f reached through that chain. Self: the frames' self figures. Total: every call path
// through one of those frames, once however often the chain recurs on it (the totals of the
// frames with none of the others above them: a pre-order sweep). A chain's frames depend on
// the tree alone: found when its row is first opened, then kept; figures are summed from the
// state's self and total (range, thread, hidden waits) at each draw.
const BU_TOP = 100, BU_ROWS = 2000, BU_INDENT = 40, BU_SIDE = 100;
const bu = { pre: null, end: null, fnStart: null, fnNodes: null, chains: new Map(), callees: new Map(), open: new Set(), filter: "", search: null, shown: BU_TOP, drawn: false, top: [], focus: -1, all: 0, count: 0, scroll: 0, timing: {} };
function buIndex() {
  if (bu.pre) return;
  Object.assign(bu, treeIndex({ N, T, kids, nodeFn, nF }));
}
function buRoot(f) {
  const key = String(f);
  let c = bu.chains.get(key);
  if (!c) {
    const frames = bu.fnNodes.subarray(bu.fnStart[f], bu.fnStart[f + 1]);
    c = { key, fn: f, depth: 0, frames, tips: frames, callers: null };
    bu.chains.set(key, c);
  }
  return c;
}
function buCallers(c) {
  if (c.callers) return c.callers;
  c.callers = chainCallers(c, { parent, nodeFn });
  for (const child of c.callers) bu.chains.set(child.key, child);
  return c.callers;
}
function buCallees(f) {
  let out = bu.callees.get(f);
  if (out) return out;
  out = calleesOf(f, { kids, nodeFn }, bu);
  bu.callees.set(f, out);
  return out;
}
function buFigures(frames, m) {
  return framesFigures(frames, self[m], total[m], bu);
}
// The selection every view shares is the page's search set to a function's name (the flame
// graph and the stack chart highlight it); state.selected tells which function of that name.
// On this tab only the panel and the marked rows change.
function selectFunction(f) {
  const t0 = performance.now();
  state.selected = f;
  state.search = f >= 0 ? fnName[f] : "";
  searchBox.value = state.search;
  for (const [key] of TABS) if (key !== "bottomup") dirty.add(key);
  if (state.tab === "bottomup" && bu.drawn && !dirty.has("bottomup")) buRefocus();
  else dirty.add("bottomup");
  renderActive();
  bu.timing.select = performance.now() - t0;
}
function isSelected(f) {
  return f >= 0 && f === state.selected && state.search === fnName[f];
}
// The function the panel shows: the selection, or one named as the search, or the top row that
// is not a wait (idle time answers nothing), else the top row.
function buFocus(top) {
  if (isSelected(state.selected) && visibleFn(state.selected)) return state.selected;
  const q = state.search.trim();
  const named = q ? top.find((f) => fnName[f] === q) : undefined;
  if (named !== undefined) return named;
  const busy = top.find((f) => !state.waits.has(fnName[f]));
  return busy !== undefined ? busy : top.length ? top[0] : -1;
}
function buRefocus() {
  bu.focus = buFocus(bu.top);
  bu.search = state.search;
  buRenderPanel();
  for (const tr of buTableHolder.querySelectorAll("tr.selected")) tr.classList.remove("selected");
  for (const tr of buTableHolder.querySelectorAll(`tr[data-fn="${bu.focus}"]`)) tr.classList.add("selected");
}
// A selection made elsewhere (the search, the stack chart) shows when the tab is opened.
new MutationObserver(() => {
  if (!views.bottomup.hidden && bu.drawn && bu.search !== state.search && !dirty.has("bottomup")) buRefocus();
}).observe(views.bottomup, { attributes: true, attributeFilter: ["hidden"] });
const buMetricSeg = el("span", { class: "seg", id: "bu-metric", role: "group", "aria-label": "Rank functions by" });
for (const m of METRICS) {
  const off = m.memory && !facts.memoryOps;
  buMetricSeg.append(el("button", { "data-metric": m.key, "aria-pressed": "false", class: off ? "nodata" : null, title: off ? NO_MEMORY : null, text: m.label, onclick: () => setMetric(m.key) }));
}
const buFilterBox = el("input", { type: "search", id: "bu-filter", placeholder: "Filter by name or file", "aria-label": "Filter functions" });
buFilterBox.addEventListener("input", () => {
  bu.filter = buFilterBox.value;
  dirty.add("bottomup");
  renderActive();
});
const buCount = el("span", { class: "matches", id: "bu-count" });
const buPanel = el("div", { class: "bu-panel", id: "bu-panel" });
const buTableHolder = el("div", { class: "bu-table" });
const buNote = el("p", { class: "note nomem", hidden: true, text: `${NO_MEMORY}: nothing to rank the functions by.` });
views.bottomup.append(
  el("div", { class: "toolbar" }, buMetricSeg, buFilterBox, buCount),
  // one line until opened, so that the functions are on the first screen
  el(
    "details",
    { class: "note about", id: "bu-about" },
    el("summary", { text: "Each function with its own (self) figure and its total, every call path counted once however deep it recurses." }),
    text("Open a row to see who called it, and who called them; click a function to select it, here and in every view. Callers' and callees' totals are the cost of the calls between the two: a call path that calls through several of them counts under each."),
  ),
  buNote,
  buPanel,
  buTableHolder,
);
function buVisible() {
  const m = state.metric;
  const q = bu.filter.trim().toLowerCase();
  const rows = [];
  for (let f = 0; f < nF; f++) {
    if (!visibleFn(f) || !(fnSelf[m][f] || fnTotal[m][f])) continue;
    if (q && !fnName[f].toLowerCase().includes(q) && !fnFile[f].toLowerCase().includes(q)) continue;
    rows.push(f);
  }
  return rows.sort((a, b) => fnSelf[m][b] - fnSelf[m][a] || fnTotal[m][b] - fnTotal[m][a] || a - b);
}
// The whole tab, for the state (metric, range, thread, hidden waits, filter). Opening a row
// or selecting a function changes only its rows or the panel (buToggle, buRefocus).
function renderBottomUp() {
  const t0 = performance.now();
  buIndex();
  const m = state.metric;
  for (const b of buMetricSeg.children) b.setAttribute("aria-pressed", b.dataset.metric === m ? "true" : "false");
  const noData = METRIC[m].memory && !facts.memoryOps;
  buNote.hidden = !noData;
  buPanel.replaceChildren();
  buTableHolder.replaceChildren();
  bu.drawn = false;
  if (noData) return;
  bu.all = rootValue(m);
  bu.top = buVisible();
  buCount.textContent = `${grouped(bu.top.length)} function${bu.top.length === 1 ? "" : "s"}`;
  bu.focus = buFocus(bu.top);
  bu.search = state.search;
  buRenderPanel();
  bu.count = 0;
  const tbody = el("tbody");
  tbody.append(buRows(bu.top.slice(0, bu.shown).map((f) => [buRoot(f), [fnSelf[m][f], fnTotal[m][f]]])));
  const label = METRIC[m].label.toLowerCase();
  const heads = [
    ["name", "Function", "text", null],
    ["self", `Self ${label}`, null, "Its own figure (without what it called); on a caller's row: its own figure when called from there"],
    ["selfPct", "Self %", null, "Share of the selection's total (all threads, or the chosen thread)"],
    ["total", `Total ${label}`, null, "Every call path through the function (or through this chain of callers), counted once however deep it recurses"],
    ["totalPct", "Total %", null, "Share of the selection's total"],
    ["thread", "Thread", "text", null],
    ["loc", "Location", "text", null],
  ];
  const thead = el("tr", null, ...heads.map(([key, text, cls, title]) => el("th", { class: cls, "data-key": key, title, text })));
  const wrap = el("div", { class: "tablewrap" }, el("table", { class: "data", id: "bottomup" }, el("thead", null, thead), tbody));
  if (bu.top.length > bu.shown) {
    const more = () => {
      bu.shown += BU_TOP;
      dirty.add("bottomup");
      renderActive();
    };
    wrap.append(el("div", { class: "more" }, text(`… and ${grouped(bu.top.length - bu.shown)} more functions with less self ${label} (filter by name to find one) `), el("button", { class: "btn", id: "bu-more", text: `Show ${grouped(Math.min(BU_TOP, bu.top.length - bu.shown))} more`, onclick: more })));
  }
  if (!bu.top.length) wrap.append(el("p", { class: "note", text: "No function in this selection." }));
  wrap.addEventListener("scroll", () => (bu.scroll = wrap.scrollTop), { passive: true });
  buTableHolder.append(wrap);
  if (bu.scroll) wrap.scrollTop = bu.scroll;
  bu.drawn = true;
  bu.timing.render = performance.now() - t0;
}
// Rows for these [chain, figures] and, below each open one, its callers (depth-first: an
// explicit stack, since chains may be as long as the deepest call path), at most BU_ROWS in
// the table; the last one says so when rows are left out.
function buRows(items) {
  const frag = document.createDocumentFragment();
  const stack = items.slice().reverse();
  while (stack.length) {
    if (bu.count >= BU_ROWS) {
      frag.append(el("tr", { class: "more-rows", "data-depth": 0 }, el("td", { class: "text note", colspan: 7, text: `Showing ${grouped(BU_ROWS)} rows; close some to see the others.` })));
      break;
    }
    const [c, figures] = stack.pop();
    frag.append(buRow(c, figures));
    bu.count++;
    if (!bu.open.has(c.key)) continue;
    const next = buCallerItems(c);
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
  }
  return frag;
}
// A chain's callers with their figures, largest total first.
function buCallerItems(c) {
  const m = state.metric;
  return buCallers(c)
    .map((k) => [k, buFigures(k.frames, m)])
    .filter(([, [s, t]]) => s || t)
    .sort((a, b) => b[1][1] - a[1][1] || b[1][0] - a[1][0] || a[0].fn - b[0].fn);
}
function buRow(c, [s, t]) {
  const f = c.fn, all = bu.all, fmt = METRIC[state.metric].fmt;
  const canOpen = buHasCaller(c), open = bu.open.has(c.key);
  const tr = el("tr", { "data-chain": c.key, "data-fn": f, "data-depth": c.depth, class: f === bu.focus ? "selected" : null });
  const name = el("td", { class: "text fn", "data-key": "name", title: `${fnName[f]} — ${fnWhere(f)}` });
  name.style.paddingLeft = `${8 + Math.min(c.depth, BU_INDENT) * 16}px`;
  if (c.depth > BU_INDENT) name.append(el("span", { class: "depth", title: "Callers above the function", text: `${c.depth} ` }));
  const tog = el("span", { class: "toggle", role: canOpen ? "button" : null, "aria-label": canOpen ? (open ? "hide callers" : "show callers") : null, text: canOpen ? (open ? "▾" : "▸") : "" });
  if (canOpen)
    tog.addEventListener("click", (e) => {
      e.stopPropagation();
      buToggle(c, tr, tog);
    });
  name.append(tog, swatchFor(f), el("span", { class: "name", text: fnName[f] }));
  if (c.depth) name.append(el("span", { class: "via", text: " called it" }));
  tr.append(name);
  const cell = (key, v, shown, bar) => {
    const td = el("td", { "data-key": key, "data-value": v, title: Number.isInteger(v) ? grouped(v) : String(v), text: shown });
    if (bar && v > 0 && all > 0) {
      td.classList.add("bar");
      td.style.backgroundImage = `linear-gradient(to left, var(--bar) ${Math.min(100, (100 * v) / all).toFixed(1)}%, transparent 0)`;
    }
    tr.append(td);
  };
  cell("self", s, fmt(s), true);
  cell("selfPct", all ? (100 * s) / all : 0, pct(s, all));
  cell("total", t, fmt(t));
  cell("totalPct", all ? (100 * t) / all : 0, pct(t, all));
  tr.append(el("td", { class: "text", "data-key": "thread", title: threadName[fnThread[f]], text: threadName[fnThread[f]] }), el("td", { class: "text loc", "data-key": "loc", title: fnWhere(f) }, shortWhereLink(f)));
  tr.addEventListener("click", () => selectFunction(f));
  return tr;
}
// Open or close a row: its callers' rows go in right below it, or the rows below it go.
function buToggle(c, tr, tog) {
  const t0 = performance.now();
  if (bu.open.has(c.key)) {
    bu.open.delete(c.key);
    for (let next = tr.nextElementSibling; next && Number(next.dataset.depth) > c.depth; next = tr.nextElementSibling) {
      if (!next.classList.contains("more-rows")) bu.count--;
      next.remove();
    }
  } else {
    bu.open.add(c.key);
    tr.after(buRows(buCallerItems(c)));
  }
  const open = bu.open.has(c.key);
  tog.textContent = open ? "▾" : "▸";
  tog.setAttribute("aria-label", open ? "hide callers" : "show callers");
  bu.timing.toggle = performance.now() - t0;
}
function buHasCaller(c) {
  for (let i = 0; i < c.tips.length; i++) {
    const up = parent[c.tips[i]];
    if (up >= 0 && nodeFn[up] >= 0) return true;
  }
  return false;
}
// The selected function: its figures, then its callers and its callees side by side (each
// list its BU_SIDE largest, the others counted).
function buRenderPanel() {
  buPanel.replaceChildren();
  const f = bu.focus;
  if (f < 0) return;
  const m = state.metric, fmt = METRIC[m].fmt, all = bu.all, label = METRIC[m].label.toLowerCase();
  const [s, t] = [fnSelf[m][f], fnTotal[m][f]];
  const head = el(
    "div",
    { class: "bu-head" },
    el("h3", { id: "bu-selected", "data-fn": f }, swatchFor(f), text(fnName[f])),
    el("span", { class: "where" }, whereLink(f), text(` · ${threadName[fnThread[f]]}`)),
    el("span", { class: "figs" }, text("self "), el("b", { "data-key": "self", "data-value": s, text: fmt(s) }), text(` (${pct(s, all)}) · total `), el("b", { "data-key": "total", "data-value": t, text: fmt(t) }), text(` (${pct(t, all)})`)),
  );
  const side = (id, title, rows, first) => {
    const tbody = el("tbody");
    if (first) tbody.append(first);
    for (const r of rows.slice(0, BU_SIDE)) {
      const tr = el("tr", { "data-fn": r.fn });
      tr.append(
        el("td", { class: "text fn", "data-key": "name", title: `${fnName[r.fn]} — ${fnWhere(r.fn)}` }, swatchFor(r.fn), el("span", { class: "name", text: fnName[r.fn] })),
        el("td", { "data-key": "total", "data-value": r.total, title: Number.isInteger(r.total) ? grouped(r.total) : String(r.total), text: fmt(r.total) }),
        el("td", { "data-key": "share", "data-value": t ? r.total / t : 0, text: pct(r.total, t) }),
      );
      tr.addEventListener("click", () => selectFunction(r.fn));
      tbody.append(tr);
    }
    if (rows.length > BU_SIDE) tbody.append(el("tr", { class: "own" }, el("td", { class: "text", colspan: 3, text: `… and ${grouped(rows.length - BU_SIDE)} more` })));
    if (!rows.length && !first) tbody.append(el("tr", { class: "own" }, el("td", { class: "text", colspan: 3, text: "none" })));
    const heads = el("tr", null, el("th", { class: "text", text: title }), el("th", { title: `The cost of these calls, each call path once (${label})`, text: "Total" }), el("th", { title: `Share of ${fnName[f]}'s total`, text: "Share" }));
    return el("div", { class: "tablewrap" }, el("table", { class: "data", id }, el("thead", null, heads), tbody));
  };
  const ranked = (list) =>
    list
      .map(({ fn, frames }) => ({ fn, total: buFigures(frames, m)[1] }))
      .filter((r) => r.total)
      .sort((a, b) => b.total - a.total || a.fn - b.fn);
  const callers = ranked(buCallers(buRoot(f)));
  const callees = ranked(buCallees(f));
  const own = el("tr", { class: "own", "data-fn": "self" }, el("td", { class: "text", "data-key": "name", text: "(self)" }), el("td", { "data-key": "total", "data-value": s, text: fmt(s) }), el("td", { "data-key": "share", "data-value": t ? s / t : 0, text: pct(s, t) }));
  buPanel.append(
    head,
    el(
      "div",
      { class: "bu-sides" },
      el("div", null, el("h4", { text: `Callers of ${fnName[f]}` }), side("bu-callers", "Called by", callers, null)),
      el("div", null, el("h4", { text: `Called by ${fnName[f]}` }), side("bu-callees", "Calls", callees, own)),
    ),
  );
}

export { isSelected, renderBottomUp, selectFunction };
