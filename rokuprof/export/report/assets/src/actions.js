// State changes: the tab, thread, idle functions, waits and time range, and what they redraw
// (the renderers main.js registers here).
import { HZ } from "./data.js";
import { fmtSeconds } from "./format.js";
import { SLOTS } from "./model.js";
import { SUGGESTED_WAITS, state } from "./state.js";
import { compute } from "./figures.js";
import { el, text } from "./dom.js";
import { TABS, clearRange, hideIdleBox, rangeText, renderVitalsRange, tabButtons, threadSelect, toolbar, views, waitsBox } from "./page.js";

const dirty = new Set();
// What a state change redraws: each tab's renderer and the timeline, registered by main.js (the
// views import this module, so it cannot import them).
const RENDER = {};
const redraw = { timeline: () => {} };
function invalidate(all) {
  for (const [key] of TABS) dirty.add(key);
  if (all) compute();
  redraw.timeline();
  renderActive();
}
function renderActive() {
  for (const [key] of TABS) {
    const on = key === state.tab;
    views[key].hidden = !on;
    tabButtons[key].setAttribute("aria-selected", on ? "true" : "false");
  }
  toolbar.hidden = state.tab === "facts";
  if (dirty.has(state.tab)) {
    dirty.delete(state.tab);
    RENDER[state.tab]();
  }
}
function setTab(key) {
  state.tab = key;
  if (history.replaceState) history.replaceState(null, "", `#${key}`);
  renderActive();
}
function setThread(t) {
  state.thread = t;
  threadSelect.value = String(t);
  state.zoom = -1;
  invalidate(false);
}
function setHideIdle(on) {
  state.hideIdle = on;
  hideIdleBox.checked = on;
  try {
    localStorage.setItem("rokuprof.hideIdle", String(on));
  } catch {
    /* not kept */
  }
  invalidate(true);
}
function toggleWait(name, on) {
  if (on) state.waits.add(name);
  else state.waits.delete(name);
  try {
    localStorage.setItem("rokuprof.waits", JSON.stringify([...state.waits]));
  } catch {
    /* not kept */
  }
  renderWaits();
  invalidate(true);
}
function setRange(range) {
  if (range) {
    let [a, b] = range;
    a = Math.max(0, Math.floor(a));
    b = Math.min(SLOTS, Math.ceil(b));
    state.range = b > a ? [a, b] : null;
  } else state.range = null;
  clearRange.hidden = !state.range;
  rangeText.textContent = state.range
    ? `${fmtSeconds(state.range[0] / HZ)} – ${fmtSeconds(state.range[1] / HZ)} (${fmtSeconds((state.range[1] - state.range[0]) / HZ)} of ${fmtSeconds(SLOTS / HZ)})`
    : `whole run, ${fmtSeconds(SLOTS / HZ)}`;
  renderVitalsRange();
  invalidate(true);
}

function renderWaits() {
  waitsBox.replaceChildren(el("span", { class: "note", text: "Waits:" }));
  const names = [...state.waits].sort();
  for (const w of names) {
    waitsBox.append(el("span", { class: "chip", "data-wait": w }, text(w), el("button", { title: `Not a wait: ${w}`, "aria-label": `remove ${w}`, text: "×", onclick: () => toggleWait(w, false) })));
  }
  for (const w of SUGGESTED_WAITS) {
    if (!state.waits.has(w)) waitsBox.append(el("button", { class: "chip suggested", title: "Mark as a wait", text: `+ ${w}`, onclick: () => toggleWait(w, true) }));
  }
  const add = el("input", { type: "text", placeholder: "mark a function…", size: 14, id: "wait-add", list: "fn-names" });
  add.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && add.value.trim()) toggleWait(add.value.trim(), true);
  });
  waitsBox.append(add);
}
// The toolbar's and the range's controls.
for (const [key] of TABS) tabButtons[key].addEventListener("click", () => setTab(key));
threadSelect.addEventListener("change", (e) => setThread(Number(e.target.value)));
hideIdleBox.addEventListener("change", (e) => setHideIdle(e.target.checked));
clearRange.addEventListener("click", () => setRange(null));

export { RENDER, dirty, redraw, renderActive, renderWaits, setHideIdle, setRange, setTab, setThread };
