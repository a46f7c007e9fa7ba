// The interaction state (tab, thread, metric, zoom, search, time range, idle functions, sorting,
// selection): one exported object, changed only through actions.js, and the choices the reader
// kept (localStorage).
import { fnName } from "./model.js";

const SUGGESTED_WAITS = ["wait", "waitPort", "sleep"];
const state = {
  tab: "flame",
  thread: -1, // -1: all threads
  metric: "wall",
  icicle: false,
  zoom: -1, // node, -1: the root of the current thread selection
  search: "",
  range: null, // [first slot, end slot) or null
  hideIdle: true, // idle frames are left out until the reader shows them (a kept choice wins)
  waits: new Set(SUGGESTED_WAITS.filter((w) => fnName.includes(w))),
  sort: {
    tree: { key: "total:wall", dir: -1 },
    functions: { key: "selfWall", dir: -1 },
    allocs: { key: "allocBytes", dir: -1 },
    churn: { key: "reallocs", dir: -1 },
    leaks: { key: "liveBytes", dir: -1 },
    diffFunctions: { key: "rank", dir: 1 },
    diffLines: { key: "rank", dir: 1 },
    diffSites: { key: "rank", dir: 1 },
    diffTree: { key: "d", dir: -1 },
    growthPaths: { key: "net", dir: -1 },
    growthFns: { key: "net", dir: -1 },
  },
  fnFilter: "",
  diffFigure: "self_wall", // a diff page's Functions tab: the figure shown for A and B
  expanded: new Set(),
  selected: -1, // the function selected in any view, -1: none
};
try {
  const saved = JSON.parse(localStorage.getItem("rokuprof.waits") || "null");
  if (Array.isArray(saved)) state.waits = new Set(saved.filter((w) => typeof w === "string"));
} catch {
  /* storage unavailable (file:// in some browsers): keep the suggestions */
}
try {
  const kept = localStorage.getItem("rokuprof.hideIdle");
  if (kept === "true" || kept === "false") state.hideIdle = kept === "true";
} catch {
  /* storage unavailable: idle hidden */
}

export { SUGGESTED_WAITS, state };
